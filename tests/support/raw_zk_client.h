// tests/support/raw_zk_client.h: a bare ZooKeeper C client session, for the tests that must not
// go through zklock - the harness's own tests, the fault proxy's tests against a real server, and
// nodes zklock cannot make (a multi of two sequential creates in the wrap suite).
//
// The handle is silent (the C client's reconnect complaints are expected in these tests), and its
// session state, as the last session event reported it, can be awaited.
#pragma once

#include <zookeeper/zookeeper.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace zklock::testing {

class RawZkClient {
 public:
  // zookeeper_init2() towards `connect`; returns at once (connecting goes on in the background).
  // Throws std::runtime_error when the C client refuses to start (a malformed connect string).
  explicit RawZkClient(const std::string& connect, int session_timeout_ms = 10000);
  ~RawZkClient();  // zookeeper_close(): the session ends, its ephemerals go
  RawZkClient(const RawZkClient&) = delete;
  RawZkClient& operator=(const RawZkClient&) = delete;

  zhandle_t* handle() const { return handle_; }
  // The session id (0 until connected).
  std::int64_t session_id() const { return ::zoo_client_id(handle_)->client_id; }
  bool connected() const { return ::zoo_state(handle_) == ZOO_CONNECTED_STATE; }

  // Waits until the state of the last session event (ZOO_CONNECTED_STATE, ...) satisfies `pred`.
  bool wait_state(const std::function<bool(int)>& pred, std::chrono::milliseconds timeout);
  bool wait_connected(std::chrono::milliseconds timeout = std::chrono::seconds(15));

  // Synchronous create of `path` (no ACL restriction, no parents); returns the C client's code.
  int create(const std::string& path, int flags = 0, const std::string& data = "");
  // Synchronous exists; returns ZOK, ZNONODE or the error.
  int exists(const std::string& path);

 private:
  static void on_event(zhandle_t*, int type, int state, const char*, void* context);

  zhandle_t* handle_ = nullptr;
  std::mutex mutex_;
  std::condition_variable changed_;
  int state_ = 0;  // of the last session event
};

// A watcher that does nothing, for zoo_wget / zoo_wexists calls whose watch only has to exist on
// the server.
void ignore_watch_events(zhandle_t*, int, int, const char*, void*);

}  // namespace zklock::testing
