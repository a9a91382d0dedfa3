// tests/support/socket_io.cpp
#include "support/socket_io.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>

#include "support/wait.h"

namespace zklock::testing {
namespace {

sockaddr_in loopback_address(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

}  // namespace

bool wait_for_io(int fd, short events, SteadyTime deadline) {
  for (;;) {
    pollfd pfd{fd, events, 0};
    const int ready = ::poll(&pfd, 1, ms_until(deadline));
    if (ready > 0) return true;
    if (ready == 0 || errno != EINTR) return false;
  }
}

UniqueFd connect_loopback(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const sockaddr_in addr = loopback_address(port);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return UniqueFd();
  }
  return fd;
}

UniqueFd listen_loopback(int* port, int backlog) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr = loopback_address(0);
  if (!fd.valid() || ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd.get(), backlog) != 0) {
    return UniqueFd();
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

UniqueFd listen_dropping_syns(int* port, UniqueFd* filler) {
  UniqueFd listener = listen_loopback(port, 0);
  if (!listener.valid()) return listener;
  *filler = connect_loopback(*port);
  return filler->valid() ? std::move(listener) : UniqueFd();
}

bool accepts_connections(const std::string& address, int port) {
  const UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return false;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  return inet_pton(AF_INET, address.c_str(), &sa.sin_addr) == 1 &&
         ::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

ReadResult recv_exact(int fd, std::size_t n, std::string* out, SteadyTime deadline) {
  std::array<char, 64 * 1024> buffer{};
  while (n > 0) {
    if (!wait_for_io(fd, POLLIN, deadline)) return ReadResult::kTimeout;
    const ssize_t got = ::recv(fd, buffer.data(), std::min(n, buffer.size()), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ReadResult::kError;
    if (got == 0) return ReadResult::kEof;
    out->append(buffer.data(), static_cast<std::size_t>(got));
    n -= static_cast<std::size_t>(got);
  }
  return ReadResult::kOk;
}

ReadResult wait_closed(int fd, SteadyTime deadline, int* error) {
  std::array<char, 4096> buffer{};
  for (;;) {
    if (!wait_for_io(fd, POLLIN, deadline)) return ReadResult::kTimeout;
    const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) return ReadResult::kEof;
    if (got < 0) {
      if (error != nullptr) *error = errno;
      return ReadResult::kError;
    }
  }
}

bool stays_silent(int fd, std::chrono::milliseconds window) {
  return !wait_for_io(fd, POLLIN, std::chrono::steady_clock::now() + window);
}

}  // namespace zklock::testing
