// tests/support/zk_framing.cpp
#include "support/zk_framing.h"

#include <arpa/inet.h>

#include <climits>
#include <cstring>

namespace zklock::testing {

std::string be32(std::int32_t value) {
  const std::uint32_t network = htonl(static_cast<std::uint32_t>(value));
  return std::string(reinterpret_cast<const char*>(&network), 4);
}

std::int32_t load_be32(const std::string& bytes, std::size_t at) {
  std::uint32_t network = 0;
  std::memcpy(&network, bytes.data() + at, 4);
  return static_cast<std::int32_t>(ntohl(network));
}

std::string frame(const std::string& payload) {
  return be32(static_cast<std::int32_t>(payload.size())) + payload;
}

std::string request(std::int32_t xid, const std::string& body) { return be32(xid) + body; }

std::string reply(std::int32_t xid, const std::string& body, std::int64_t zxid) {
  return be32(xid) + be32(static_cast<std::int32_t>(zxid >> 32)) +
         be32(static_cast<std::int32_t>(zxid)) + be32(0) + body;
}

Reply parse_reply(const std::string& payload) {
  if (payload.size() < 16) return Reply{INT32_MIN, payload};
  return Reply{load_be32(payload), payload.substr(16)};
}

std::optional<std::string> read_frame(int fd, SteadyTime deadline, ReadResult* status) {
  std::string prefix;
  ReadResult result = recv_exact(fd, 4, &prefix, deadline);
  std::string payload;
  if (result == ReadResult::kOk) {
    result = recv_exact(fd, static_cast<std::uint32_t>(load_be32(prefix)), &payload, deadline);
  }
  if (status != nullptr) *status = result;
  if (result != ReadResult::kOk) return std::nullopt;
  return payload;
}

std::optional<Reply> read_reply(int fd, SteadyTime deadline, ReadResult* status) {
  auto payload = read_frame(fd, deadline, status);
  if (!payload) return std::nullopt;
  return parse_reply(*payload);
}

}  // namespace zklock::testing
