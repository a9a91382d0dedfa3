#include "status_watch.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "exit_codes.h"
#include "wakeup.h"
#include "watch_view.h"
#include "zklock/errors.h"
#include "zklock/mutex.h"

namespace zklock::cli {
namespace {

using std::chrono::steady_clock;

constexpr const char* kClearScreen = "\x1b[H\x1b[2J";
constexpr const char* kHideCursor = "\x1b[?25l";
constexpr const char* kShowCursor = "\x1b[?25h";

// Where the refreshes go. On a terminal each one replaces the last, and the cursor is hidden
// meanwhile (it would blink over the rows); anywhere else - a pipe, a file - escape sequences
// would be noise, so the refreshes follow each other, separated by a blank line.
class WatchScreen {
 public:
  WatchScreen() : terminal_(::isatty(STDOUT_FILENO) == 1) {
    if (terminal_) std::cout << kHideCursor << std::flush;
  }
  // Runs on every way out of the watch (a signal, an exception): the terminal is left as found.
  ~WatchScreen() {
    if (terminal_) std::cout << kShowCursor << std::flush;
  }
  WatchScreen(const WatchScreen&) = delete;
  WatchScreen& operator=(const WatchScreen&) = delete;

  void show(const std::string& view) {
    if (terminal_) {
      std::cout << kClearScreen << view;
    } else {
      std::cout << (first_ ? "" : "\n") << view;
    }
    std::cout << std::flush;
    first_ = false;
  }

 private:
  const bool terminal_;
  bool first_ = true;
};

std::string child_path(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

// The queue and each contender's creation time. Throws as Session's basic operations.
QueueSnapshot read_queue(Session& session, const Mutex& mutex) {
  QueueSnapshot snapshot;
  snapshot.contenders = mutex.contenders();
  if (snapshot.contenders.empty()) {
    // contenders() lists a missing path as an empty queue; the watch tells the two apart.
    if (!session.get(mutex.path())) snapshot.outcome = QueueSnapshot::Outcome::kPathMissing;
    return snapshot;
  }
  for (const Contender& contender : snapshot.contenders) {
    const auto node = session.get(child_path(mutex.path(), contender.name));
    snapshot.created_ms.push_back(node ? std::optional(node->stat.ctime_ms) : std::nullopt);
  }
  return snapshot;
}

// Reads the queue on a thread of its own, one read at a time, so that the main thread keeps
// reading signals meanwhile: while the connection is down a read can take a whole session
// timeout, and Ctrl-C must end the watch at once all the same.
class QueueReader {
 public:
  QueueReader(Session& session, const Mutex& mutex) : session_(session), mutex_(mutex) {}
  // A read still in flight is ended by closing the session (it fails with ClosedError at once).
  ~QueueReader() {
    if (thread_.joinable()) {
      session_.close();
      thread_.join();
    }
  }
  QueueReader(const QueueReader&) = delete;
  QueueReader& operator=(const QueueReader&) = delete;

  bool busy() const noexcept { return thread_.joinable(); }
  // Notified when a read ends.
  Wakeup& done() noexcept { return done_; }

  void start() {
    std::promise<QueueSnapshot> promise;
    result_ = promise.get_future();
    thread_ = std::thread([this, promise = std::move(promise)]() mutable {
      try {
        promise.set_value(read_queue(session_, mutex_));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
      // After the promise: a main thread woken by this finds the result ready.
      done_.notify();
    });
  }

  /// Returns: the snapshot once the read has ended, else nullopt. Rethrows what the read threw.
  std::optional<QueueSnapshot> take_if_done() {
    if (!busy() || result_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      return std::nullopt;
    }
    thread_.join();
    return result_.get();
  }

 private:
  Session& session_;
  const Mutex& mutex_;
  Wakeup done_;
  std::future<QueueSnapshot> result_;
  std::thread thread_;
};

// The read that has ended, as the watch shows it (nullopt while none has). Errors that may pass -
// a lost connection, a lost session (the Session opens a new one by itself) - are shown and the
// watch goes on; a bad path or a missing permission will not change by waiting, so they end it
// with their exit codes.
std::optional<QueueSnapshot> finished_read(QueueReader& reader) {
  try {
    return reader.take_if_done();
  } catch (const NotAuthorizedError&) {
    throw;
  } catch (const InvalidArgumentError&) {
    throw;
  } catch (const Error& e) {
    QueueSnapshot failed;
    failed.outcome = QueueSnapshot::Outcome::kFailed;
    failed.failure = e.what();
    return failed;
  }
}

// Milliseconds until `deadline` for poll(2), rounded up so that a wait never ends early (an
// early end would find nothing to do and wait again, spinning).
int ms_until(steady_clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - steady_clock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, 1 << 30));
}

}  // namespace

int run_status_watch(const StatusOptions& status, const CommonOptions& common,
                     const Console& console, SignalReader& signals) {
  const auto session = open_session(common, console);
  // Only for contenders(): this Mutex is never locked, so it never creates a node.
  const Mutex mutex(*session, status.path);
  WatchScreen screen;
  QueueReader reader(*session, mutex);  // after the screen: stopped before the cursor comes back

  steady_clock::time_point next_read = steady_clock::now();
  for (;;) {
    if (!reader.busy() && steady_clock::now() >= next_read) {
      // Counted from the start of a read: a slow read delays the next one, never doubles up.
      next_read = steady_clock::now() + status.interval;
      reader.start();
    }
    const int timeout_ms = reader.busy() ? -1 : ms_until(next_read);
    for (const signalfd_siginfo& info : signals.wait(reader.done(), timeout_ms)) {
      if (SignalReader::is_termination(static_cast<int>(info.ssi_signo))) {
        console.note("stopped by signal " + std::to_string(info.ssi_signo));
        return exit_code::kOk;
      }
    }
    if (const std::optional<QueueSnapshot> snapshot = finished_read(reader)) {
      const WatchHeader header{status.path, std::chrono::system_clock::now(), session->state(),
                               status.interval};
      screen.show(render_watch_view(header, *snapshot));
    }
  }
}

}  // namespace zklock::cli
