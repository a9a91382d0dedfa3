// tests/faults/fenced_store.cpp: see fenced_store.h.
#include "fenced_store.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "support/stall_watch.h"
#include "support/wait.h"

namespace zklock::testing::faults {
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    throw std::invalid_argument("fenced store: socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("fenced store: send");
    }
    done += static_cast<std::size_t>(n);
  }
}

// Parses a non-negative decimal; false on anything else.
bool parse_int(const std::string& text, std::int64_t& out) {
  if (text.empty() || text.size() > 18) return false;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::int64_t monotonic_ns() { return monotonic_clock_ns(); }

std::int64_t to_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string format_record(const StoreRecord& r) {
  std::ostringstream os;
  os << "t=" << r.at_ns << " writer=" << r.writer << " token=" << r.token << " n=" << r.write_no
     << " result=" << (r.accepted ? "accepted" : "rejected") << " newest=" << r.newest;
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Server

FencedStore::FencedStore(std::string socket_path, std::string log_path)
    : socket_path_(std::move(socket_path)), log_path_(std::move(log_path)) {}

std::unique_ptr<FencedStore> FencedStore::start(const std::string& socket_path,
                                                const std::string& log_path) {
  std::unique_ptr<FencedStore> store(new FencedStore(socket_path, log_path));
  if (!log_path.empty()) {
    store->log_.reset(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!store->log_.valid()) throw_errno("fenced store: open " + log_path);
  }
  ::unlink(socket_path.c_str());
  store->listen_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!store->listen_.valid()) throw_errno("fenced store: socket");
  const sockaddr_un addr = unix_address(socket_path);
  if (::bind(store->listen_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw_errno("fenced store: bind " + socket_path);
  }
  if (::listen(store->listen_.get(), 64) != 0) throw_errno("fenced store: listen");
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) throw_errno("fenced store: pipe");
  store->wake_read_.reset(wake[0]);
  store->wake_write_.reset(wake[1]);
  store->thread_ = std::thread([s = store.get()] { s->serve(); });
  return store;
}

FencedStore::~FencedStore() {
  if (thread_.joinable()) {
    const char byte = 'x';
    (void)!::write(wake_write_.get(), &byte, 1);
    thread_.join();
  }
  ::unlink(socket_path_.c_str());
}

StoreRecord FencedStore::write(const std::string& writer, std::int64_t token,
                               std::int64_t write_no) {
  std::lock_guard lock(mutex_);
  StoreRecord r;
  r.at_ns = monotonic_ns();
  r.writer = writer;
  r.token = token;
  r.write_no = write_no;
  // The fence: only a token at least as new as the newest accepted one gets through.
  r.accepted = token >= newest_;
  if (r.accepted) {
    newest_ = token;
    ++accepted_;
  }
  r.newest = newest_;
  records_.push_back(r);
  if (log_.valid()) {
    const std::string line = format_record(r) + "\n";
    (void)!::write(log_.get(), line.data(), line.size());
  }
  return r;
}

void FencedStore::serve() {
  std::map<int, Connection> connections;  // by descriptor
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({wake_read_.get(), POLLIN, 0});
    fds.push_back({listen_.get(), POLLIN, 0});
    for (const auto& [fd, c] : connections) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) {
      for (;;) {
        UniqueFd accepted(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!accepted.valid()) break;
        const int fd = accepted.get();
        connections[fd].socket = std::move(accepted);
      }
    }
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (!serve_requests(connections[fds[i].fd])) connections.erase(fds[i].fd);
    }
  }
}

bool FencedStore::serve_requests(Connection& c) {
  const int fd = c.socket.get();
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      c.in.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    return false;  // EOF or error: the writer went away (exited, killed)
  }
  std::size_t eol;
  while ((eol = c.in.find('\n')) != std::string::npos) {
    const std::string line = c.in.substr(0, eol);
    c.in.erase(0, eol + 1);
    try {
      // Replies are a few bytes and a writer reads its reply before sending more, so this never
      // blocks on a full socket buffer; a writer gone meanwhile just loses the reply.
      write_all(fd, answer(line));
    } catch (const std::system_error&) {
      return false;
    }
  }
  return true;
}

std::string FencedStore::answer(const std::string& request) {
  std::istringstream is(request);
  std::string verb, writer, token_text, n_text, extra;
  std::int64_t token = 0, write_no = 0;
  if (!(is >> verb >> writer >> token_text >> n_text) || (is >> extra) || verb != "W" ||
      !parse_int(token_text, token) || !parse_int(n_text, write_no)) {
    return "E malformed request\n";
  }
  const StoreRecord r = write(writer, token, write_no);
  return std::string(r.accepted ? "A " : "R ") + std::to_string(r.newest) + "\n";
}

std::vector<StoreRecord> FencedStore::records() const {
  std::lock_guard lock(mutex_);
  return records_;
}

std::size_t FencedStore::size() const {
  std::lock_guard lock(mutex_);
  return records_.size();
}

std::int64_t FencedStore::newest() const {
  std::lock_guard lock(mutex_);
  return newest_;
}

std::size_t FencedStore::accepted() const {
  std::lock_guard lock(mutex_);
  return accepted_;
}

std::size_t FencedStore::rejected() const {
  std::lock_guard lock(mutex_);
  return records_.size() - accepted_;
}

bool FencedStore::wait_for(const std::function<bool(const std::vector<StoreRecord>&)>& pred,
                           std::chrono::milliseconds timeout) const {
  return wait_until([&] { return pred(records()); }, timeout);
}

// ---------------------------------------------------------------------------------------------
// Client

FencedStoreClient::FencedStoreClient(const std::string& socket_path)
    : socket_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  if (!socket_.valid()) throw_errno("fenced store client: socket");
  const sockaddr_un addr = unix_address(socket_path);
  if (::connect(socket_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw_errno("fenced store client: connect " + socket_path);
  }
}

FencedStoreClient::Reply FencedStoreClient::write(const std::string& writer, std::int64_t token,
                                                  std::int64_t write_no) {
  write_all(socket_.get(),
            "W " + writer + " " + std::to_string(token) + " " + std::to_string(write_no) + "\n");
  std::size_t eol;
  while ((eol = buffer_.find('\n')) == std::string::npos) {
    char buf[256];
    const ssize_t n = ::recv(socket_.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("fenced store client: connection closed");
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
  const std::string line = buffer_.substr(0, eol);
  buffer_.erase(0, eol + 1);
  Reply reply;
  std::int64_t newest = 0;
  if (line.size() < 3 || (line[0] != 'A' && line[0] != 'R') || !parse_int(line.substr(2), newest)) {
    throw std::runtime_error("fenced store client: bad reply: " + line);
  }
  reply.accepted = line[0] == 'A';
  reply.newest = newest;
  return reply;
}

}  // namespace zklock::testing::faults
