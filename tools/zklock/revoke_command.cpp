#include "revoke_command.h"

#include <iostream>
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

}  // namespace

int run_revoke(const RevokeOptions& revoke, const CommonOptions& common, const Console& console) {
  const auto session = open_session(common, console);
  // Only for contenders(): this Mutex is never locked, so it never creates a node.
  const Mutex view(*session, revoke.path);
  const std::vector<Contender> asked = targets(view.contenders(), revoke.node);
  if (asked.empty()) {
    console.error(revoke.node.empty() ? "nobody holds " + revoke.path
                                      : "no contender " + revoke.node + " on " + revoke.path);
    return exit_code::kNoHolder;
  }
  int code = exit_code::kOk;
  for (const Contender& c : asked) {
    const Identity identity = identity_of(c.data);
    if (identity.ours && identity.revocable == false) {
      console.error(c.name +
                    ": its holder does not accept revocation (a zklock holder started "
                    "without --revocable); not asked");
      code = exit_code::kNoPermission;
      continue;
    }
    if (!request_revocation(*session, revoke.path + "/" + c.name)) {
      console.error(c.name + ": gone before it could be asked");
      continue;
    }
    std::cout << "asked " << c.name << " to let go" << std::endl;
  }
  return code;
}

}  // namespace zklock::cli
