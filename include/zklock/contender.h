// zklock/contender.h: one node in a lock's queue, as Mutex::contenders() reports it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock {

/// How a contender's node is named; tells which library wrote it.
enum class NodeNaming {
  kProtected,  // "_c_<uuid>-lock-NNNNNNNNNN" (or "-__READ__", "-__WRIT__"): zklock, and Apache
               // Curator in protected mode (always, for its read/write lock)
  kPlain,      // the same markers without the protected prefix (Curator, unprotected)
  kKazoo,      // "<uuid hex>__lock__NNNNNNNNNN" or "<uuid hex>__rlock__NNNNNNNNNN": python kazoo
};

/// What a contender queues for: its node's marker.
enum class ContenderKind {
  kExclusive,  // "-lock-": zklock's Mutex, Curator's InterProcessMutex; also kazoo's "__lock__",
               // which kazoo's Lock and its WriteLock both write, and "-latch-": Curator's
               // LeaderLatch (and zklock's Election with ElectionOptions::curator_latch_names)
  kWrite,      // "__WRIT__": the write side of zklock's SharedMutex and Curator's read/write lock
  kRead,       // "__READ__" (zklock's SharedMutex, Curator) or "__rlock__" (kazoo's ReadLock)
};

/// True for the kinds a reader waits behind: everything but another reader.
constexpr bool excludes_readers(ContenderKind kind) noexcept {
  return kind != ContenderKind::kRead;
}

struct Contender {
  std::string name;           // node name (not path)
  std::int32_t sequence = 0;  // parsed signed sequence number
  NodeNaming naming = NodeNaming::kProtected;
  ContenderKind kind = ContenderKind::kExclusive;
  std::int64_t czxid = 0;            // 0 if the node went away before it could be read
  std::int64_t ephemeral_owner = 0;  // owning session id
  std::string data;                  // raw node data (zklock writes a small JSON object)
};

/// Parses a child name as a lock contender of any kind. Returns its sequence number, naming and
/// kind, or nullopt for names that are not lock contenders (other recipes' nodes, junk).
struct ParsedContenderName {
  std::int32_t sequence;
  NodeNaming naming;
  ContenderKind kind = ContenderKind::kExclusive;
};
std::optional<ParsedContenderName> parse_contender_name(std::string_view name) noexcept;

/// True for the node of a read/write lock: zklock's SharedMutex or Apache Curator's
/// InterProcessReadWriteLock ("...__READ__NNNNNNNNNN", "...__WRIT__NNNNNNNNNN"), or kazoo's
/// ReadLock ("<hex>__rlock__NNNNNNNNNN"; kazoo's WriteLock names its nodes as its Lock does,
/// "__lock__"). Their readers look only for their own writers' names and would enter beside a
/// Mutex, so a Mutex refuses such a path (Errc::incompatible_lock) instead of queueing on it.
bool is_read_write_lock_node(std::string_view name) noexcept;

/// Sorts names into queue order by their parsed signed sequence number (never as strings); names
/// that are not contenders are dropped. Valid only while sequence_order_reliable(names).
std::vector<std::string> queue_order(std::vector<std::string> names);

/// False when a contender's sequence number is near either end of the signed 32-bit range
/// (|n| >= 2^30). There the numbers stop ordering the queue: ZooKeeper 3.8.0 stops at 2147483647
/// and gives every later node that same number (negative numbers appear only for creates applied
/// together), other versions wrap to -2147483648. Then order by czxid (creation order) instead,
/// as zklock's Mutex does.
bool sequence_order_reliable(const std::vector<std::string>& names) noexcept;

}  // namespace zklock
