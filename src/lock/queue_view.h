// QueueView: what one MutexCore knows of the queue on its lock path, so that a waiter whose
// predecessor went can find whom to wait behind next without listing the whole queue again
// (internal).
//
// The guarantee it keeps - the only one a waiter relies on: every contender that exists and was
// created before the last listing merged was answered is in the view. It holds because
//   - contenders are learnt only from listings, which show every node that existed when the
//     server answered them; a listing replaces what the view knew (every node in the view was
//     listed before it: one it does not show was deleted since);
//   - between listings, contenders are forgotten only on proof of deletion: a deletion event, a
//     NoNode answer, our own delete answered.
// A waiter's node was created before the listing that placed it, and so was every node ahead of
// it (sequence numbers come from the parent's counter): all of them that exist are in the view.
// The view may hold nodes that are already gone (a deletion nobody here saw): a waiter that picks
// one finds it gone with the same getData that would have set its watch. Valid only while
// sequences order the queue (sequence_order_reliable) and within one session generation.
//
// One listing feeds every waiter of the core: parsed once, merged once (O(n)); a waiter then
// finds its predecessor in O(log n). Guarded by MutexCore::mutex_.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lock/lock_node_name.h"

namespace zklock::detail {

class QueueView {
 public:
  /// Effects: forgets everything unless the view is of `generation` already; then it is.
  void use_generation(unsigned generation);
  unsigned generation() const noexcept { return generation_; }

  /// Effects: takes in a listing of the lock path (sorted by sequence, every sequence reliable),
  /// answered after every listing merged before: the view becomes what it shows (a node it does
  /// not show was deleted), each node keeping its owner.
  void merge(const std::vector<ListedContender>& sorted);
  /// Effects: forgets the contender with `sequence` (it is known to be deleted).
  void erase(std::int32_t sequence);
  /// Effects: forgets everything (nobody of this core is waiting any more).
  void clear() noexcept { by_sequence_.clear(); }

  /// Returns: the contender nearest below `sequence`, or nullopt if nothing is below it; `first`
  ///   is set to whether nothing is below that one. (Our own nodes that could not be deleted are
  ///   left out by the caller: they go with our session and are in nobody's way.)
  std::optional<ListedContender> nearest_below(std::int32_t sequence, bool& first) const;
  /// Returns: the contender nearest above `sequence`, or nullopt.
  std::optional<ListedContender> nearest_above(std::int32_t sequence) const;
  /// Returns: how many contenders are below `sequence` - O(n), for
  ///   MutexOptions::on_queue_position only.
  std::size_t count_below(std::int32_t sequence) const;
  std::size_t size() const noexcept { return by_sequence_.size(); }

  /// Effects: marks the contender with `sequence` (if known) as the node of `owner`, one of this
  /// core's attempts, so that the attempt ahead of it can find it (owner_above).
  void claim(std::int32_t sequence, std::weak_ptr<void> owner);
  /// Returns: the owner of the contender nearest above `sequence`, or null if it has none (not
  ///   ours, or gone).
  std::shared_ptr<void> owner_above(std::int32_t sequence) const;
  /// Returns: true if the contender with `sequence` is one of this core's attempts' nodes (whose
  ///   deletion the core sees: never a node already gone).
  bool owned(std::int32_t sequence) const;

 private:
  struct Entry {
    ListedContender contender;
    std::weak_ptr<void> owner;
  };
  unsigned generation_ = 0;
  std::map<std::int32_t, Entry> by_sequence_;
};

}  // namespace zklock::detail
