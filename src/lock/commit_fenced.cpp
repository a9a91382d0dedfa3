// Mutex::commit_fenced: writes applied in one multi with a check on our lock node.
#include "base/paths.h"
#include "lock/mutex_core.h"
#include "zklock/mutex.h"

namespace zklock {
namespace {

detail::MultiOp to_multi_op(const FencedWrite::Op& op) {
  detail::validate_node_path(op.path, "fenced write path");
  detail::MultiOp m{detail::MultiOp::Kind::kCheck, op.path, op.data, op.version,
                    detail::NodeMode::kPersistent};
  switch (op.mode) {
    case CreateMode::kPersistent:
      m.mode = detail::NodeMode::kPersistent;
      break;
    case CreateMode::kEphemeral:
      m.mode = detail::NodeMode::kEphemeral;
      break;
    case CreateMode::kContainer:
      m.mode = detail::NodeMode::kContainer;
      break;
  }
  switch (op.kind) {
    case FencedWrite::Op::Kind::kCreate:
      m.kind = detail::MultiOp::Kind::kCreate;
      break;
    case FencedWrite::Op::Kind::kSet:
      m.kind = detail::MultiOp::Kind::kSet;
      break;
    case FencedWrite::Op::Kind::kRemove:
      m.kind = detail::MultiOp::Kind::kDelete;
      break;
    case FencedWrite::Op::Kind::kCheck:
      m.kind = detail::MultiOp::Kind::kCheck;
      break;
  }
  return m;
}

// Answers after which the server has certainly not applied the multi.
bool refused_by_server(Errc rc) { return rc == Errc::session_expired || rc == Errc::invalid_state; }

}  // namespace

namespace detail {

void commit_fenced(const std::shared_ptr<MutexCore>& core, const FencedWrite& writes) {
  const auto acquisition = core->acquisition();
  if (!acquisition) {
    throw LockLostError(core->context() + "::commit_fenced: lock not held; nothing written");
  }
  commit_fenced(*core, *acquisition, writes);
}

void commit_fenced(MutexCore& core, const Acquisition& held, const FencedWrite& writes) {
  const std::string context = core.context() + "::commit_fenced";
  const Acquisition* acquisition = &held;
  detail::SessionCore& session = core.session();
  std::vector<detail::MultiOp> ops;
  ops.reserve(writes.ops().size() + 1);
  // The fence: our lock node must still exist (any version) for anything to be applied.
  ops.push_back({detail::MultiOp::Kind::kCheck,
                 acquisition->node_path,
                 {},
                 -1,
                 detail::NodeMode::kPersistent});
  for (const auto& op : writes.ops()) ops.push_back(to_multi_op(op));

  const unsigned generation = acquisition->generation;
  bool refused_here = false;
  bool handed_to_client = false;  // false also when the call found no connection to send on
  auto r = session.call(
      [&](detail::ClientConnection& c, detail::Completion done) {
        // Decided as the multi is handed to the client: once the session that holds the lock has
        // ended, or the clock says Lost (no leader-confirmed answer for T - margin; the monitor
        // may not have run yet, say right after this process was paused past its session timeout),
        // the server may already have handed the lock on, so nothing is sent.
        if (c.generation() != generation || session.state_of(generation) == SessionState::kLost) {
          refused_here = true;
          detail::OpResult refused;
          refused.rc = Errc::lock_lost;
          done(std::move(refused));  // our own completion: session.call only records it
          return;
        }
        handed_to_client = true;
        c.multi(ops, session.node_acl(), std::move(done));
      },
      session.negotiated_timeout());
  if (r.rc == Errc::ok) return;
  if (refused_here || !handed_to_client) {
    throw LockLostError(context +
                        ": the session that held the lock has ended, or is Lost by the "
                        "clock; nothing was sent");
  }
  if (!r.multi_results.empty()) {
    // The server answered: nothing was applied. Which operation failed?
    if (r.multi_results.front() == Errc::no_node) {
      throw LockLostError(context + ": lock node " + acquisition->node_path +
                          " is gone; nothing written");
    }
    for (std::size_t i = 1; i < r.multi_results.size(); ++i) {
      const Errc code = r.multi_results[i];
      if (code != Errc::ok && code != Errc::runtime_inconsistency) {
        throw_error(code, context + ": operation " + std::to_string(i) + " on " + ops[i].path +
                              " (nothing written)");
      }
    }
  }
  if (refused_by_server(r.rc)) {
    throw LockLostError(context + ": the session has expired; nothing written");
  }
  if (outcome_unknown(r.rc) || r.rc == Errc::closed) {
    // The multi was handed to the client and its answer did not come (the connection broke, the
    // session was Lost or closed meanwhile): the server may or may not have applied it.
    throw ConnectionLossError(r.rc, context +
                                        ": the multi was sent and no answer came; the writes "
                                        "may or may not have been applied");
  }
  throw_error(r.rc, context);
}

}  // namespace detail

void Mutex::commit_fenced(const FencedWrite& writes) const {
  const std::shared_ptr<detail::MutexCore> core = core_;
  detail::commit_fenced(core, writes);
}

}  // namespace zklock
