#include "revoke_command.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "contender_view.h"
#include "exit_codes.h"
#include "zklock/mutex.h"
#include "zklock/revocation.h"

namespace zklock::cli {
namespace {

// The contenders to ask: the one named, or the holders.
std::vector<Contender> targets(const std::vector<Contender>& contenders, const std::string& node) {
  std::vector<Contender> out;
  const std::vector<bool> holding = holders(contenders);
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    if (node.empty() ? holding[i] : contenders[i].name == node) out.push_back(contenders[i]);
  }
  return out;
}

// A Semaphore's path (its leases under PATH/leases, its internal lock under PATH/locks): the
// lease nodes to ask - the one named, or every lease holder.
std::optional<std::vector<Contender>> lease_targets(Session& session, const std::string& path,
                                                    const std::string& node) {
  const auto children = session.children(path);
  if (!children || std::find(children->begin(), children->end(), "leases") == children->end()) {
    return std::nullopt;
  }
  std::vector<Contender> out;
  for (const std::string& name :
       session.children(path + "/leases").value_or(std::vector<std::string>{})) {
    if (!node.empty() && name != node) continue;
    Contender c;
    c.name = name;
    if (const auto data = session.get(path + "/leases/" + name)) c.data = data->data;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

int run_revoke(const RevokeOptions& revoke, const CommonOptions& common, const Console& console) {
  const auto session = open_session(common, console);
  std::string nodes_path = revoke.path;
  std::vector<Contender> asked;
  if (auto leases = lease_targets(*session, revoke.path, revoke.node)) {
    nodes_path += "/leases";
    asked = std::move(*leases);
  } else {
    // Only for contenders(): this Mutex is never locked, so it never creates a node.
    const Mutex view(*session, revoke.path);
    asked = targets(view.contenders(), revoke.node);
  }
  if (asked.empty()) {
    console.error(revoke.node.empty() ? "nobody holds " + revoke.path
                                      : "no contender " + revoke.node + " on " + revoke.path);
    return exit_code::kNoHolder;
  }
  int code = exit_code::kOk;
  for (const Contender& c : asked) {
    switch (request_revocation(*session, nodes_path + "/" + c.name)) {
      case RevocationRequest::kAsked:
        std::cout << "asked " << c.name << " to let go" << std::endl;
        break;
      case RevocationRequest::kGone:
        console.error(c.name + ": gone before it could be asked");
        break;
      case RevocationRequest::kNotRevocable:
        console.error(c.name +
                      ": its holder does not accept revocation (a zklock holder started "
                      "without --revocable); not asked");
        code = exit_code::kNoPermission;
        break;
    }
  }
  return code;
}

}  // namespace zklock::cli
