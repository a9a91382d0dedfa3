#include "contender_view.h"

#include <algorithm>
#include <array>
#include <utility>

namespace zklock::cli {

using nlohmann::json;

const char* kind_name(ContenderKind kind) {
  switch (kind) {
    case ContenderKind::kExclusive:
      return "exclusive";
    case ContenderKind::kWrite:
      return "write";
    case ContenderKind::kRead:
      return "read";
  }
  return "?";
}

const char* naming_name(NodeNaming naming) {
  static constexpr std::array<std::pair<NodeNaming, const char*>, 3> kNames = {{
      {NodeNaming::kProtected, "protected"},
      {NodeNaming::kPlain, "plain"},
      {NodeNaming::kKazoo, "kazoo"},
  }};
  const auto* entry = std::find_if(kNames.begin(), kNames.end(),
                                   [naming](const auto& named) { return named.first == naming; });
  return entry != kNames.end() ? entry->second : "?";
}

std::vector<bool> holders(const std::vector<Contender>& contenders) {
  std::vector<bool> out(contenders.size(), false);
  bool readers_only = true;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const bool reader = contenders[i].kind == ContenderKind::kRead;
    out[i] = i == 0 || (reader && readers_only);
    readers_only = readers_only && reader;
  }
  return out;
}

Identity identity_of(const std::string& data) {
  Identity identity;
  const json parsed = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || parsed.value("lib", json()) != "zklock") return identity;
  identity.ours = true;
  if (auto it = parsed.find("host"); it != parsed.end() && it->is_string()) identity.host = *it;
  if (auto it = parsed.find("pid"); it != parsed.end() && it->is_number_integer())
    identity.pid = *it;
  if (auto it = parsed.find("revocable"); it != parsed.end() && it->is_boolean()) {
    identity.revocable = *it;
  }
  if (auto it = parsed.find("description"); it != parsed.end() && it->is_string()) {
    identity.description = *it;
  }
  return identity;
}

std::string quoted(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace zklock::cli
