// zklock/mutex_options.h: options of a Mutex.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <system_error>

#include "zklock/acquisition.h"
#include "zklock/lock_state.h"

namespace zklock {

struct MutexOptions {
  /// Free text stored in our lock node with the host name and pid (shown by `zklock status`).
  std::string description;

  /// Create missing parents of the lock path as CONTAINER nodes (the server deletes them when
  /// empty) instead of persistent ones. A re-created parent restarts sequence numbers: use the
  /// czxid-based FencingToken, not the sequence, with containers.
  bool container_parents = false;

  /// Called when a held lock changes state (Held -> Suspended -> Held | Lost), on the Session's
  /// event thread, after state() already reports the new state. Must not block for long. Not
  /// called for an acquisition the application already released (it saw state() == Lost first
  /// and called unlock()): poll state() or use this callback, either tells in time.
  std::function<void(LockState state, const Acquisition& acquisition)> on_state_change;

  /// Called (event thread) when the delete of a released node failed for a reason other than a
  /// lost session (e.g. not authorized); the node stays until the session ends. Connection losses
  /// are retried in the background and not reported.
  std::function<void(const std::string& node_path, std::error_code error)> on_release_error;

  /// Called (event thread) while lock() waits, each time the number of contenders ahead of us
  /// changes (after each listing). For progress displays.
  std::function<void(std::size_t ahead)> on_queue_position;
};

}  // namespace zklock
