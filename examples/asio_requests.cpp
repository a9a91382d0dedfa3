// asio_requests: an Asio event loop serving many simulated requests on ONE thread, each taking
// one of several zklock locks asynchronously, with a deadline. No thread waits for a lock: the
// handlers are posted onto the io_context (AsyncLockOptions::executor), and a request that holds
// its lock keeps a zklock::Hold while its "work" (a timer) runs, then releases it.
//
// Asio is used by this example only (Debian's libasio-dev, header-only); zklock itself depends on
// nothing but the ZooKeeper C client.
#include <zklock/zklock.h>

#include <array>
#include <asio.hpp>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "example_args.h"

namespace args = zklock::examples;  // the examples' argument helpers

namespace {

// The process's threads: one entry each in /proc/self/task (Linux).
int thread_count() {
  namespace fs = std::filesystem;
  const fs::directory_iterator tasks("/proc/self/task");
  return static_cast<int>(std::distance(fs::begin(tasks), fs::end(tasks)));
}

struct Stats {
  int served = 0;
  int timed_out = 0;
  int failed = 0;
  int violations = 0;           // a lock held by two requests at once
  std::array<int, 3> inside{};  // requests holding each lock right now
  int most_waiting = 0;         // requests waiting at once, at the peak
  int threads_at_peak = 0;
  int waiting = 0;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const int requests = std::stoi(args::arg(argc, argv, "--requests", "60"));
    const std::string root = args::arg(argc, argv, "--path", "/demo/asio");
    zklock::SessionOptions options;
    options.connect = args::connect(argc, argv);
    zklock::Session session(options);
    std::array<std::unique_ptr<zklock::Mutex>, 3> locks;
    for (std::size_t k = 0; k < locks.size(); ++k) {
      locks[k] = std::make_unique<zklock::Mutex>(session, root + "/lock-" + std::to_string(k));
    }

    asio::io_context io;
    // zklock's handlers run on the io_context's thread, like every other handler of the loop.
    const zklock::Executor on_loop = [&io](std::function<void()> work) {
      asio::post(io, std::move(work));
    };
    const int threads_before = thread_count();
    Stats stats;
    // zklock's completions come from outside the loop: keep it running until all have come.
    auto keep_running = asio::make_work_guard(io);
    auto finish_one = [&stats, &keep_running, requests] {
      if (stats.served + stats.timed_out + stats.failed == requests) keep_running.reset();
    };

    // Every request arrives at once; each takes lock (i % 3) within 20 s, "works" 5 ms, releases.
    for (int i = 0; i < requests; ++i) {
      const std::size_t k = static_cast<std::size_t>(i) % locks.size();
      zklock::AsyncLockOptions lock_options =
          zklock::AsyncLockOptions::within(std::chrono::seconds(20));
      lock_options.executor = on_loop;
      ++stats.waiting;
      locks[k]->async_lock(
          [&io, &stats, &finish_one, k](std::error_code error, zklock::Hold hold) {
            --stats.waiting;
            if (error) {
              ++(error == zklock::Errc::timed_out ? stats.timed_out : stats.failed);
              std::cerr << "request on lock-" << k << ": " << error.message() << std::endl;
              finish_one();
              return;
            }
            if (++stats.inside[k] > 1) ++stats.violations;
            auto work = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(5));
            auto held = std::make_shared<zklock::Hold>(std::move(hold));
            work->async_wait([work, held, &stats, &finish_one, k](const std::error_code&) {
              --stats.inside[k];
              ++stats.served;
              held->unlock();  // the next request on this lock gets its turn
              finish_one();
            });
          },
          lock_options);
    }
    stats.most_waiting = stats.waiting;
    stats.threads_at_peak = thread_count();
    io.run();  // one thread serves every request

    std::cout << requests << " requests on " << locks.size()
              << " locks, one event-loop thread: " << stats.served << " served, " << stats.timed_out
              << " timed out, " << stats.failed << " failed\n"
              << "threads while " << stats.most_waiting
              << " requests waited: " << stats.threads_at_peak
              << " (before any request: " << threads_before << ")\n"
              << "two requests holding one lock at once: " << stats.violations << std::endl;
    const bool ok = stats.violations == 0 && stats.served == requests &&
                    stats.threads_at_peak == threads_before;
    return ok ? 0 : 1;
  } catch (const zklock::Error& e) {
    std::cerr << e.what() << std::endl;
    return 1;
  }
}
