// Dropping a connection of the C client from outside its I/O thread: shutdown(2) on its socket,
// which the I/O thread then sees end and drops itself (connection_drop.h says why not
// zoo_set_servers).
#include "client/connection_drop.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_bytes_received (glibc's lacks it)
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <zookeeper/zookeeper.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace zklock::detail {
namespace {

struct Endpoint {
  sockaddr_storage address{};
  socklen_t length = 0;
};

// "address:port,..." (numeric; IPv6 in brackets or not) as socket addresses.
std::vector<Endpoint> endpoints(const std::string& hosts) {
  std::vector<Endpoint> out;
  std::size_t start = 0;
  while (start <= hosts.size()) {
    std::size_t end = hosts.find(',', start);
    if (end == std::string::npos) end = hosts.size();
    const std::string one = hosts.substr(start, end - start);
    start = end + 1;
    const auto colon = one.rfind(':');
    if (colon == std::string::npos) continue;
    std::string address = one.substr(0, colon);
    if (address.size() >= 2 && address.front() == '[')
      address = address.substr(1, address.size() - 2);
    const int port = std::atoi(one.c_str() + colon + 1);
    Endpoint e;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&e.address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&e.address);
    if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(static_cast<std::uint16_t>(port));
      e.length = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(static_cast<std::uint16_t>(port));
      e.length = sizeof(sockaddr_in6);
    } else {
      continue;
    }
    out.push_back(e);
  }
  return out;
}

bool same_endpoint(const sockaddr_storage& a, const Endpoint& b) {
  if (a.ss_family != b.address.ss_family) return false;
  if (a.ss_family == AF_INET) {
    const auto* x = reinterpret_cast<const sockaddr_in*>(&a);
    const auto* y = reinterpret_cast<const sockaddr_in*>(&b.address);
    return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
  }
  const auto* x = reinterpret_cast<const sockaddr_in6*>(&a);
  const auto* y = reinterpret_cast<const sockaddr_in6*>(&b.address);
  return x->sin6_port == y->sin6_port &&
         std::memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
}

bool one_of(const sockaddr_storage& peer, const std::vector<Endpoint>& peers) {
  for (const Endpoint& e : peers) {
    if (same_endpoint(peer, e)) return true;
  }
  return false;
}

bool connected_to(int fd, const std::vector<Endpoint>& peers) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return false;
  return one_of(peer, peers);
}

// The TCP state of socket `fd`, or -1 if it has none (not a TCP socket, or closed).
int tcp_state_of(int fd) {
  tcp_info info{};
  socklen_t length = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
  return info.tcpi_state;
}

// True when `fd` is a TCP socket whose connect waits for the answer to its SYN.
bool syn_sent(int fd) { return tcp_state_of(fd) == kTcpSynSent; }

// The address a TCP socket whose connect is under way (SYN sent, no answer yet) is connecting to.
// getpeername refuses such a socket (ENOTCONN), but the kernel's socket table lists it by inode:
// /proc/self/net/tcp (tcp6), whose remote address is the in-memory words of the address printed
// in hex and whose port is printed as a number.
std::optional<sockaddr_storage> connecting_peer(int fd) {
  struct stat status {};
  if (fstat(fd, &status) != 0 || !S_ISSOCK(status.st_mode)) return std::nullopt;
  int domain = 0;
  socklen_t length = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0) return std::nullopt;
  if (domain != AF_INET && domain != AF_INET6) return std::nullopt;
  if (!syn_sent(fd)) return std::nullopt;
  std::unique_ptr<FILE, int (*)(FILE*)> table(
      std::fopen(domain == AF_INET ? "/proc/self/net/tcp" : "/proc/self/net/tcp6", "re"),
      &std::fclose);
  if (!table) return std::nullopt;
  std::array<char, 512> line{};
  // The first line is the header.
  if (std::fgets(line.data(), line.size(), table.get()) == nullptr) return std::nullopt;
  while (std::fgets(line.data(), line.size(), table.get()) != nullptr) {
    std::array<char, 33> remote{};
    unsigned port = 0;
    unsigned long inode = 0;  // NOLINT(google-runtime-int): the table's own type
    // sl: local:port remote:port st tx:rx tr:when retrnsmt uid timeout inode
    if (std::sscanf(line.data(),
                    " %*u: %*[0-9A-Fa-f]:%*x %32[0-9A-Fa-f]:%x %*x %*x:%*x %*x:%*x %*x %*u %*d %lu",
                    remote.data(), &port, &inode) != 3 ||
        inode != status.st_ino) {
      continue;
    }
    sockaddr_storage peer{};
    const std::string hex(remote.data());
    if (domain == AF_INET && hex.size() == 8) {
      auto* v4 = reinterpret_cast<sockaddr_in*>(&peer);
      v4->sin_family = AF_INET;
      v4->sin_port = htons(static_cast<std::uint16_t>(port));
      v4->sin_addr.s_addr = static_cast<std::uint32_t>(std::strtoul(hex.c_str(), nullptr, 16));
      return peer;
    }
    if (domain == AF_INET6 && hex.size() == 32) {
      auto* v6 = reinterpret_cast<sockaddr_in6*>(&peer);
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(static_cast<std::uint16_t>(port));
      for (std::size_t word = 0; word < 4; ++word) {
        const std::string one = hex.substr(8 * word, 8);
        const auto value = static_cast<std::uint32_t>(std::strtoul(one.c_str(), nullptr, 16));
        std::memcpy(&v6->sin6_addr.s6_addr[4 * word], &value, sizeof value);
      }
      return peer;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

bool shut_down_connection(zhandle_t* zh, const std::string& hosts) noexcept {
  // The C client offers no way to drop a connection other than zoo_set_servers (see the header).
  // The socket number may be stale: it is shut down only if it is connected, or connecting, to
  // one of our servers.
  const int fd = current_socket(zh);
  if (fd < 0) return false;
  const std::vector<Endpoint> peers = endpoints(hosts);
  if (!connected_to(fd, peers)) {
    // A connect under way: shutdown(2) aborts it, and the I/O thread sees the connect fail.
    const std::optional<sockaddr_storage> peer = connecting_peer(fd);
    if (!peer || !one_of(*peer, peers)) return false;
  }
  return shutdown(fd, SHUT_RDWR) == 0;
}

int shut_down_silent_handshakes(const std::string& hosts, const std::set<int>& spared) noexcept {
  const std::vector<Endpoint> peers = endpoints(hosts);
  if (peers.empty()) return 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  int count = 0;
  const int own = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);  // NOLINT(google-runtime-int)
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    const int s = static_cast<int>(fd);
    if (spared.count(s) != 0 || !connected_to(s, peers)) continue;
    tcp_info info{};
    socklen_t length = sizeof info;
    if (getsockopt(s, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) continue;
    if (info.tcpi_state != kTcpEstablished || info.tcpi_bytes_received != 0) continue;
    if (shutdown(s, SHUT_RDWR) == 0) ++count;
  }
  closedir(dir);
  return count;
}

int current_socket(zhandle_t* zh) noexcept {
  // `struct _zhandle` (private) begins with `zsock_t* fd` in every 3.5-3.9 client, and zsock_t
  // (public, zookeeper.h) with `int sock`.
  if (zh == nullptr) return -1;
  const zsock_t* socket_struct = *reinterpret_cast<zsock_t* const*>(zh);
  if (socket_struct == nullptr) return -1;
  return __atomic_load_n(&socket_struct->sock, __ATOMIC_RELAXED);
}

int tcp_state(zhandle_t* zh) noexcept {
  const int fd = current_socket(zh);
  return fd >= 0 ? tcp_state_of(fd) : -1;
}

}  // namespace zklock::detail
