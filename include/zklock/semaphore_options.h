// zklock/semaphore_options.h: options of a Semaphore.
#pragma once

#include <functional>
#include <string>

#include "zklock/acquisition.h"

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

  /// Revocation (zklock::request_revocation(), `zklock revoke`): another client asks a lease's
  /// holder to let go by writing "__REVOKE__" into the lease node. With this set, the leases are
  /// revocable - their node data says "revocable":true - and each request is reported here, on
  /// the session's event thread, while the lease is held and its Semaphore exists; the
  /// application decides (typically Lease::release()). Each held lease then keeps a data watch on
  /// its own node (which also tells a deletion at once). Unset: "revocable":false, requests are
  /// ignored, no watch. Curator's semaphore has no revocation (CURATOR-650).
  std::function<void(const Acquisition& lease)> on_revocation_requested;
};

}  // namespace zklock
