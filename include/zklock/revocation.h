// zklock/revocation.h: asking the holder of a lock to let go.
#pragma once

#include <string>
#include <string_view>

#include "zklock/session.h"

namespace zklock {

/// What a revocation request writes into the holder's lock node (Apache Curator's
/// Revoker.REVOKE_MESSAGE, so that requests cross between the libraries).
inline constexpr std::string_view kRevokeMessage = "__REVOKE__";

/// What request_revocation() did.
enum class RevocationRequest {
  kAsked,         // the request is written: the holder hears of it if it listens
  kGone,          // the node no longer exists: nobody to ask
  kNotRevocable,  // a zklock contender whose node says it does not accept requests: not written
};

/// Asks the contender whose lock node is `node_path` (a Mutex's or either side of a SharedMutex's
/// contender, a Semaphore lease, an Election participant) to let go.
///
/// Effects: reads the node; unless it is a zklock contender that says "revocable":false, sets its
/// data to kRevokeMessage, on the condition that it did not change since the read (a change in
/// between is read again). A zklock holder whose on_revocation_requested is set hears of it at
/// once (a contender still waiting, once it acquires) and writes its own data back; so does an
/// Apache Curator holder made revocable (makeRevocable), which leaves the request in place. The
/// holder decides: nothing is released by this call.
/// Returns: what was done (RevocationRequest).
/// Throws: InvalidArgumentError for a malformed path; NotAuthorizedError when the node's ACL does
/// not let this session read or write it (a holder with credentials: only its identity may);
/// ConnectionLossError, SessionLostError or ClosedError as Session::set() does.
RevocationRequest request_revocation(Session& session, const std::string& node_path);

}  // namespace zklock
