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
/// appends the sequence.
std::string lock_node_prefix(const std::string& uuid,
                             ContenderKind kind = ContenderKind::kExclusive);

/// Returns: the last segment of a node path ("/locks/x/_c_..-lock-0000000001" ->
/// "_c_..-lock-0000000001").
std::string node_name_of(const std::string& path);

/// Returns: the names among `children` that attempt `uuid` created as `kind`, lowest sequence
/// first (after a lost create reply there may be more than one).
std::vector<std::string> own_nodes(const std::vector<std::string>& children,
                                   const std::string& uuid,
                                   ContenderKind kind = ContenderKind::kExclusive);

/// The marker of a Semaphore's lease nodes (Curator's InterProcessSemaphoreV2): "_c_<uuid>-lease-".
inline constexpr std::string_view kLeaseMarker = "-lease-";

/// Returns: the signed sequence of a lease node's name (0 if it has none).
std::int32_t lease_sequence(std::string_view name) noexcept;

/// Returns: `names` (a Semaphore's lease nodes, "..-lease-<sequence>") in creation order.
std::vector<std::string> leases_in_order(std::vector<std::string> names);

}  // namespace zklock::detail
