// zklock/mutex_options.h: options of a Mutex.
#pragma once

#include <chrono>
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

  /// Lock-delay (Chubby's, for resources that cannot check a FencingToken): when the holder
  /// before us ended without a clean release - its session expired, its process was killed or
  /// frozen past the session timeout, an operator deleted its node - the lock is not handed to us
  /// until this long after we saw it end, so that a holder that is still acting (a paused process
  /// that has not yet heard it lost the lock) has that long to notice and stop. Zero: none.
  ///
  /// A clean release (unlock(), a Guard or Hold going out of scope, the Mutex destroyed while
  /// holding) writes a mark on the lock path in the same multi as the delete of its node: the
  /// next holder takes over at once, at no extra round trip. A contender that cannot tell how
  /// the previous holder ended waits the delay - safe, not fast:
  /// - a holder without lock_delay, or a Curator or kazoo holder (their releases carry no mark);
  /// - a contender that finds the lock free while the path shows a node gone since the last
  ///   clean release (ZooKeeper keeps no record of who that was);
  /// - a waiter that gave up at the moment it reached the head of the line.
  /// try_lock() waits a due delay out within the session timeout its one attempt is allowed, and
  /// try_lock_for() within its deadline (a try that gave up would leave the next one to wait it
  /// again); a deadline that ends during the delay times out as usual, our node deleted. The lock
  /// path's data holds the mark: nothing else may write it. Mutex only: a SharedMutex throws
  /// InvalidArgumentError, as does a negative delay.
  std::chrono::milliseconds lock_delay{0};

  /// Revocation (Apache Curator's convention): another client asks the holder to let go by setting
  /// its lock node's data to "__REVOKE__" (zklock::request_revocation(), `zklock revoke`, Curator's
  /// Revoker.attemptRevoke). With this set, the holder is revocable - its node data says
  /// "revocable":true, for `zklock revoke` to read - and each request is reported here (event
  /// thread) with the acquisition asked for: the application decides whether to unlock(). A
  /// request that reaches a contender still waiting is reported when it acquires. Unset: the node
  /// data says "revocable":false and requests are ignored. Cost: none for a contender that waited
  /// (the watch on its own node is there already); one read with a watch after an acquisition
  /// that was first at once, which otherwise has no watch on its node.
  std::function<void(const Acquisition& acquisition)> on_revocation_requested;

  /// Stamp our node with the moment we became the holder ("held_since" in its data: milliseconds
  /// since the Unix epoch, by this host's clock), so that others can tell since when the lock is
  /// held: `zklock status`, and Election::leader() and `zklock leader` for a leader (Election
  /// sets it). Cost: one write of our node's data after each acquisition - after it is held, not
  /// on the way to it, and nothing waits for it; a write that fails (the connection dropped, the
  /// node is gone) leaves the node unstamped. Off: no write per acquisition. The write fires the
  /// data watch of the contender behind us: zklock's, Curator's InterProcessMutex and kazoo's
  /// look again; Curator's LeaderLatch would not (it waits for a deletion only): see
  /// ElectionOptions::curator_latch_names.
  bool stamp_held_since = false;

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
