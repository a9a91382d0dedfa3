#include "lock/lock_node_name.h"

#include <algorithm>
#include <charconv>

#include "zklock/contender.h"

namespace zklock::detail {

std::string lock_node_prefix(const std::string& uuid, ContenderKind kind, bool latch) {
  switch (kind) {
    case ContenderKind::kRead:
      return "_c_" + uuid + "-__READ__";
    case ContenderKind::kWrite:
      return "_c_" + uuid + "-__WRIT__";
    case ContenderKind::kExclusive:
      break;
  }
  return "_c_" + uuid + (latch ? "-latch-" : "-lock-");
}

std::string node_name_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::vector<std::string> own_nodes(const std::vector<std::string>& children,
                                   const std::string& uuid, ContenderKind kind, bool latch) {
  const std::string prefix = lock_node_prefix(uuid, kind, latch);
  std::vector<std::string> ours;
  for (const auto& child : children) {
    if (child.size() > prefix.size() && child.compare(0, prefix.size(), prefix) == 0 &&
        parse_contender_name(child)) {
      ours.push_back(child);
    }
  }
  std::sort(ours.begin(), ours.end(), [](const std::string& a, const std::string& b) {
    return parse_contender_name(a)->sequence < parse_contender_name(b)->sequence;
  });
  return ours;
}

std::vector<ListedContender> parse_listing(std::vector<std::string> children) {
  std::vector<ListedContender> out;
  out.reserve(children.size());
  for (auto& name : children) {
    if (auto parsed = parse_contender_name(name)) out.push_back({std::move(name), *parsed});
  }
  return out;
}

void sort_by_sequence(std::vector<ListedContender>& queue) {
  std::sort(queue.begin(), queue.end(), [](const ListedContender& a, const ListedContender& b) {
    return a.parsed.sequence != b.parsed.sequence ? a.parsed.sequence < b.parsed.sequence
                                                  : a.name < b.name;
  });
}

bool sequence_order_reliable(const std::vector<ListedContender>& queue) noexcept {
  constexpr std::int32_t kUnreliableAbove = 1 << 30;  // as zklock::sequence_order_reliable
  return std::none_of(queue.begin(), queue.end(), [](const ListedContender& c) {
    return c.parsed.sequence >= kUnreliableAbove || c.parsed.sequence < -kUnreliableAbove;
  });
}

std::vector<ListedContender>::const_iterator find_in_sorted(
    const std::vector<ListedContender>& sorted, std::int32_t sequence, const std::string& name) {
  const auto it = std::lower_bound(
      sorted.begin(), sorted.end(), sequence,
      [](const ListedContender& c, std::int32_t s) { return c.parsed.sequence < s; });
  return it != sorted.end() && it->name == name ? it : sorted.end();
}

std::int32_t lease_sequence(std::string_view name) noexcept {
  const auto at = name.rfind(kLeaseMarker);
  if (at == std::string_view::npos) return 0;
  std::int32_t seq = 0;
  const char* begin = name.data() + at + kLeaseMarker.size();
  std::from_chars(begin, name.data() + name.size(), seq);
  return seq;
}

std::vector<std::string> leases_in_order(std::vector<std::string> names) {
  // By the sequence ZooKeeper appended, as a signed number (printf's "%010d" of the parent's
  // cversion, which may be negative): creation order.
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return lease_sequence(a) < lease_sequence(b);
  });
  return names;
}

}  // namespace zklock::detail
