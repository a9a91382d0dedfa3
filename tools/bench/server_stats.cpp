#include "server_stats.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

namespace zklock_bench {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

std::optional<std::string> talk(const addrinfo* ai, const std::string& word,
                                Clock::time_point deadline) {
  const int fd =
      ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return std::nullopt;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return std::nullopt;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) != 1) return std::nullopt;
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) return std::nullopt;
  }
  std::size_t sent = 0;
  while (sent < word.size()) {
    const ssize_t n = ::send(fd, word.data() + sent, word.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return std::nullopt;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) != 1) return std::nullopt;
  }
  std::string reply;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      reply.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return reply;  // the server closes after answering
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) != 1) return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> four_letter_word(const std::string& host, int port,
                                            const std::string& word, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0)
    return std::nullopt;
  std::optional<std::string> out;
  for (const addrinfo* ai = res; ai && !out; ai = ai->ai_next) out = talk(ai, word, deadline);
  ::freeaddrinfo(res);
  return out;
}

ServerStats::ServerStats(const std::string& connect) {
  std::string hosts = connect.substr(0, connect.find('/'));
  std::stringstream ss(hosts);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0) continue;
    std::string host = item.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    const int port = std::atoi(item.c_str() + colon + 1);
    if (port <= 0 || port > 65535) continue;
    bool dup = false;
    for (const auto& s : servers_) dup = dup || (s.first == host && s.second == port);
    if (!dup) servers_.emplace_back(host, port);
  }
}

ServerCounters ServerStats::read() const {
  ServerCounters total;
  if (servers_.empty()) return total;
  total.ok = true;
  for (const auto& [host, port] : servers_) {
    const auto reply = four_letter_word(host, port, "mntr", 2000);
    if (!reply) {
      total.ok = false;
      continue;
    }
    std::map<std::string, std::string> kv;
    std::stringstream lines(*reply);
    std::string line;
    while (std::getline(lines, line)) {
      const auto tab = line.find('\t');
      if (tab != std::string::npos) kv[line.substr(0, tab)] = line.substr(tab + 1);
    }
    auto num = [&](const char* key, std::int64_t& into) {
      auto it = kv.find(key);
      if (it == kv.end()) return false;
      into += std::strtoll(it->second.c_str(), nullptr, 10);
      return true;
    };
    bool ok = num("zk_packets_received", total.packets_received);
    ok = num("zk_watch_count", total.watch_count) && ok;
    std::int64_t notified = 0;
    ok = num("zk_sum_node_created_watch_count", notified) && ok;
    ok = num("zk_sum_node_deleted_watch_count", notified) && ok;
    ok = num("zk_sum_node_changed_watch_count", notified) && ok;
    ok = num("zk_sum_node_children_watch_count", notified) && ok;
    total.watch_notifications += notified;
    if (total.version.empty() && kv.count("zk_version")) {
      const std::string& v = kv["zk_version"];
      total.version = v.substr(0, v.find_first_of("-, "));
    }
    total.ok = total.ok && ok;
  }
  return total;
}

std::optional<std::int64_t> ServerStats::self_watches(const std::string& prefix) const {
  if (servers_.empty()) return std::nullopt;
  std::int64_t count = 0;
  for (const auto& [host, port] : servers_) {
    const auto wchc = four_letter_word(host, port, "wchc", 5000);
    const auto dump = four_letter_word(host, port, "dump", 5000);
    if (!wchc || !dump || wchc->find("not executed") != std::string::npos ||
        dump->find("Sessions with Ephemerals") == std::string::npos) {
      return std::nullopt;
    }
    // dump: "Sessions with Ephemerals (N):" then "0x<session>:" and "\t<path>" lines.
    std::map<std::string, std::vector<std::string>> owned;
    {
      std::stringstream lines(*dump);
      std::string line, session;
      bool in_section = false;
      while (std::getline(lines, line)) {
        if (!in_section) {
          in_section = line.rfind("Sessions with Ephemerals", 0) == 0;
          continue;
        }
        if (!line.empty() && line[0] == '\t') {
          if (!session.empty()) owned[session].push_back(line.substr(1));
        } else if (line.rfind("0x", 0) == 0 && !line.empty() && line.back() == ':') {
          session = line.substr(0, line.size() - 1);
        } else {
          break;
        }
      }
    }
    // wchc: "0x<session>" then "\t<path>" lines.
    std::stringstream lines(*wchc);
    std::string line, session;
    while (std::getline(lines, line)) {
      if (!line.empty() && line[0] == '\t') {
        const std::string path = line.substr(1);
        if (session.empty() || path.compare(0, prefix.size(), prefix) != 0) continue;
        const auto it = owned.find(session);
        if (it == owned.end()) continue;
        for (const auto& mine : it->second) count += mine == path ? 1 : 0;
      } else {
        session = line.rfind("0x", 0) == 0 ? line : std::string();
      }
    }
  }
  return count;
}

}  // namespace zklock_bench
