#include "support/fault_proxy.h"

#include "support/fault_proxy_state.h"

namespace zklock::testing {

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
