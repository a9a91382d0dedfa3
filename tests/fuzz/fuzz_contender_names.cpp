// Fuzz target: the parser of lock child names and the queue order built on it
// (include/zklock/contender.h). Child names come from the server, and anyone who may write under
// a lock path chooses them: they are untrusted. The input is a list of names, one per line.
//
// Checked against a reference written from the naming rules: a contender's name ends with a
// marker ("__lock__" for kazoo, else "-lock-", or "-latch-" for Curator's LeaderLatch) and the
// sequence number exactly as ZooKeeper writes it, printf("%010d", n) of a signed 32-bit n; kazoo's
// marker is tried first; "-lock-" names starting with "_c_" are Curator's protected form (zklock's
// too).
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "zklock/contender.h"

namespace {

using zklock::NodeNaming;
using zklock::ParsedContenderName;
using zklock::fuzz::check;

// The number `text` is, if ZooKeeper could have written it: printf("%010d", n) == text.
std::optional<std::int32_t> reference_sequence(std::string_view text) {
  if (text.size() != 10 && text.size() != 11) return std::nullopt;
  const bool negative = text.front() == '-';
  std::int64_t value = 0;
  for (const char c : text.substr(negative ? 1 : 0)) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (negative) value = -value;
  if (value < INT32_MIN || value > INT32_MAX) return std::nullopt;
  char canonical[16];
  std::snprintf(canonical, sizeof canonical, "%010d", static_cast<int>(value));
  if (text != canonical) return std::nullopt;
  return static_cast<std::int32_t>(value);
}

// The name's sequence after `marker`, if it ends with marker + a ZooKeeper sequence.
std::optional<std::int32_t> reference_after(std::string_view name, std::string_view marker) {
  for (const std::size_t digits : {10, 11}) {
    if (name.size() < marker.size() + digits) continue;
    const std::size_t at = name.size() - digits - marker.size();
    if (name.substr(at, marker.size()) != marker) continue;
    if (auto n = reference_sequence(name.substr(at + marker.size()))) return n;
  }
  return std::nullopt;
}

std::optional<ParsedContenderName> reference_parse(std::string_view name) {
  using zklock::ContenderKind;
  const NodeNaming curator =
      name.substr(0, 3) == "_c_" ? NodeNaming::kProtected : NodeNaming::kPlain;
  if (auto n = reference_after(name, "__lock__"))
    return ParsedContenderName{*n, NodeNaming::kKazoo, ContenderKind::kExclusive};
  if (auto n = reference_after(name, "__rlock__"))
    return ParsedContenderName{*n, NodeNaming::kKazoo, ContenderKind::kRead};
  if (auto n = reference_after(name, "__READ__"))
    return ParsedContenderName{*n, curator, ContenderKind::kRead};
  if (auto n = reference_after(name, "__WRIT__"))
    return ParsedContenderName{*n, curator, ContenderKind::kWrite};
  if (auto n = reference_after(name, "-lock-"))
    return ParsedContenderName{*n, curator, ContenderKind::kExclusive};
  if (auto n = reference_after(name, "-latch-"))  // Curator's LeaderLatch
    return ParsedContenderName{*n, curator, ContenderKind::kExclusive};
  return std::nullopt;
}

std::vector<std::string> split_lines(std::string_view input) {
  std::vector<std::string> names;
  while (true) {
    const std::size_t newline = input.find('\n');
    names.emplace_back(input.substr(0, newline));
    if (newline == std::string_view::npos) return names;
    input = input.substr(newline + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> names = split_lines(input);

  struct Entry {
    std::int32_t sequence;
    std::string name;
  };
  std::vector<Entry> expected;  // the contenders among `names`, in the reference queue order
  bool reliable = true;
  for (const auto& name : names) {
    const auto parsed = zklock::parse_contender_name(name);
    const auto reference = reference_parse(name);
    check(parsed.has_value() == reference.has_value(),
          "parse_contender_name accepts exactly marker + printf(\"%010d\") names", name);
    if (!parsed) continue;
    check(parsed->sequence == reference->sequence && parsed->naming == reference->naming &&
              parsed->kind == reference->kind,
          "parse_contender_name returns the name's sequence number, naming and kind", name);
    expected.push_back({parsed->sequence, name});
    if (parsed->sequence >= (1 << 30) || parsed->sequence < -(1 << 30)) reliable = false;
  }
  std::sort(expected.begin(), expected.end(), [](const Entry& a, const Entry& b) {
    return a.sequence != b.sequence ? a.sequence < b.sequence : a.name < b.name;
  });
  std::vector<std::string> expected_order;
  for (auto& e : expected) expected_order.push_back(std::move(e.name));

  const std::vector<std::string> order = zklock::queue_order(names);
  check(order == expected_order,
        "queue_order keeps the contenders only, by sequence number, ties by name", input);
  check(zklock::queue_order(order) == order, "queue_order of a queue order is itself", input);
  check(zklock::sequence_order_reliable(names) == reliable,
        "sequence_order_reliable is false exactly when a contender has |n| >= 2^30", input);
  return 0;
}
