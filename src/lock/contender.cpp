// Contender names: which children of a lock path queue for it, and in what order.
#include "zklock/contender.h"

#include <algorithm>
#include <cstdint>

namespace zklock {
namespace {

constexpr std::string_view kCuratorMarker = "-lock-";
constexpr std::string_view kCuratorLatchMarker = "-latch-";  // Curator's LeaderLatch
constexpr std::string_view kKazooMarker = "__lock__";
constexpr std::string_view kKazooReadMarker = "__rlock__";
constexpr std::string_view kReadMarker = "__READ__";   // Curator's InterProcessReadWriteLock
constexpr std::string_view kWriteMarker = "__WRIT__";  // (and zklock's SharedMutex)
constexpr std::string_view kProtectedPrefix = "_c_";
constexpr std::int32_t kUnreliableAbove = 1 << 30;

// ZooKeeper appends printf("%010d", cversion): 10 characters, or 11 for values below -999999999.
// Only what that printf can produce is a sequence: "-0969260123" or "-000000000" are not (a name
// chosen by someone else, not a contender). Decided without printf: this runs for every child of
// every listing, on the C client's completion thread.
std::optional<std::int32_t> parse_sequence(std::string_view digits) noexcept {
  const bool negative = !digits.empty() && digits.front() == '-';
  if (digits.size() != 10 && !(negative && digits.size() == 11)) return std::nullopt;
  const std::string_view body = digits.substr(negative ? 1 : 0);
  std::int64_t value = 0;
  for (const char c : body) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (negative) {
    if (value == 0) return std::nullopt;  // printf writes zero as "0000000000"
    // Eleven characters only for ten significant digits; printf pads "-5" to "-000000005".
    if (body.size() == 10 && body.front() == '0') return std::nullopt;
    value = -value;
  }
  if (value < INT32_MIN || value > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(value);
}

std::optional<ParsedContenderName> parse_after(std::string_view name, std::string_view marker,
                                               NodeNaming naming, ContenderKind kind) noexcept {
  const auto at = name.rfind(marker);
  if (at == std::string_view::npos) return std::nullopt;
  const auto seq = parse_sequence(name.substr(at + marker.size()));
  if (!seq) return std::nullopt;
  return ParsedContenderName{*seq, naming, kind};
}

NodeNaming curator_naming(std::string_view name) noexcept {
  return name.substr(0, kProtectedPrefix.size()) == kProtectedPrefix ? NodeNaming::kProtected
                                                                     : NodeNaming::kPlain;
}

// "<prefix><marker>NNNNNNNNNN", an exclusive contender in Curator's naming. A negative sequence
// follows the marker with its own '-' ("-lock--000000005"); rfind picks the marker itself only if
// the sign is not mistaken for it, so try both positions.
std::optional<ParsedContenderName> parse_curator_exclusive(std::string_view name,
                                                           std::string_view marker) noexcept {
  auto at = name.rfind(marker);
  while (at != std::string_view::npos) {
    if (auto seq = parse_sequence(name.substr(at + marker.size()))) {
      return ParsedContenderName{*seq, curator_naming(name), ContenderKind::kExclusive};
    }
    if (at == 0) break;
    at = name.rfind(marker, at - 1);
  }
  return std::nullopt;
}

}  // namespace

bool is_read_write_lock_node(std::string_view name) noexcept {
  const auto parsed = parse_contender_name(name);
  return parsed && parsed->kind != ContenderKind::kExclusive;
}

std::optional<ParsedContenderName> parse_contender_name(std::string_view name) noexcept {
  if (auto parsed = parse_after(name, kKazooMarker, NodeNaming::kKazoo, ContenderKind::kExclusive))
    return parsed;
  if (auto parsed = parse_after(name, kKazooReadMarker, NodeNaming::kKazoo, ContenderKind::kRead))
    return parsed;
  // Curator's read/write lock: "<prefix>__READ__NNNNNNNNNN" / "<prefix>__WRIT__NNNNNNNNNN".
  if (auto parsed = parse_after(name, kReadMarker, curator_naming(name), ContenderKind::kRead))
    return parsed;
  if (auto parsed = parse_after(name, kWriteMarker, curator_naming(name), ContenderKind::kWrite))
    return parsed;
  // Curator's InterProcessMutex (and LeaderSelector): "-lock-"; its LeaderLatch: "-latch-".
  if (auto parsed = parse_curator_exclusive(name, kCuratorMarker)) return parsed;
  return parse_curator_exclusive(name, kCuratorLatchMarker);
}

bool sequence_order_reliable(const std::vector<std::string>& names) noexcept {
  for (const auto& name : names) {
    if (auto parsed = parse_contender_name(name)) {
      if (parsed->sequence >= kUnreliableAbove || parsed->sequence < -kUnreliableAbove)
        return false;
    }
  }
  return true;
}

std::vector<std::string> queue_order(std::vector<std::string> names) {
  struct Entry {
    std::int32_t sequence;
    std::string name;
  };
  std::vector<Entry> entries;
  entries.reserve(names.size());
  for (auto& name : names) {
    if (auto parsed = parse_contender_name(name))
      entries.push_back({parsed->sequence, std::move(name)});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.sequence != b.sequence ? a.sequence < b.sequence : a.name < b.name;
  });
  std::vector<std::string> ordered;
  ordered.reserve(entries.size());
  for (auto& e : entries) ordered.push_back(std::move(e.name));
  return ordered;
}

}  // namespace zklock
