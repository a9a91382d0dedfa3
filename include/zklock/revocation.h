// zklock/revocation.h: asking the holder of a lock to let go.
#pragma once

#include <string>
#include <string_view>

#include "zklock/session.h"

namespace zklock {

/// What a revocation request writes into the holder's lock node (Apache Curator's
/// Revoker.REVOKE_MESSAGE, so that requests cross between the libraries).
inline constexpr std::string_view kRevokeMessage = "__REVOKE__";

/// Asks the contender whose lock node is `node_path` to let go of the lock.
///
/// Effects: sets the node's data to kRevokeMessage (one request). A zklock holder whose
/// MutexOptions::on_revocation_requested is set hears of it at once (a contender still waiting,
/// once it acquires); so does an Apache Curator holder made revocable (makeRevocable). The holder
/// decides: nothing is released by this call. A zklock node says whether its holder listens
/// ("revocable":true in its data, Contender::data); one that does not ignores the request.
/// Returns: true if the request was written; false if the node no longer exists.
/// Throws: InvalidArgumentError for a malformed path; NotAuthorizedError when the node's ACL does
/// not let this session write it (a holder with credentials: only its identity may);
/// ConnectionLossError, SessionLostError or ClosedError as Session::set() does.
bool request_revocation(Session& session, const std::string& node_path);

}  // namespace zklock
