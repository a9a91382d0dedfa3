// tools/bench/async_workload.cpp: the async mode. `n` waiters queue on one lock behind the main
// thread's hold, on ONE session, twice: as asynchronous requests (Mutex::async_lock, no thread
// per waiter) and as blocking lock() calls on a thread each. Each form's queue then drains (each
// waiter acquires once and releases). Figures per form: acquisitions per second while draining,
// the process's threads and resident memory per waiting acquisition while everyone waits.
#include <malloc.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/proc_status.h"
#include "workload_common.h"
#include "workloads.h"
#include "zklock/zklock.h"

namespace zklock::bench {
namespace {

using zklock::testing::proc_status;  // "Threads:", "VmRSS:" (kB)

// Bytes the process has allocated and not freed (malloc's count: unlike the resident set, it
// does not depend on whether freed memory was reused).
std::int64_t heap_in_use() { return static_cast<std::int64_t>(mallinfo2().uordblks); }

struct FormFigures {
  std::optional<double> requests_per_acq;     // server-side, while draining
  std::optional<double> wakeups_per_release;  // watch notifications per release
  double drain_seconds = 0;
  double acquisitions_per_s = 0;
  std::int64_t threads_waiting = 0;
  double rss_kb_per_waiter = 0;  // resident set growth (thread stacks included)
  double heap_bytes_per_waiter = 0;
  std::int64_t overlaps = 0;
  std::vector<std::int64_t> handoff_ns;  // the previous release -> this acquisition
};

// Waits until `n` contenders besides the holder queue on `path` (polled on its own session, so
// the poll does not wait behind the queue's own traffic).
void wait_queued(zklock::Session& observer, const std::string& path, int n) {
  poll_until(
      [&] {
        const auto kids = observer.children(path);
        return kids && static_cast<int>(kids->size()) >= n + 1;
      },
      std::chrono::seconds(120 + n / 10), "the queue did not build in time");
}

FormFigures run_async(zklock::Session& session, zklock::Session& observer, const std::string& path,
                      int n, ServerWindow& window) {
  FormFigures f;
  zklock::Mutex holder(session, path);
  zklock::Mutex mutex(session, path);
  holder.lock();
  Drain drain(n);
  FirstError failure;
  const std::int64_t rss_before = proc_status("VmRSS:");
  const std::int64_t heap_before = heap_in_use();
  queue_releasing_waiters(mutex, n, drain, failure);
  wait_queued(observer, path, n);
  f.threads_waiting = proc_status("Threads:");
  f.rss_kb_per_waiter = static_cast<double>(proc_status("VmRSS:") - rss_before) / n;
  f.heap_bytes_per_waiter = static_cast<double>(heap_in_use() - heap_before) / n;
  window.begin();
  const std::int64_t start = now_ns();
  drain.start(start);
  holder.unlock();
  drain.wait_all(std::chrono::seconds(300));
  f.drain_seconds = seconds(start, now_ns());
  (void)session.get(path);  // answered after every delete the session sent
  window.end();
  f.requests_per_acq = window.requests_per(n, 1);
  f.wakeups_per_release = window.notifications_per(n);
  if (failure.any()) throw std::runtime_error(failure.get());
  f.acquisitions_per_s = n / f.drain_seconds;
  f.overlaps = drain.overlaps();
  f.handoff_ns = drain.handoffs();
  return f;
}

FormFigures run_threads(zklock::Session& session, zklock::Session& observer,
                        const std::string& path, int n) {
  FormFigures f;
  zklock::Mutex holder(session, path);
  holder.lock();
  Drain drain(n);
  const std::int64_t rss_before = proc_status("VmRSS:");
  const std::int64_t heap_before = heap_in_use();
  std::vector<std::unique_ptr<zklock::Mutex>> mutexes;  // a contender each, as async requests are
  for (int i = 0; i < n; ++i) mutexes.push_back(std::make_unique<zklock::Mutex>(session, path));
  std::vector<std::thread> threads;
  FirstError error;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      try {
        zklock::Mutex& m = *mutexes[static_cast<std::size_t>(i)];
        m.lock();
        drain.acquired();
        drain.releasing();
        m.unlock();
      } catch (const std::exception& e) {
        error.set(e.what());
        drain.failed();
      }
    });
  }
  wait_queued(observer, path, n);
  f.threads_waiting = proc_status("Threads:");
  f.rss_kb_per_waiter = static_cast<double>(proc_status("VmRSS:") - rss_before) / n;
  f.heap_bytes_per_waiter = static_cast<double>(heap_in_use() - heap_before) / n;
  const std::int64_t start = now_ns();
  drain.start(start);
  holder.unlock();
  drain.wait_all(std::chrono::seconds(300));
  f.drain_seconds = seconds(start, now_ns());
  for (auto& t : threads) t.join();
  if (error.any()) throw std::runtime_error("lock: " + error.get());
  f.acquisitions_per_s = n / f.drain_seconds;
  f.overlaps = drain.overlaps();
  f.handoff_ns = drain.handoffs();
  return f;
}

}  // namespace

void run_async(const BenchOptions& o, JsonLine& out) {
  const int n = o.clients > 0 ? o.clients : 500;
  RunPath run_path(o);
  auto observer = open_session(o);
  BenchOptions long_session = o;
  // One session carries every waiter's traffic; its heartbeats queue behind the listings.
  long_session.session_timeout_ms = std::max(o.session_timeout_ms, 30000);
  auto session = open_session(long_session);
  const std::int64_t threads_idle = proc_status("Threads:");
  ServerWindow window(o.connect), warm_up_window(o.connect);
  // A small untimed round of each form first: the server's JIT and both code paths warm up, so
  // neither form pays for it in the figures.
  const int warm = std::max(1, n / 4);
  (void)run_async(*session, *observer, run_path.path() + "/warm-async", warm, warm_up_window);
  (void)run_threads(*session, *observer, run_path.path() + "/warm-threads", warm);
  const FormFigures async = run_async(*session, *observer, run_path.path() + "/async", n, window);
  const FormFigures threads = run_threads(*session, *observer, run_path.path() + "/threads", n);
  put_common(out, o, n, 1, async.drain_seconds, async.acquisitions_per_s,
             summarize(async.handoff_ns), async.overlaps + threads.overlaps);
  put_server(out, window, async.requests_per_acq, async.wakeups_per_release,
             async.wakeups_per_release);
  out.integer("threads_idle", threads_idle)
      .integer("async_threads_waiting", async.threads_waiting)
      .number("async_rss_kb_per_waiter", async.rss_kb_per_waiter, 2)
      .number("async_heap_bytes_per_waiter", async.heap_bytes_per_waiter, 0)
      .number("async_acq_per_s", async.acquisitions_per_s)
      .integer("blocking_threads_waiting", threads.threads_waiting)
      .number("blocking_rss_kb_per_waiter", threads.rss_kb_per_waiter, 2)
      .number("blocking_heap_bytes_per_waiter", threads.heap_bytes_per_waiter, 0)
      .number("blocking_acq_per_s", threads.acquisitions_per_s)
      .number("blocking_p50_handoff_us", summarize(threads.handoff_ns).p50_us);
  if (o.cleanup) {
    for (const char* form : {"/async", "/threads", "/warm-async", "/warm-threads"}) {
      remove_quietly(*observer, run_path.path() + form);
    }
  }
}

}  // namespace zklock::bench
