// LeaseCore: one lease node of a Semaphore, behind zklock::Lease (internal).
//
// It lives from the moment its node is known to exist until the delete is answered (or its
// session ended). A held lease doubles as a heartbeat probe: a node deleted under us turns Lost.
// A revocable lease (SemaphoreOptions::on_revocation_requested) also keeps a data watch on its
// own node: a "__REVOKE__" written there is reported, and a deletion is seen at once.
//
// Threads: any thread calls the public members; watches and completions run on the C client's
// completion thread, session changes on the monitor, the revocation callback on the events
// thread (through the Semaphore's CallbackGate: none starts after ~Semaphore returned).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "lock/callback_gate.h"
#include "session/session_core.h"
#include "zklock/acquisition.h"
#include "zklock/lock_state.h"

namespace zklock::detail {

/// How a Semaphore's leases hear of revocation requests: `callback` empty - not revocable.
struct LeaseRevocation {
  std::function<void(const Acquisition& lease)> callback;
  std::shared_ptr<CallbackGate> gate;  // the Semaphore's; closed by ~Semaphore
  // What a lease's node says (holder_identity.h): written back over a request once it is heard.
  std::shared_ptr<const std::string> node_data;
};

class LeaseCore final : public SessionObserver, public std::enable_shared_from_this<LeaseCore> {
 public:
  using SteadyClock = std::chrono::steady_clock;

  LeaseCore(std::shared_ptr<SessionCore> session, Acquisition acquisition);
  ~LeaseCore() override;

  /// Registers with the session and as a heartbeat probe (needs shared_from_this); with a
  /// revocation callback, watches its own node's data for requests.
  void attach(LeaseRevocation revocation = {});
  /// Deletes the node (once), retrying connection losses in the background while its session
  /// lives. Afterwards state() is NotHeld.
  void release() noexcept;
  /// As release(), then runs `released` on the session's monitor thread (never inline) once the
  /// delete was answered, the session ended, or the connection is down (we never wait for a
  /// reconnect: the delete is sent again then, and the node goes with the session if it comes to
  /// that).
  void release_then(std::function<void()> released) noexcept;

  LockState state() const noexcept;
  bool wait_lost_until(std::optional<SteadyClock::time_point> deadline) const;
  const Acquisition& acquisition() const noexcept { return acquisition_; }
  const std::shared_ptr<SessionCore>& session() const noexcept { return session_; }
  /// True once the node was seen missing (a watch or a heartbeat probe).
  bool deleted() const noexcept { return deleted_.load(); }
  /// Effects: from now on this lease is a hold counted in the session's figures (its end:
  ///   released or lost; timed from the Acquisition's acquired_at).
  void count_hold();

  void on_session_change() override;
  std::size_t nodes_on_server() const override;

 private:
  void delete_node(int attempt);
  void deleted_done();
  // Hands release_then()'s callback, if any, to the monitor thread.
  void fire_released();
  void on_missing();
  // The data watch on our node (revocable leases): set, and its event.
  void watch_own_node();
  void on_own_node_event(WatchEventType type);
  // With mutex_ held: counts the hold's end, once.
  void end_hold_locked();

  const std::shared_ptr<SessionCore> session_;
  const Acquisition acquisition_;
  std::atomic<bool> deleted_{false};

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool released_ = false;
  bool delete_done_ = false;
  bool hold_open_ = false;  // count_hold() was called and the end is not counted yet
  SessionCore::ProbeId probe_ = 0;
  std::function<void()> on_released_;  // release_then()'s, until it runs
  LeaseRevocation revocation_;
  std::uint64_t own_watch_ = 0;  // the data watch on our node (0: none)
};

}  // namespace zklock::detail
