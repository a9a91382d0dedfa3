#include "status_command.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>

#include "contender_view.h"
#include "exit_codes.h"
#include "zklock/mutex.h"

namespace zklock::cli {
namespace {

using nlohmann::json;

void print_json(const std::string& path, const std::vector<Contender>& contenders, bool encrypted) {
  json list = json::array();
  const std::vector<bool> holding = holders(contenders);
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    const Identity identity = identity_of(c.data);
    list.push_back({
        {"position", i},
        {"name", c.name},
        {"sequence", c.sequence},
        {"czxid", c.czxid},
        {"session_id", session_id_hex(c.ephemeral_owner)},
        {"naming", naming_name(c.naming)},
        {"kind", kind_name(c.kind)},
        {"holder", static_cast<bool>(holding[i])},
        {"host", identity.host},
        {"pid", identity.pid},
        {"held_since", identity.held_since},
        {"description", identity.description},
        {"data", c.data},
    });
  }
  const json document = {{"path", path}, {"encrypted", encrypted}, {"contenders", std::move(list)}};
  std::cout << document.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

// The first line ends with whether this session's connection is encrypted (TLS).
void print_text(const std::string& path, const std::vector<Contender>& contenders, bool encrypted) {
  const char* connection = encrypted ? "; connection: TLS" : "; connection: not encrypted";
  if (contenders.empty()) {
    std::cout << path << ": no contenders (the lock is free)" << connection << '\n';
    return;
  }
  const std::vector<bool> holding = holders(contenders);
  const auto holder_count = std::count(holding.begin(), holding.end(), true);
  std::cout << path << ": " << contenders.size()
            << (contenders.size() == 1 ? " contender" : " contenders")
            << (holder_count > 1 ? ", holders first" : ", holder first") << connection << '\n';
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    const Identity identity = identity_of(c.data);
    std::cout << i << ' ' << (holding[i] ? "holder" : "waiting") << ' ' << c.name
              << " kind=" << kind_name(c.kind) << " sequence=" << c.sequence << " czxid=" << c.czxid
              << " session=" << session_id_hex(c.ephemeral_owner)
              << " naming=" << naming_name(c.naming);
    if (identity.ours) {
      if (identity.host.is_string()) std::cout << " host=" << identity.host.get<std::string>();
      if (!identity.pid.is_null()) std::cout << " pid=" << identity.pid.dump();
      if (!identity.held_since.is_null()) {
        std::cout << " held_since="
                  << utc_time(std::chrono::system_clock::time_point(
                         std::chrono::milliseconds(identity.held_since.get<std::int64_t>())));
      }
      if (identity.description.is_string()) {
        std::cout << " description=" << quoted(identity.description.get<std::string>());
      }
    } else {
      std::cout << " data=" << quoted(c.data);
    }
    std::cout << '\n';
  }
}

}  // namespace

int run_status(const StatusOptions& status, const CommonOptions& common, const Console& console) {
  const auto session = open_session(common, console);
  // Only for contenders(): this Mutex is never locked, so it never creates a node.
  const Mutex mutex(*session, status.path);
  const std::vector<Contender> contenders = mutex.contenders();
  if (status.json) {
    print_json(status.path, contenders, session->encrypted());
  } else {
    print_text(status.path, contenders, session->encrypted());
  }
  std::cout.flush();
  return exit_code::kOk;
}

}  // namespace zklock::cli
