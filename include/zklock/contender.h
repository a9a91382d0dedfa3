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
  kProtected,  // "_c_<uuid>-lock-NNNNNNNNNN": zklock and Apache Curator (protected mode)
  kPlain,      // "...-lock-NNNNNNNNNN" without the protected prefix (Curator, unprotected)
  kKazoo,      // "<uuid hex>__lock__NNNNNNNNNN": python kazoo's Lock
};

struct Contender {
  std::string name;                  // node name (not path)
  std::int32_t sequence = 0;         // parsed signed sequence number
  NodeNaming naming = NodeNaming::kProtected;
  std::int64_t czxid = 0;            // 0 if the node went away before it could be read
  std::int64_t ephemeral_owner = 0;  // owning session id
  std::string data;                  // raw node data (zklock writes a small JSON object)
};

/// Parses a child name as a lock contender. Returns its sequence number and naming, or nullopt
/// for names that are not lock contenders (other recipes' nodes, junk).
struct ParsedContenderName {
  std::int32_t sequence;
  NodeNaming naming;
};
std::optional<ParsedContenderName> parse_contender_name(std::string_view name) noexcept;

/// Sorts names into queue order: by sequence number compared as ZooKeeper assigns them (signed
/// 32-bit, and across the 2^31 wrap: when both very large positive and very negative numbers are
/// present, the positive ones are older). Names that are not contenders are dropped.
std::vector<std::string> queue_order(std::vector<std::string> names);

}  // namespace zklock
