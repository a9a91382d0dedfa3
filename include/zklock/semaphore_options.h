// zklock/semaphore_options.h: options of a Semaphore.
#pragma once

#include <string>

namespace zklock {

struct SemaphoreOptions {
  /// Free text stored in our lease node (and in our node of the internal lock) with the host name
  /// and pid, for operators.
  std::string description;

  /// Create missing parents of the semaphore path - and the semaphore node itself, "locks" and
  /// "leases" - as CONTAINER nodes (the server deletes them when empty; the stored lease count
  /// goes with the semaphore node and is written again by the next client) instead of persistent
  /// ones.
  bool container_parents = false;
};

}  // namespace zklock
