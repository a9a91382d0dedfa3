// tests/support/fake_server.h: FakeServer, a small loopback TCP server to put behind the fault
// proxy (fault_proxy.h) in its own tests, where a real ZooKeeper server could not be made to send
// exactly the bytes a test needs, when it needs them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/unique_fd.h"

namespace zklock::testing {

// One thread per connection. kEcho echoes bytes as they come and closes after the client's EOF.
// kFrames speaks ZooKeeper framing (zk_framing.h): the first frame it receives on a connection is
// answered with a "ConnectResponse" (payload "CONNECTED:" + request, no reply header); each later
// request (xid + body) with one reply frame (same xid, body echoed), except a body "trio:NEEDLE",
// answered with five frames in one send(): a watch event (xid -1) and a ping (xid -2) both
// containing NEEDLE, then replies "first", "hit NEEDLE", "last".
// Every member function is thread-safe.
class FakeServer {
 public:
  enum class Kind { kEcho, kFrames };

  // Listens on 127.0.0.1 at a free port and starts accepting.
  explicit FakeServer(Kind kind);
  // Shuts every connection down and joins every thread.
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  int port() const { return port_; }

  // Request frames received (kFrames, ConnectRequests excluded) / bytes received (kEcho).
  std::size_t received() const;
  // Connections accepted / ended (the proxy side closed or reset them).
  std::size_t connections() const;
  std::size_t closed() const;
  bool wait_connections(std::size_t n, std::chrono::milliseconds timeout) const;
  bool wait_closed(std::size_t n, std::chrono::milliseconds timeout) const;

  // Writes `bytes` to every open connection, as if the server sent them on its own.
  void push_to_all(const std::string& bytes);

 private:
  void accept_loop();
  void serve(int fd, std::size_t slot);
  void serve_echo(int fd);
  void serve_frames(int fd);
  void count_received(std::size_t n);

  const Kind kind_;
  UniqueFd listen_;
  int port_ = 0;
  std::thread acceptor_;
  std::vector<std::thread> workers_;  // joined in the destructor; touched only by acceptor_

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool stopping_ = false;
  std::vector<int> open_fds_;  // -1 once closed
  std::size_t received_ = 0;
  std::size_t connections_ = 0;
  std::size_t closed_ = 0;
};

}  // namespace zklock::testing
