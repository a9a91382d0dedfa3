#include "contender_view.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
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
  if (auto it = parsed.find("held_since"); it != parsed.end() && it->is_number_integer()) {
    identity.held_since = *it;
  }
  if (auto it = parsed.find("description"); it != parsed.end() && it->is_string()) {
    identity.description = *it;
  }
  return identity;
}

std::string quoted(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string utc_time(std::chrono::system_clock::time_point at) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch());
  const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(ms).count();
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%S", &utc);
  std::array<char, 8> millis{};
  std::snprintf(millis.data(), millis.size(), ".%03dZ", static_cast<int>(ms.count() % 1000));
  return std::string(text.data()) + millis.data();
}

}  // namespace zklock::cli
