// tests/support/fake_server.cpp
#include "support/fake_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstdint>

#include "support/socket_io.h"
#include "support/zk_framing.h"

namespace zklock::testing {

FakeServer::FakeServer(Kind kind) : kind_(kind) {
  listen_ = listen_loopback(&port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeServer::~FakeServer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    for (int fd : open_fds_) {
      if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    }
  }
  ::shutdown(listen_.get(), SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  for (auto& worker : workers_) worker.join();
}

std::size_t FakeServer::received() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return received_;
}

std::size_t FakeServer::connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return connections_;
}

std::size_t FakeServer::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

bool FakeServer::wait_connections(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return connections_ >= n; });
}

bool FakeServer::wait_closed(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return closed_ >= n; });
}

void FakeServer::push_to_all(const std::string& bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (int fd : open_fds_) {
    if (fd >= 0) send_all(fd, bytes);
  }
}

void FakeServer::accept_loop() {
  for (;;) {
    const int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      UniqueFd late(fd);
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const std::size_t slot = open_fds_.size();
    open_fds_.push_back(fd);
    ++connections_;
    changed_.notify_all();
    workers_.emplace_back([this, fd, slot] { serve(fd, slot); });
  }
}

void FakeServer::serve(int fd, std::size_t slot) {
  if (kind_ == Kind::kEcho) {
    serve_echo(fd);
  } else {
    serve_frames(fd);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  UniqueFd done(fd);
  open_fds_[slot] = -1;
  ++closed_;
  changed_.notify_all();
}

void FakeServer::count_received(std::size_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  received_ += n;
}

void FakeServer::serve_echo(int fd) {
  std::array<char, 64 * 1024> buffer{};
  for (;;) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    count_received(static_cast<std::size_t>(n));
    if (!send_all(fd, std::string_view(buffer.data(), static_cast<std::size_t>(n)))) return;
  }
}

void FakeServer::serve_frames(int fd) {
  const auto forever = std::chrono::steady_clock::now() + std::chrono::hours(24);
  bool first = true;
  for (;;) {
    auto payload = read_frame(fd, forever);
    if (!payload) return;
    std::string out;
    if (first) {
      out = frame("CONNECTED:" + *payload);
      first = false;
    } else {
      count_received(1);
      const std::int32_t xid = load_be32(*payload);
      const std::string body = payload->substr(4);
      if (body.rfind("trio:", 0) == 0) {
        const std::string needle = body.substr(5);
        out = frame(reply(-1, "watch " + needle)) + frame(reply(-2, "ping " + needle)) +
              frame(reply(xid, "first")) + frame(reply(xid, "hit " + needle)) +
              frame(reply(xid, "last"));
      } else {
        out = frame(reply(xid, body));
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);  // serialised with push_to_all
    if (!send_all(fd, out)) return;
  }
}

}  // namespace zklock::testing
