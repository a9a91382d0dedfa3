// tests/support/fault_proxy_state.h: the FaultProxy's engine (private to fault_proxy.cpp): its
// sockets, its connections and what it does with their bytes, run by the proxy thread under mu.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "support/fault_proxy.h"
#include "support/fault_proxy_connection.h"

namespace zklock::testing {

using namespace fault_proxy_internal;  // NOLINT(google-build-using-namespace): its own parts

struct FaultProxy::State {
  // Set before the thread starts, constant afterwards.
  int listen_fd = -1;
  int wake_fd = -1;
  int port = 0;
  sockaddr_storage upstream_addr{};  // port filled per connection
  socklen_t upstream_len = 0;

  mutable std::mutex mu;
  mutable std::condition_variable cv;  // notified on every state change the waits look at

  // Everything below is guarded by mu.
  bool stop = false;
  int upstream_port = 0;
  ProxyMode mode = ProxyMode::kPass;
  Clock::duration delay{0};
  bool refuse = false;

  bool drop_armed = false;
  std::string drop_needle;
  bool drop_reset_after = true;
  uint64_t drop_generation = 0;       // incremented by each drop_next_reply_containing()
  uint64_t drop_done_generation = 0;  // highest generation whose drop has fully happened

  std::map<int, Conn> conns;  // by id, hence oldest first
  int next_id = 1;
  size_t accepted = 0;
  size_t refused = 0;
  uint64_t frames_dropped = 0;
  uint64_t bytes_discarded = 0;

  std::vector<char> read_buf = std::vector<char>(kReadChunk);  // the proxy thread's

  ~State() {
    for (auto& entry : conns) {
      close_fd(entry.second.client_fd);
      close_fd(entry.second.server_fd);
    }
    close_fd(listen_fd);
    close_fd(wake_fd);
  }

  void wake() const {
    uint64_t one = 1;
    ssize_t r;
    do {
      r = ::write(wake_fd, &one, sizeof one);
    } while (r < 0 && errno == EINTR);
    // EAGAIN means the counter is already non-zero: the thread will wake anyway.
  }

  bool blackholed(const Conn& c) const { return mode == ProxyMode::kBlackhole || c.own_blackhole; }

  // Under mu: `change(*this, connection)` for live connection `id`, then wakes the proxy thread.
  // False (and nothing changed) when there is no such connection.
  template <typename Change>
  bool change_connection(int id, Change change) {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = conns.find(id);
    if (it == conns.end()) return false;
    change(*this, it);
    wake();
    return true;
  }

  // `read(*this)` under mu: what the one-line getters (counters, mode) return.
  template <typename Read>
  auto read_locked(Read read) const {
    std::lock_guard<std::mutex> lock(mu);
    return read(*this);
  }

  // Drops what c has read but not forwarded, as a partition would.
  void silence(Conn& c) {
    const size_t lost = c.up.queued + c.down.queued + c.framer.held.size();
    bytes_discarded += lost;
    c.damaged = c.damaged || lost > 0;
    c.up.clear();
    c.down.clear();
    if (c.framer.fate == FrameFate::kHold) {
      c.framer.held.clear();
      c.framer.fate = FrameFate::kDiscard;
    }
  }

  // Closes both sockets of c (RST if rst, else a plain close); the caller erases c from conns.
  void finish(Conn& c, bool rst) {
    if (rst) {
      reset_fd(c.client_fd);
      reset_fd(c.server_fd);
    } else {
      close_fd(c.client_fd);
      close_fd(c.server_fd);
    }
    if (c.reset_when_flushed) {
      drop_done_generation = std::max(drop_done_generation, c.drop_generation);
    }
    cv.notify_all();
  }

  // The socket of `side` is broken: close it; nothing more is read from or written to it.

  void accept_all() {
    for (;;) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
        return;  // EAGAIN, or out of descriptors/memory: retried on the next wake-up
      }
      if (refuse) {
        reset_fd(fd);
        ++refused;
        continue;
      }
      set_nodelay(fd);
      Conn c;
      c.id = next_id++;
      c.client_fd = fd;
      connect_upstream(c);
      ++accepted;
      conns.emplace(c.id, std::move(c));
    }
  }

  void connect_upstream(Conn& c) const {
    sockaddr_storage addr = upstream_addr;
    const auto nport = htons(static_cast<uint16_t>(upstream_port));
    if (addr.ss_family == AF_INET) {
      reinterpret_cast<sockaddr_in*>(&addr)->sin_port = nport;
    } else {
      reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = nport;
    }
    int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      c.fail_side(Side::kServer);
      return;
    }
    set_nodelay(fd);
    c.server_fd = fd;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), upstream_len) == 0) {
      c.connecting = false;
    } else if (errno == EINPROGRESS || errno == EINTR) {  // EINTR: the connect goes on async
      c.connecting = true;
    } else {
      c.fail_side(Side::kServer);
    }
  }

  bool wants_read(const Conn& c, const Direction& d) const {
    return !d.src_eof && (blackholed(c) || d.queued < kMaxQueued);
  }

  // Reads what fd `side` has (up to kMaxReadPerWake) and queues, holds or drops it.
  void read_side(Conn& c, Side side) {
    Direction& d = side == Side::kClient ? c.up : c.down;
    size_t total = 0;
    while (total < kMaxReadPerWake && !d.src_eof) {
      const int fd = side == Side::kClient ? c.client_fd : c.server_fd;
      if (fd < 0) return;
      if (side == Side::kServer && c.reset_when_flushed) return;
      ssize_t n = ::recv(fd, read_buf.data(), read_buf.size(), 0);
      if (n > 0) {
        total += static_cast<size_t>(n);
        if (side == Side::kClient) {
          if (blackholed(c)) {
            bytes_discarded += static_cast<uint64_t>(n);
            c.damaged = true;
          } else {
            d.push(std::string(read_buf.data(), static_cast<size_t>(n)), Clock::now() + delay);
          }
        } else {
          on_server_bytes(c, read_buf.data(), static_cast<size_t>(n));
        }
        if (!blackholed(c) && d.queued >= kMaxQueued) return;
      } else if (n == 0) {
        d.src_eof = true;
      } else if (const IoRetry retry = after_io_error(errno); retry == IoRetry::kAfterPoll) {
        return;
      } else if (retry == IoRetry::kNever) {
        c.fail_side(side);
      }
    }
  }

  bool is_droppable_reply(const Framer& f) const {
    if (f.frames == 0) return false;  // the ConnectResponse
    if (f.held.size() < kLengthPrefix + kReplyHeader) return false;
    const auto xid = static_cast<int32_t>(load_be32(f.held.data() + kLengthPrefix));
    if (xid < 0) return false;  // watch event, ping, auth, set-watches
    return f.held.find(drop_needle, kLengthPrefix) != std::string::npos;
  }

  // Frames the bytes just read from c's server and queues, holds or drops them.
  void on_server_bytes(Conn& c, const char* p, size_t n) {
    Framer& f = c.framer;
    const bool bh = blackholed(c);
    std::string out;
    auto emit = [&](const char* q, size_t len) {
      if (f.fate == FrameFate::kHold) {
        f.held.append(q, len);
      } else if (f.fate == FrameFate::kStream && !bh) {
        out.append(q, len);
      } else {
        bytes_discarded += len;
        c.damaged = c.damaged || len > 0;
      }
    };
    size_t i = 0;
    while (i < n) {
      if (f.broken) {
        if (bh) {
          bytes_discarded += n - i;
          c.damaged = true;
        } else {
          out.append(p + i, n - i);
        }
        break;
      }
      if (f.prefix_have < kLengthPrefix) {
        if (f.prefix_have == 0) f.fate = drop_armed && !bh ? FrameFate::kHold : FrameFate::kStream;
        const size_t take = std::min(kLengthPrefix - f.prefix_have, n - i);
        std::memcpy(f.prefix + f.prefix_have, p + i, take);
        emit(p + i, take);
        f.prefix_have += take;
        i += take;
        if (f.prefix_have < kLengthPrefix) break;  // i == n
        const uint32_t len = load_be32(f.prefix);
        if (len > kMaxFrame) {
          f.broken = true;
          if (f.fate == FrameFate::kHold) out += f.held;
          f.held.clear();
          f.fate = FrameFate::kStream;
          continue;
        }
        f.payload_left = len;
      } else {
        const size_t take = std::min<size_t>(f.payload_left, n - i);
        emit(p + i, take);
        f.payload_left -= static_cast<uint32_t>(take);
        i += take;
      }
      if (f.payload_left > 0) continue;
      // The frame is complete.
      if (f.fate == FrameFate::kHold) {
        if (drop_armed && is_droppable_reply(f)) {
          ++frames_dropped;
          drop_armed = false;
          if (drop_reset_after) {
            c.reset_when_flushed = true;
            c.drop_generation = drop_generation;
            i = n;  // the connection is about to be reset: ignore what follows
          } else {
            drop_done_generation = std::max(drop_done_generation, drop_generation);
          }
          cv.notify_all();
        } else {
          out += f.held;
        }
        f.held.clear();
      }
      ++f.frames;
      f.prefix_have = 0;
      f.fate = FrameFate::kStream;
    }
    c.down.push(std::move(out), Clock::now() + delay);
  }

  // Writes to `dst_fd` the chunks of d that are due.

  // Passes on EOFs and failures that are due; returns true if c is finished (to be erased).
  bool settle(Conn& c) {
    if (c.client_failed && c.server_failed) {
      finish(c, true);
      return true;
    }
    if (c.reset_when_flushed && c.down.queue.empty()) {
      finish(c, true);
      return true;
    }
    if (blackholed(c)) return false;  // a partition passes on neither EOF nor reset
    // A failed side resets the other once what was read before the failure is delivered.
    if (c.server_failed && c.down.queue.empty()) {
      finish(c, true);
      return true;
    }
    if (c.client_failed && c.up.queue.empty()) {
      finish(c, true);
      return true;
    }
    if (c.client_failed || c.server_failed) return false;
    if (c.up.src_eof && !c.up.shut && c.up.queue.empty() && !c.connecting) {
      ::shutdown(c.server_fd, SHUT_WR);
      c.up.shut = true;
    }
    if (c.down.src_eof && !c.down.shut && c.down.queue.empty()) {
      ::shutdown(c.client_fd, SHUT_WR);
      c.down.shut = true;
    }
    if (c.up.shut && c.down.shut) {
      finish(c, false);
      return true;
    }
    return false;
  }

  // Handles poll() results for one socket of c.
  void on_events(Conn& c, Side side, short revents) {
    if (side == Side::kServer && c.connecting) {
      c.finish_connect();
      return;
    }
    const Direction& in = side == Side::kClient ? c.up : c.down;
    if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !in.src_eof) {
      // Also on POLLHUP/POLLERR past back-pressure: the read makes progress towards the EOF
      // or error, so poll() cannot spin on it.
      read_side(c, side);
    } else if ((revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
      // Nothing left to read, yet the socket reports a hang-up or error: it is dead.
      c.fail_side(side);
    }
  }

  // Earliest due time among chunks not yet due; adds POLLOUT where a due chunk waits.
  static void write_interest(const Direction& d, short& events, Clock::time_point now,
                             std::optional<Clock::time_point>& next_due) {
    if (d.queue.empty()) return;
    const auto due = d.queue.front().due;
    if (due <= now) {
      events |= POLLOUT;
    } else if (!next_due || due < *next_due) {
      next_due = due;
    }
  }
};

}  // namespace zklock::testing
