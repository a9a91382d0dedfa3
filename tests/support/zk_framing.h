// tests/support/zk_framing.h: ZooKeeper's wire framing, as much of it as the fault proxy looks at
// (fault_proxy.h), to build and read frames in the proxy's tests and their fake servers.
//
// A frame is a 4-byte big-endian length and a payload. A client request payload starts with the
// xid; a server reply payload with a reply header - xid (int32), zxid (int64), err (int32) - and
// the first server frame of a connection, the ConnectResponse, has no header at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "support/socket_io.h"

namespace zklock::testing {

// `value` as 4 big-endian bytes, and back (from `bytes` at offset `at`).
std::string be32(std::int32_t value);
std::int32_t load_be32(const std::string& bytes, std::size_t at = 0);

// The length prefix and `payload`.
std::string frame(const std::string& payload);
// A request payload: xid, then the body.
std::string request(std::int32_t xid, const std::string& body);
// A reply payload: reply header (xid, `zxid`, err 0), then the body.
std::string reply(std::int32_t xid, const std::string& body, std::int64_t zxid = 7);

struct Reply {
  std::int32_t xid;
  std::string body;
};
// The xid and body of a reply payload (xid INT32_MIN when it is too short for a header).
Reply parse_reply(const std::string& payload);

// Reads one frame and returns its payload; nullopt at the deadline, on EOF or on an error, which
// `*status` tells apart when given.
std::optional<std::string> read_frame(int fd, SteadyTime deadline, ReadResult* status = nullptr);
// read_frame, parsed as a reply.
std::optional<Reply> read_reply(int fd, SteadyTime deadline, ReadResult* status = nullptr);

}  // namespace zklock::testing
