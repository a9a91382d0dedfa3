#include "client/host_resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace zklock::detail {
namespace {

std::string numeric_address(const sockaddr* address) {
  std::array<char, NI_MAXHOST> text{};
  const socklen_t size =
      address->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (getnameinfo(address, size, text.data(), text.size(), nullptr, 0, NI_NUMERICHOST) != 0) {
    return {};
  }
  return text.data();
}

// Calls `each(host, port, entry)` for every "host:port" of `hosts` (brackets of an IPv6 host
// removed).
template <class Each>
void for_each_host(std::string_view hosts, Each each) {
  std::size_t start = 0;
  while (start <= hosts.size()) {
    const std::size_t end = std::min(hosts.find(',', start), hosts.size());
    const std::string entry(hosts.substr(start, end - start));
    start = end + 1;
    const auto colon = entry.rfind(':');
    if (entry.empty() || colon == std::string::npos) continue;  // validated before: cannot be
    std::string host = entry.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    each(host, entry.substr(colon + 1), entry);
  }
}

}  // namespace

bool all_numeric(std::string_view hosts) {
  bool numeric = true;
  for_each_host(hosts, [&](const std::string& host, const std::string&, const std::string&) {
    std::array<unsigned char, sizeof(in6_addr)> buffer{};
    if (inet_pton(AF_INET, host.c_str(), buffer.data()) != 1 &&
        inet_pton(AF_INET6, host.c_str(), buffer.data()) != 1) {
      numeric = false;
    }
  });
  return numeric;
}

ResolvedHosts resolve_hosts(std::string_view hosts) {
  ResolvedHosts out;
  std::vector<std::string> seen;
  for_each_host(
      hosts, [&](const std::string& host, const std::string& port, const std::string& entry) {
        // As the C client asks: TCP, any family the machine has an address of.
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_protocol = IPPROTO_TCP;
        hints.ai_flags = AI_ADDRCONFIG;
        addrinfo* found = nullptr;
        int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
        if (rc == EAI_BADFLAGS || rc == EAI_ADDRFAMILY) {  // some resolvers refuse AI_ADDRCONFIG
          hints.ai_flags = 0;
          rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
        }
        if (rc != 0 || found == nullptr) {
          out.unresolved.push_back(entry);
          return;
        }
        for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
          if (a->ai_family != AF_INET && a->ai_family != AF_INET6) continue;
          const std::string address = numeric_address(a->ai_addr);
          if (address.empty()) continue;
          std::string listed = address;
          listed += ':';
          listed += port;
          if (std::find(seen.begin(), seen.end(), listed) != seen.end()) continue;
          seen.push_back(listed);
          if (!out.addresses.empty()) out.addresses += ',';
          out.addresses += listed;
        }
        freeaddrinfo(found);
      });
  return out;
}

}  // namespace zklock::detail
