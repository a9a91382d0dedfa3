// Revocation (zklock/revocation.h, MutexOptions::on_revocation_requested): the request is a write
// of "__REVOKE__" into the holder's node; the holder learns of it from the data watch on its own
// node. A contender that waited for the lock has that watch already (it tells whether our node is
// still there when the predecessor goes); one first at once gets it when it acquires, only if it
// listens for requests. Every MutexCore function here runs with mutex_ held.
#include "zklock/revocation.h"

#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"
#include "zklock/errors.h"

namespace zklock {

bool request_revocation(Session& session, const std::string& node_path) {
  try {
    session.set(node_path, std::string(kRevokeMessage));
  } catch (const Error& e) {
    if (e.code() == make_error_code(Errc::no_node)) return false;
    throw;
  }
  return true;
}

}  // namespace zklock

namespace zklock::detail {

void MutexCore::own_data_read_locked(const AttemptPtr& a, const std::string& data) {
  if (!options_.on_revocation_requested || data != kRevokeMessage) return;
  if (a->phase != Attempt::Phase::kHeld) {
    a->revocation_pending = true;  // reported when it acquires (watch_for_revocation_locked)
    return;
  }
  post_callback_locked([callback = options_.on_revocation_requested,
                        acquisition = acquisition_of_locked(a)] { callback(acquisition); });
}

bool MutexCore::watch_for_revocation_locked(const AttemptPtr& a) {
  if (!options_.on_revocation_requested) return a->self_watch != 0;
  if (a->revocation_pending) {
    a->revocation_pending = false;
    own_data_read_locked(a, std::string(kRevokeMessage));
  }
  if (a->self_watch == 0) rearm_self_watch_locked(a);  // its read reports a request made already
  return a->self_watch != 0;
}

}  // namespace zklock::detail
