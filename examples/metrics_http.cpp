// metrics_http: a service that shows Prometheus what its locks do. It serves GET /metrics - the
// figures of every Session of the process, zklock::to_prometheus(zklock::process_metrics()) - with
// cpp-httplib, while a worker takes and releases a lock over and over so that the figures move.
// With --timeout-every N, every Nth attempt is a try_lock_for with a tiny deadline made while a
// second session of the process holds the lock: timed-out acquisitions show up too.
//
//   zklock-example-metrics-http --connect 127.0.0.1:2181 --listen 127.0.0.1:9464 --timeout-every 5
//   curl -s http://127.0.0.1:9464/metrics | grep '^zklock_lock_acquisitions_total'
//
// The lock path is named in SessionOptions::metrics_paths, so its series carry path="<path>";
// the second session names none, and its acquisitions count under path="" (all other paths).
// --listen HOST:0 takes a free port; the line "listening on http://HOST:PORT/metrics" says which.
// SIGINT or SIGTERM stop it cleanly (exit 0): the worker leaves the lock, the server stops.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <zklock/prometheus.h>
#include <zklock/zklock.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "example_args.h"

namespace args = zklock::examples;  // the examples' argument helpers

namespace {

using std::chrono::milliseconds;

struct WorkerSettings {
  milliseconds hold{100};          // how long each acquisition holds the lock
  milliseconds pause{100};         // between attempts
  long timeout_every = 0;          // every Nth attempt times out on purpose; 0: none does
  milliseconds tiny_deadline{20};  // the deadline of those attempts
};

// Takes and releases the lock until stop(). Every attempt is one acquisition in the figures.
class LockWorker {
 public:
  // `rival` (a Mutex on the same path in another session) holds the lock during the attempts
  // meant to time out; it may be null when settings.timeout_every is 0.
  LockWorker(zklock::Mutex& mutex, zklock::Mutex* rival, WorkerSettings settings)
      : mutex_(mutex), rival_(rival), settings_(settings) {}

  void run() {
    for (long attempt = 1; !stopping(); ++attempt) {
      try {
        if (settings_.timeout_every > 0 && attempt % settings_.timeout_every == 0) {
          attempt_that_times_out(attempt);
        } else {
          attempt_that_holds(attempt);
        }
      } catch (const zklock::CancelledError&) {
        break;  // stop() cancelled a wait
      } catch (const zklock::ClosedError&) {
        break;
      } catch (const zklock::Error& e) {
        // A service keeps serving its figures through a bad moment (the error is counted).
        std::cerr << "attempt " << attempt << ": " << e.what() << std::endl;
      }
      if (!pause(settings_.pause)) break;
    }
    std::lock_guard<std::mutex> lock(mutex_of_state_);
    done_ = true;
    changed_.notify_all();
  }

  // Stops run() and returns once it has: pauses end at once, and a lock() waiting (a server
  // gone, say) is cancelled - again and again, for one that began just after a cancel().
  void stop() {
    std::unique_lock<std::mutex> lock(mutex_of_state_);
    stopping_ = true;
    changed_.notify_all();
    while (!done_) {
      mutex_.cancel();
      if (rival_ != nullptr) rival_->cancel();
      changed_.wait_for(lock, milliseconds(100));
    }
  }

 private:
  void attempt_that_holds(long attempt) {
    std::lock_guard<zklock::Mutex> hold(mutex_);
    std::cout << "attempt " << attempt << ": acquired, fencing token " << mutex_.fencing_token()
              << std::endl;
    pause(settings_.hold);  // the "work"
  }

  void attempt_that_times_out(long attempt) {
    std::lock_guard<zklock::Mutex> rival_holds(*rival_);
    if (mutex_.try_lock_for(settings_.tiny_deadline)) {
      mutex_.unlock();  // the rival holds it: this cannot happen, but never keep it by mistake
      std::cout << "attempt " << attempt << ": acquired while the second session held it?!"
                << std::endl;
      return;
    }
    std::cout << "attempt " << attempt << ": timed out after " << settings_.tiny_deadline.count()
              << " ms (the second session holds the lock)" << std::endl;
  }

  // Waits `how_long` unless stopped meanwhile. Returns false when stopping.
  bool pause(milliseconds how_long) {
    std::unique_lock<std::mutex> lock(mutex_of_state_);
    return !changed_.wait_for(lock, how_long, [&] { return stopping_; });
  }

  bool stopping() {
    std::lock_guard<std::mutex> lock(mutex_of_state_);
    return stopping_;
  }

  zklock::Mutex& mutex_;
  zklock::Mutex* rival_;
  const WorkerSettings settings_;
  std::mutex mutex_of_state_;
  std::condition_variable changed_;
  bool stopping_ = false;
  bool done_ = false;
};

struct ListenAddress {
  std::string host;
  int port = 0;
};

// "HOST:PORT" ("[::1]:9464" for IPv6); nullopt when it is not one.
std::optional<ListenAddress> parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  ListenAddress address;
  address.host = text.substr(0, colon);
  if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  try {
    std::size_t used = 0;
    address.port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || address.port < 0 || address.port > 65535) {
      return std::nullopt;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return address;
}

// Serves GET /metrics on a thread of its own from construction to destruction.
class MetricsServer {
 public:
  // Returns false (and serves nothing) when the address cannot be bound.
  bool start(const ListenAddress& address) {
    server_.new_task_queue = [] { return new httplib::ThreadPool(2); };  // scrapes are rare
    server_.set_keep_alive_max_count(1);  // no idle connection can hold up the stop
    server_.Get("/metrics", [](const httplib::Request&, httplib::Response& response) {
      response.set_content(zklock::to_prometheus(zklock::process_metrics()),
                           std::string(zklock::kPrometheusContentType));
    });
    port_ = address.port;
    if (port_ == 0) {
      port_ = server_.bind_to_any_port(address.host);
      if (port_ < 0) return false;
    } else if (!server_.bind_to_port(address.host, port_)) {
      return false;
    }
    thread_ = std::thread([this] {
      server_.listen_after_bind();
      returned_ = true;
    });
    // stop() does nothing to a server whose thread has not begun to accept: wait for that (the
    // thread's first step), or for its end, should accepting fail at once.
    while (!server_.is_running() && !returned_) std::this_thread::sleep_for(milliseconds(1));
    return !returned_;
  }

  int port() const { return port_; }

  ~MetricsServer() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  std::atomic<bool> returned_{false};  // listen_after_bind() has returned
  int port_ = 0;
};

// SIGINT and SIGTERM, blocked in every thread (threads inherit the mask, so this comes before the
// first Session) and taken by sigwait in main: the stop then runs as ordinary code.
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string listen = args::arg(argc, argv, "--listen", "127.0.0.1:9464");
  const std::string path = args::arg(argc, argv, "--path", "/zklock-demo/metrics");
  WorkerSettings settings;
  settings.hold = milliseconds(std::stol(args::arg(argc, argv, "--hold-ms", "100")));
  settings.pause = milliseconds(std::stol(args::arg(argc, argv, "--pause-ms", "100")));
  settings.timeout_every = std::stol(args::arg(argc, argv, "--timeout-every", "0"));
  settings.tiny_deadline = milliseconds(std::stol(args::arg(argc, argv, "--timeout-ms", "20")));
  const std::optional<ListenAddress> address = parse_listen(listen);
  if (!address) {
    std::cerr << "--listen: expected HOST:PORT, not '" << listen << "'" << std::endl;
    return 2;
  }

  const sigset_t signals = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  try {
    zklock::SessionOptions options;
    options.connect = args::connect(argc, argv);
    options.session_timeout = std::chrono::seconds(10);
    options.metrics_paths = {path};  // this path's figures apart from all others
    zklock::Session session(options);
    zklock::Mutex mutex(session, path);
    // The rival: another session, as another process would be; only needed for the timeouts.
    std::optional<zklock::Session> rival_session;
    std::optional<zklock::Mutex> rival;
    if (settings.timeout_every > 0) {
      zklock::SessionOptions rival_options = options;
      rival_options.metrics_paths.clear();
      rival.emplace(rival_session.emplace(rival_options), path);
    }

    MetricsServer server;
    if (!server.start(*address)) {
      std::cerr << "cannot listen on " << listen << std::endl;
      return 1;
    }
    std::cout << "listening on http://" << listen.substr(0, listen.rfind(':')) << ':'
              << server.port() << "/metrics" << std::endl;

    LockWorker worker(mutex, rival ? &*rival : nullptr, settings);
    std::thread worker_thread([&worker] { worker.run(); });
    int received = 0;
    sigwait(&signals, &received);
    std::cout << (received == SIGINT ? "SIGINT" : "SIGTERM") << ": stopping" << std::endl;
    worker.stop();
    worker_thread.join();
    return 0;  // the server stops, then the Mutexes release and the Sessions close
  } catch (const zklock::Error& e) {
    std::cerr << e.what() << std::endl;
    return 1;
  }
}
