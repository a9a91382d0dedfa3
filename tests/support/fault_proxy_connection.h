// tests/support/fault_proxy_connection.h: the parts of one proxied connection (internal to
// fault_proxy.cpp): its two byte streams, the reply framer, and the socket helpers they use.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

namespace zklock::testing::fault_proxy_internal {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = size_t{64} * 1024;
// Bytes queued in one direction beyond which the source is no longer read (back-pressure).
constexpr size_t kMaxQueued = size_t{4} * 1024 * 1024;
// Bytes read from one socket per poll() wake-up, so one busy connection cannot starve others.
constexpr size_t kMaxReadPerWake = size_t{1024} * 1024;
// A length prefix above this (or negative as int32) means the stream is not ZooKeeper framing;
// the connection is then passed through unparsed. ZooKeeper's own limit (jute.maxbuffer) is ~1 MiB.
constexpr uint32_t kMaxFrame = 64 * 1024 * 1024;
constexpr size_t kLengthPrefix = 4;
constexpr size_t kReplyHeader = 16;  // xid int32, zxid int64, err int32

enum class Side { kClient, kServer };

// A piece of stream read at once, forwarded from `off` on once `due` has come.
struct Chunk {
  std::string data;
  size_t off = 0;
  Clock::time_point due;
};

// One direction of a connection: what was read from its source and not yet written to its
// destination, plus the EOF state.
struct Direction {
  std::deque<Chunk> queue;
  size_t queued = 0;     // bytes in queue not yet written
  bool src_eof = false;  // the source gave EOF (or failed): read no more
  bool shut = false;     // EOF passed on: shutdown(destination, SHUT_WR) done

  void push(std::string data, Clock::time_point due) {
    if (data.empty()) return;
    queued += data.size();
    queue.push_back(Chunk{std::move(data), 0, due});
  }
  void clear() {
    queue.clear();
    queued = 0;
  }
};

// What happens to the bytes of the server->client frame being read.
enum class FrameFate {
  kStream,   // forwarded as they come (unless blackholed)
  kHold,     // collected until complete, then dropped or forwarded (a drop is armed)
  kDiscard,  // thrown away to the frame's end (was held when its connection got blackholed)
};

// Splits the server->client byte stream into frames as it is read.
struct Framer {
  bool broken = false;  // not ZooKeeper framing: pass everything through unparsed
  uint64_t frames = 0;  // complete frames so far
  char prefix[kLengthPrefix] = {};
  size_t prefix_have = 0;     // bytes of the current frame's length prefix read so far
  uint32_t payload_left = 0;  // payload bytes of the current frame still to come
  FrameFate fate = FrameFate::kStream;
  std::string held;  // prefix + payload so far of a kHold frame
};

struct Conn {
  int id = 0;
  int client_fd = -1;
  int server_fd = -1;
  bool connecting = false;     // non-blocking connect to the server in progress
  bool own_blackhole = false;  // blackhole_connection()
  bool damaged = false;        // lost bytes to a blackhole since the last heal
  bool client_failed = false;  // error on the client socket; client_fd is closed
  bool server_failed = false;  // error or failed connect on the server socket; server_fd is closed
  bool reset_when_flushed = false;  // a reply was dropped with reset_after: reset once down drains
  uint64_t drop_generation = 0;     // which drop request reset_when_flushed stems from
  Direction up;                     // client -> server
  Direction down;                   // server -> client
  Framer framer;

  // Closes `side` with a reset and gives up what was queued for or from it.
  void fail_side(Side side);
  // Completes (or fails) the non-blocking connect to the server.
  void finish_connect();
  // Writes what is due of `d` to `dst_side`, as far as the socket takes it.
  void flush(Direction& d, Side dst_side);
};

// Which fd a pollfd entry stands for.
struct PollSlot {
  int conn_id;
  Side side;
};

[[noreturn]] void throw_errno(const char* what);
void close_fd(int& fd);
// Close with SO_LINGER {1, 0}: the kernel drops unsent data and sends an RST.
void reset_fd(int& fd);

// What a failed recv()/send() on a non-blocking socket calls for: try again at once (EINTR),
// wait for poll() (EAGAIN), or treat the socket as broken.
enum class IoRetry { kNow, kAfterPoll, kNever };
IoRetry after_io_error(int error);

void set_nodelay(int fd);
uint32_t load_be32(const char* p);

}  // namespace zklock::testing::fault_proxy_internal
