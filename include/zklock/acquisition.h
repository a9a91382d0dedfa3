// zklock/acquisition.h: what one successful lock() took.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "zklock/fencing_token.h"

namespace zklock {

struct Acquisition {
  std::string lock_path;        // the Mutex's path, e.g. "/locks/orders"
  std::string node_path;        // our node, e.g. "/locks/orders/_c_<uuid>-lock-0000000042"
  std::int32_t sequence = 0;    // the node's sequence number (42 above)
  std::int64_t czxid = 0;       // zxid of the node's create
  std::int64_t session_id = 0;  // the ZooKeeper session that owns the node
  unsigned generation = 0;      // Session::generation() when it was taken
  std::chrono::steady_clock::time_point acquired_at{};
  bool shared = false;  // a SharedMutex's read lock (readers share it); false: exclusive

  /// The token a resource checks (czxid-based; see fencing_token.h).
  FencingToken token() const noexcept { return {czxid, sequence}; }
};

}  // namespace zklock
