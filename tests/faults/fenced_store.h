// tests/faults/fenced_store.h: the fenced resource of the fault-injection suite, and the clock
// every log of the suite uses.
//
// FencedStore is a tiny key-less "resource" that accepts a write only if it carries a fencing
// token at least as new as the newest token it has accepted so far, in one atomic step, and
// records every write - accepted or rejected - with the token, the writer's id, the writer's
// write number and the time it was decided.
//
// Design: a server thread inside the test process, listening on a Unix socket; holders (child
// processes, tests/faults/fault_holder.cpp) connect and send one request per line. Chosen over a
// SQLite file shared by the processes because the suite freezes (SIGSTOP) and SIGKILLs the very
// processes that write: a writer frozen inside a SQLite write transaction would hold the database
// lock and stall every other writer (the fault would then test SQLite's busy timeout, not the
// lock), and a writer killed mid-transaction leaves recovery work to whoever comes next. Here a
// frozen or killed writer only leaves an idle socket behind; the decision "token >= newest" and
// the update happen under one std::mutex, and the decision time is taken there, on the same
// clock (CLOCK_MONOTONIC) as every holder's log, so the checker can order events across processes.
//
// Protocol (ASCII, one line each way):
//   request  "W <writer-id> <token> <write-no>\n"   writer-id has no spaces; token, write-no >= 0
//   reply    "A <newest>\n"  accepted (newest = the newest token after this write)
//            "R <newest>\n"  rejected: <newest> is newer than the token sent
//            "E <message>\n" malformed request (nothing recorded)
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/unique_fd.h"

namespace zklock::testing::faults {

// Nanoseconds of CLOCK_MONOTONIC: one clock for every process on this machine. (libstdc++'s
// std::chrono::steady_clock is CLOCK_MONOTONIC too, so steady_clock time points convert 1:1.)
std::int64_t monotonic_ns();
std::int64_t to_ns(std::chrono::steady_clock::time_point t);

// One write as the store decided it.
struct StoreRecord {
  std::int64_t at_ns = 0;     // when it was decided (CLOCK_MONOTONIC)
  std::string writer;         // holder id
  std::int64_t token = 0;     // fencing token the writer sent
  std::int64_t write_no = 0;  // the writer's own number for this write (unique per writer)
  bool accepted = false;
  std::int64_t newest = 0;  // the newest accepted token after the decision
};

// "t=<ns> writer=<id> token=<t> n=<n> result=accepted|rejected newest=<t>"
std::string format_record(const StoreRecord& r);

class FencedStore {
 public:
  // Listens on `socket_path` (an existing file there is removed first). Every record is appended
  // to `log_path` (when not empty) as one flushed line. Throws std::system_error on failure.
  static std::unique_ptr<FencedStore> start(const std::string& socket_path,
                                            const std::string& log_path = {});
  // Stops the server thread, closes every connection and removes the socket file.
  ~FencedStore();
  FencedStore(const FencedStore&) = delete;
  FencedStore& operator=(const FencedStore&) = delete;

  const std::string& socket_path() const { return socket_path_; }

  // The decision itself (also used for requests arriving on the socket). Thread-safe.
  StoreRecord write(const std::string& writer, std::int64_t token, std::int64_t write_no);

  std::vector<StoreRecord> records() const;
  std::size_t size() const;
  std::int64_t newest() const;
  std::size_t accepted() const;
  std::size_t rejected() const;
  // Polls `pred` over the records until it holds or `timeout` passes.
  bool wait_for(const std::function<bool(const std::vector<StoreRecord>&)>& pred,
                std::chrono::milliseconds timeout) const;

 private:
  struct Connection {
    UniqueFd socket;
    std::string in;  // received, not yet a whole line
  };

  FencedStore(std::string socket_path, std::string log_path);
  void serve();
  // Reads what `c` sent and answers each whole request. False once the writer has gone.
  bool serve_requests(Connection& c);
  // The reply line to one request line.
  std::string answer(const std::string& request);

  const std::string socket_path_;
  const std::string log_path_;
  UniqueFd listen_;
  UniqueFd wake_read_;  // the destructor writes to wake_write_ to end serve()
  UniqueFd wake_write_;
  UniqueFd log_;
  mutable std::mutex mutex_;
  std::vector<StoreRecord> records_;
  std::int64_t newest_ = 0;
  std::size_t accepted_ = 0;
  std::thread thread_;
};

// A writer's connection to a FencedStore (used by fault_holder). Not thread-safe: one per thread.
class FencedStoreClient {
 public:
  struct Reply {
    bool accepted = false;
    std::int64_t newest = 0;
  };
  // Connects to the store's socket. Throws std::system_error when it cannot.
  explicit FencedStoreClient(const std::string& socket_path);
  FencedStoreClient(const FencedStoreClient&) = delete;
  FencedStoreClient& operator=(const FencedStoreClient&) = delete;

  // Sends one write and waits for the decision. Throws std::runtime_error when the connection
  // breaks or the store answers "E".
  Reply write(const std::string& writer, std::int64_t token, std::int64_t write_no);

 private:
  UniqueFd socket_;
  std::string buffer_;
};

}  // namespace zklock::testing::faults
