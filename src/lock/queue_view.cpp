#include "lock/queue_view.h"

#include <iterator>

namespace zklock::detail {

void QueueView::use_generation(unsigned generation) {
  if (generation == generation_) return;
  by_sequence_.clear();
  generation_ = generation;
}

void QueueView::merge(const std::vector<ListedContender>& sorted) {
  // Every node the view holds came from a listing the server answered before this one (one
  // session's answers come in order): one this listing does not show was deleted since. So the
  // view becomes the listing - keeping what it knew of whose each node is.
  std::map<std::int32_t, Entry> listed;
  for (const ListedContender& c : sorted) {
    const auto known = by_sequence_.find(c.parsed.sequence);
    listed.emplace_hint(
        listed.end(), c.parsed.sequence,
        Entry{c, known != by_sequence_.end() ? known->second.owner : std::weak_ptr<void>()});
  }
  by_sequence_.swap(listed);
}

void QueueView::erase(std::int32_t sequence) {
  // Near either end of the range sequences may repeat (sequence_order_reliable): such a number
  // does not name one node, and the view never held one (it merges reliable listings only).
  constexpr std::int32_t kUnreliableAbove = 1 << 30;
  if (sequence >= kUnreliableAbove || sequence < -kUnreliableAbove) return;
  by_sequence_.erase(sequence);
}

std::optional<ListedContender> QueueView::nearest_below(std::int32_t sequence, bool& first) const {
  auto it = by_sequence_.lower_bound(sequence);
  if (it == by_sequence_.begin()) {
    first = true;
    return std::nullopt;
  }
  --it;
  first = it == by_sequence_.begin();
  return it->second.contender;
}

std::optional<ListedContender> QueueView::nearest_above(std::int32_t sequence) const {
  const auto it = by_sequence_.upper_bound(sequence);
  if (it == by_sequence_.end()) return std::nullopt;
  return it->second.contender;
}

std::size_t QueueView::count_below(std::int32_t sequence) const {
  return static_cast<std::size_t>(
      std::distance(by_sequence_.begin(), by_sequence_.lower_bound(sequence)));
}

void QueueView::claim(std::int32_t sequence, std::weak_ptr<void> owner) {
  if (auto it = by_sequence_.find(sequence); it != by_sequence_.end()) {
    it->second.owner = std::move(owner);
  }
}

std::shared_ptr<void> QueueView::owner_above(std::int32_t sequence) const {
  const auto it = by_sequence_.upper_bound(sequence);
  if (it == by_sequence_.end()) return nullptr;
  return it->second.owner.lock();
}

bool QueueView::owned(std::int32_t sequence) const {
  const auto it = by_sequence_.find(sequence);
  return it != by_sequence_.end() && !it->second.owner.expired();
}

}  // namespace zklock::detail
