// Revocation (zklock/revocation.h, MutexOptions::on_revocation_requested): the request is a write
// of "__REVOKE__" into the holder's node; the holder learns of it from the data watch on its own
// node. A contender that waited for the lock has that watch already (it tells whether our node is
// still there when the predecessor goes); one first at once gets it when it acquires, only if it
// listens for requests. Every MutexCore function here runs with mutex_ held.
#include "zklock/revocation.h"

#include "lock/holder_identity.h"
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"
#include "zklock/errors.h"

namespace zklock {

RevocationRequest request_revocation(Session& session, const std::string& node_path) {
  // A bound on the read-and-write rounds: each one lost means the node's data changed in
  // between (its holder proclaimed, or put its data back after an earlier request).
  constexpr int kRounds = 16;
  for (int round = 0; round < kRounds; ++round) {
    const auto node = session.get(node_path);
    if (!node) return RevocationRequest::kGone;
    if (detail::is_holder_identity(node->data) &&
        node->data.find(R"(,"revocable":false)") != std::string::npos) {
      return RevocationRequest::kNotRevocable;
    }
    try {
      session.set(node_path, std::string(kRevokeMessage), node->stat.version);
      return RevocationRequest::kAsked;
    } catch (const Error& e) {
      if (e.code() == make_error_code(Errc::no_node)) return RevocationRequest::kGone;
      if (e.code() != make_error_code(Errc::bad_version)) throw;
    }
  }
  throw Error(Errc::runtime_inconsistency, "zklock::request_revocation(\"" + node_path +
                                               "\"): its data kept changing between two reads");
}

}  // namespace zklock

namespace zklock::detail {

void MutexCore::own_data_read_locked(const AttemptPtr& a, const std::string& data,
                                     std::int32_t version) {
  if (!options_.on_revocation_requested || data != kRevokeMessage) return;
  // Heard: our node says who we are again (for `zklock status`, `zklock revoke`, leader()).
  restore_node_data_locked(a, version);
  if (a->phase != Attempt::Phase::kHeld) {
    a->revocation_pending = true;  // reported when it acquires (watch_for_revocation_locked)
    return;
  }
  report_revocation_locked(a);
}

void MutexCore::report_revocation_locked(const AttemptPtr& a) {
  post_callback_locked([callback = options_.on_revocation_requested,
                        acquisition = acquisition_of_locked(a)] { callback(acquisition); });
}

bool MutexCore::watch_for_revocation_locked(const AttemptPtr& a) {
  if (!options_.on_revocation_requested) return a->self_watch != 0;
  if (a->revocation_pending) {
    a->revocation_pending = false;
    report_revocation_locked(a);
  }
  if (a->self_watch == 0) rearm_self_watch_locked(a);  // its read reports a request made already
  return a->self_watch != 0;
}

}  // namespace zklock::detail
