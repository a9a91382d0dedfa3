#include "support/fault_proxy.h"

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

FaultProxy::FaultProxy(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<FaultProxy> FaultProxy::start(const std::string& upstream_host, int upstream_port) {
  if (upstream_port <= 0 || upstream_port > 65535) {
    throw std::invalid_argument("FaultProxy: upstream port out of range: " +
                                std::to_string(upstream_port));
  }
  auto state = std::make_unique<State>();
  state->upstream_port = upstream_port;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(upstream_host.c_str(), nullptr, &hints, &res); rc != 0) {
    throw std::runtime_error("FaultProxy: cannot resolve '" + upstream_host +
                             "': " + ::gai_strerror(rc));
  }
  const addrinfo* pick = nullptr;
  for (const addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET) {
      pick = ai;
      break;
    }
    if (ai->ai_family == AF_INET6 && pick == nullptr) pick = ai;
  }
  if (pick == nullptr) {
    ::freeaddrinfo(res);
    throw std::runtime_error("FaultProxy: no IPv4/IPv6 address for '" + upstream_host + "'");
  }
  std::memcpy(&state->upstream_addr, pick->ai_addr, pick->ai_addrlen);
  state->upstream_len = pick->ai_addrlen;
  ::freeaddrinfo(res);

  state->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (state->wake_fd < 0) throw_errno("FaultProxy: eventfd");
  state->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (state->listen_fd < 0) throw_errno("FaultProxy: socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(state->listen_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
    throw_errno("FaultProxy: bind 127.0.0.1:0");
  }
  if (::listen(state->listen_fd, SOMAXCONN) < 0) throw_errno("FaultProxy: listen");
  socklen_t len = sizeof addr;
  if (::getsockname(state->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) < 0) {
    throw_errno("FaultProxy: getsockname");
  }
  state->port = ntohs(addr.sin_port);

  std::unique_ptr<FaultProxy> proxy(new FaultProxy(std::move(state)));
  proxy->thread_ = std::thread([p = proxy.get()] { p->run(); });
  return proxy;
}

FaultProxy::~FaultProxy() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->wake();
  if (thread_.joinable()) thread_.join();
  // state_'s destructor closes every socket.
}

void FaultProxy::run() {
  State& s = *state_;
  std::vector<pollfd> fds;
  std::vector<PollSlot> slots;  // slots[i] describes fds[i + 2]
  std::unique_lock<std::mutex> lock(s.mu);
  while (!s.stop) {
    fds.clear();
    slots.clear();
    fds.push_back(pollfd{s.wake_fd, POLLIN, 0});
    fds.push_back(pollfd{s.listen_fd, POLLIN, 0});
    const auto now = Clock::now();
    std::optional<Clock::time_point> next_due;
    for (const auto& [id, c] : s.conns) {
      if (c.client_fd >= 0) {
        short events = 0;
        if (s.wants_read(c, c.up)) events |= POLLIN;
        State::write_interest(c.down, events, now, next_due);
        fds.push_back(pollfd{c.client_fd, events, 0});
        slots.push_back(PollSlot{id, Side::kClient});
      }
      if (c.server_fd >= 0 && !c.reset_when_flushed) {  // about to be reset: not read any more
        short events = 0;
        if (c.connecting) {
          events |= POLLOUT;
        } else {
          if (s.wants_read(c, c.down)) events |= POLLIN;
          State::write_interest(c.up, events, now, next_due);
        }
        fds.push_back(pollfd{c.server_fd, events, 0});
        slots.push_back(PollSlot{id, Side::kServer});
      }
    }
    int timeout_ms = -1;
    if (next_due) {
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next_due - now);
      timeout_ms = static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, wait.count()));
    }

    lock.unlock();
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    const int poll_errno = errno;
    lock.lock();
    if (s.stop) break;
    if (ready < 0 && poll_errno != EINTR) {
      // EFAULT/EINVAL/ENOMEM: nothing sensible to do but try again, without spinning.
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      lock.lock();
      continue;
    }
    if (ready > 0) {
      if (fds[0].revents != 0) {
        uint64_t count = 0;
        while (::read(s.wake_fd, &count, sizeof count) < 0 && errno == EINTR) {
        }
      }
      if ((fds[1].revents & POLLIN) != 0) s.accept_all();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        const PollSlot& slot = slots[i - 2];
        auto it = s.conns.find(slot.conn_id);
        if (it == s.conns.end()) continue;  // reset by a control call meanwhile
        Conn& c = it->second;
        const int fd = slot.side == Side::kClient ? c.client_fd : c.server_fd;
        if (fd != fds[i].fd) continue;  // closed meanwhile
        s.on_events(c, slot.side, fds[i].revents);
      }
    }
    for (auto it = s.conns.begin(); it != s.conns.end();) {
      Conn& c = it->second;
      c.flush(c.up, Side::kServer);
      c.flush(c.down, Side::kClient);
      if (s.settle(c)) {
        it = s.conns.erase(it);
      } else {
        ++it;
      }
    }
    s.cv.notify_all();
  }
}

int FaultProxy::port() const { return state_->port; }

std::string FaultProxy::connect_string() const {
  return "127.0.0.1:" + std::to_string(state_->port);
}

void FaultProxy::set_upstream(int port) {
  if (port <= 0 || port > 65535) {
    throw std::invalid_argument("FaultProxy: upstream port out of range: " + std::to_string(port));
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->upstream_port = port;
}

void FaultProxy::blackhole() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->mode = ProxyMode::kBlackhole;
  for (auto& entry : state_->conns) state_->silence(entry.second);
  state_->wake();
}

void FaultProxy::heal(Heal how) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->mode = ProxyMode::kPass;
  for (auto it = state_->conns.begin(); it != state_->conns.end();) {
    Conn& c = it->second;
    c.own_blackhole = false;
    if (how == Heal::kResetDamaged && c.damaged) {
      state_->finish(c, true);
      it = state_->conns.erase(it);
    } else {
      c.damaged = false;
      ++it;
    }
  }
  state_->wake();
}

ProxyMode FaultProxy::mode() const {
  return state_->read_locked([](const State& s) { return s.mode; });
}

void FaultProxy::set_delay(std::chrono::milliseconds d) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->delay = std::max(d, std::chrono::milliseconds(0));
  state_->wake();
}

void FaultProxy::reset_all() {
  std::lock_guard<std::mutex> lock(state_->mu);
  for (auto& entry : state_->conns) state_->finish(entry.second, true);
  state_->conns.clear();
  state_->wake();
}

void FaultProxy::refuse_new(bool refuse) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->refuse = refuse;
  state_->wake();
}

void FaultProxy::drop_next_reply_containing(std::string needle, bool reset_after) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->drop_armed = true;
  state_->drop_needle = std::move(needle);
  state_->drop_reset_after = reset_after;
  ++state_->drop_generation;
  state_->wake();
}

bool FaultProxy::wait_reply_dropped(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(state_->mu);
  const uint64_t generation = state_->drop_generation;
  if (generation == 0) return false;
  return state_->cv.wait_for(lock, timeout,
                             [&] { return state_->drop_done_generation >= generation; });
}

std::vector<int> FaultProxy::connection_ids() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<int> ids;
  ids.reserve(state_->conns.size());
  for (const auto& entry : state_->conns) ids.push_back(entry.first);
  return ids;
}

bool FaultProxy::blackhole_connection(int id) {
  return state_->change_connection(id, [](State& s, std::map<int, Conn>::iterator it) {
    it->second.own_blackhole = true;
    s.silence(it->second);
  });
}

bool FaultProxy::heal_connection(int id) {
  return state_->change_connection(id, [](State& s, std::map<int, Conn>::iterator it) {
    it->second.own_blackhole = false;
    if (s.mode == ProxyMode::kPass) it->second.damaged = false;  // it passes again
  });
}

bool FaultProxy::reset_connection(int id) {
  return state_->change_connection(id, [](State& s, std::map<int, Conn>::iterator it) {
    s.finish(it->second, true);
    s.conns.erase(it);
  });
}

size_t FaultProxy::accepted() const {
  return state_->read_locked([](const State& s) { return s.accepted; });
}

size_t FaultProxy::refused() const {
  return state_->read_locked([](const State& s) { return s.refused; });
}

size_t FaultProxy::live() const {
  return state_->read_locked([](const State& s) { return s.conns.size(); });
}

uint64_t FaultProxy::frames_dropped() const {
  return state_->read_locked([](const State& s) { return s.frames_dropped; });
}

uint64_t FaultProxy::bytes_discarded() const {
  return state_->read_locked([](const State& s) { return s.bytes_discarded; });
}

size_t FaultProxy::in_flight() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  size_t total = 0;
  for (const auto& entry : state_->conns) {
    const Conn& c = entry.second;
    total += c.up.queued + c.down.queued + c.framer.held.size();
  }
  return total;
}

bool FaultProxy::wait_accepted(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [&] { return state_->accepted >= n; });
}

bool FaultProxy::wait_live(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [&] { return state_->conns.size() == n; });
}

}  // namespace zklock::testing
