#include "lock_node_name.h"

#include <algorithm>

#include "zklock/contender.h"

namespace zklock::detail {

std::string lock_node_prefix(const std::string& uuid, ContenderKind kind) {
  switch (kind) {
    case ContenderKind::kRead:
      return "_c_" + uuid + "-__READ__";
    case ContenderKind::kWrite:
      return "_c_" + uuid + "-__WRIT__";
    case ContenderKind::kExclusive:
      break;
  }
  return "_c_" + uuid + "-lock-";
}

std::string node_name_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::vector<std::string> own_nodes(const std::vector<std::string>& children,
                                   const std::string& uuid, ContenderKind kind) {
  const std::string prefix = lock_node_prefix(uuid, kind);
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

std::vector<std::string> leases_in_order(std::vector<std::string> names) {
  // By the sequence number ZooKeeper appended (the last ten characters), creation order.
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    const auto tail = [](const std::string& s) {
      return s.size() >= 10 ? s.substr(s.size() - 10) : s;
    };
    return tail(a) < tail(b);
  });
  return names;
}

}  // namespace zklock::detail
