#include "support/fault_proxy_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace zklock::testing::fault_proxy_internal {

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);  // on Linux the descriptor is released even on EINTR: never retry
    fd = -1;
  }
}

void reset_fd(int& fd) {
  if (fd >= 0) {
    linger lg{};
    lg.l_onoff = 1;
    lg.l_linger = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close_fd(fd);
  }
}

IoRetry after_io_error(int error) {
  if (error == EINTR) return IoRetry::kNow;
  if (error == EAGAIN || error == EWOULDBLOCK) return IoRetry::kAfterPoll;
  return IoRetry::kNever;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

uint32_t load_be32(const char* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return ntohl(v);
}

void Conn::fail_side(Side side) {
  if (side == Side::kClient) {
    reset_fd(client_fd);
    client_failed = true;
    up.src_eof = true;
    down.clear();
  } else {
    reset_fd(server_fd);
    server_failed = true;
    connecting = false;
    down.src_eof = true;
    up.clear();
  }
}

void Conn::finish_connect() {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(server_fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
  if (err == 0) {
    connecting = false;
  } else if (err != EINPROGRESS && err != EALREADY) {
    fail_side(Side::kServer);
  }
}

void Conn::flush(Direction& d, Side dst_side) {
  const int dst_fd = dst_side == Side::kClient ? client_fd : server_fd;
  if (dst_fd < 0) {
    d.clear();
    return;
  }
  if (dst_side == Side::kServer && connecting) return;
  const auto now = Clock::now();
  while (!d.queue.empty()) {
    Chunk& ch = d.queue.front();
    if (ch.due > now) return;
    ssize_t n = ::send(dst_fd, ch.data.data() + ch.off, ch.data.size() - ch.off, MSG_NOSIGNAL);
    if (n >= 0) {
      ch.off += static_cast<size_t>(n);
      d.queued -= static_cast<size_t>(n);
      if (ch.off == ch.data.size()) d.queue.pop_front();
    } else if (const IoRetry retry = after_io_error(errno); retry != IoRetry::kNow) {
      if (retry == IoRetry::kNever) fail_side(dst_side);
      return;
    }
  }
}

}  // namespace zklock::testing::fault_proxy_internal
