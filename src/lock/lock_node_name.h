// The names of zklock's lock nodes (internal): Apache Curator's "protected" form,
// "_c_<uuid>-lock-<sequence>", so that Curator's InterProcessMutex queues with us on one path; and
// "_c_<uuid>-__READ__<sequence>" / "_c_<uuid>-__WRIT__<sequence>" for a SharedMutex, the names of
// Curator's InterProcessReadWriteLock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zklock/contender.h"

namespace zklock::detail {

/// Returns: the name a lock node of attempt `uuid` queueing as `kind` is created with; ZooKeeper
/// appends the sequence. `latch`: an exclusive node named as Curator's LeaderLatch names its
/// nodes ("_c_<uuid>-latch-"), for an Election that shares its path with LeaderLatch.
std::string lock_node_prefix(const std::string& uuid,
                             ContenderKind kind = ContenderKind::kExclusive, bool latch = false);

/// Returns: the last segment of a node path ("/locks/x/_c_..-lock-0000000001" ->
/// "_c_..-lock-0000000001").
std::string node_name_of(const std::string& path);

/// Returns: the names among `children` that attempt `uuid` created as `kind`, lowest sequence
/// first (after a lost create reply there may be more than one).
std::vector<std::string> own_nodes(const std::vector<std::string>& children,
                                   const std::string& uuid,
                                   ContenderKind kind = ContenderKind::kExclusive,
                                   bool latch = false);

/// A child of a lock path that is a contender, parsed once per listing.
struct ListedContender {
  std::string name;
  ParsedContenderName parsed;
};

/// Returns: the contenders among `children`, parsed (other names dropped), in listing order.
std::vector<ListedContender> parse_listing(std::vector<std::string> children);
/// Sorts `queue` by sequence (signed), as queue_order() does with names.
void sort_by_sequence(std::vector<ListedContender>& queue);
/// False when a sequence lies near either end of the signed range (sequence_order_reliable()).
bool sequence_order_reliable(const std::vector<ListedContender>& queue) noexcept;
/// Returns: the contender of `sorted` (sort_by_sequence, sequences reliable) with `sequence` and
/// `name`, found in O(log n); sorted.end() if there is none.
std::vector<ListedContender>::const_iterator find_in_sorted(
    const std::vector<ListedContender>& sorted, std::int32_t sequence, const std::string& name);

/// The marker of a Semaphore's lease nodes (Curator's InterProcessSemaphoreV2): "_c_<uuid>-lease-".
inline constexpr std::string_view kLeaseMarker = "-lease-";

/// Returns: the signed sequence of a lease node's name (0 if it has none).
std::int32_t lease_sequence(std::string_view name) noexcept;

/// Returns: `names` (a Semaphore's lease nodes, "..-lease-<sequence>") in creation order.
std::vector<std::string> leases_in_order(std::vector<std::string> names);

}  // namespace zklock::detail
