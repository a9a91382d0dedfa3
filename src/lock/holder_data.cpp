// What a contender's node says about its holder (holder_identity.h): the data written at create,
// the time it became the holder (MutexOptions::stamp_held_since), a value an Election's leader
// proclaimed - and the same data put back after a revocation request overwrote it. Every
// MutexCore function here runs with mutex_ held, except proclaimed_data(), which takes it.
#include <chrono>

#include "lock/holder_identity.h"
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"
#include "zklock/errors.h"

namespace zklock::detail {

std::string MutexCore::node_data_locked(const AttemptPtr& a) const {
  if (a->held_since_ms == 0 && !a->proclaimed) return node_data_;
  return holder_identity(a->proclaimed ? *a->proclaimed : options_.description,
                         static_cast<bool>(options_.on_revocation_requested),
                         a->held_since_ms != 0 ? std::optional(a->held_since_ms) : std::nullopt);
}

void MutexCore::stamp_held_since_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) return;
  a->held_since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  // Only over the data written at create (version 0): a revocation request written meanwhile is
  // left for our watch to hear (its restore writes the stamp), and a proclaimed value has it.
  // Nothing waits for the answer: a node gone, or a connection lost, leaves it unstamped.
  c->set(a->node_path, node_data_locked(a), 0, [](OpResult&&) {});
}

void MutexCore::restore_node_data_locked(const AttemptPtr& a, std::int32_t version) {
  // A latch-named node may have Curator's LeaderLatch behind it, which waits for its deletion
  // only: a write would use up its watch. The request stays, as a Curator holder leaves it.
  if (latch_names_) return;
  auto c = connection_for_locked(a);
  if (!c || a->node_path.empty()) return;
  // Only over the request we read (its version): whatever was written after it stays.
  c->set(a->node_path, node_data_locked(a), version, [](OpResult&&) {});
}

std::string MutexCore::proclaimed_data(const std::string& node_path, const std::string& value) {
  std::lock_guard lock(mutex_);
  for (const auto& a : attempts_) {
    if (a->phase == Attempt::Phase::kHeld && a->node_path == node_path) {
      a->proclaimed = std::make_unique<std::string>(value);
      return node_data_locked(a);
    }
  }
  throw LockLostError(context() + ": not holding " + node_path);
}

}  // namespace zklock::detail
