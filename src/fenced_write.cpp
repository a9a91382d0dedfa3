// Mutex::commit_fenced: writes applied in one multi with a check on our lock node.
#include "mutex_core.h"
#include "paths.h"
#include "zklock/mutex.h"

namespace zklock {

void Mutex::commit_fenced(const FencedWrite& writes) const {
  const std::string context = "zklock::Mutex(\"" + path() + "\")::commit_fenced";
  const auto acquisition = core_->acquisition();
  if (!acquisition) throw LockLostError(context + ": lock not held");
  detail::SessionCore& session = core_->session();
  std::vector<detail::MultiOp> ops;
  ops.reserve(writes.ops().size() + 1);
  // The fence: our lock node must still exist (any version) for anything to be applied.
  ops.push_back({detail::MultiOp::Kind::kCheck, acquisition->node_path, {}, -1, 0});
  for (const auto& op : writes.ops()) {
    detail::validate_node_path(op.path, "fenced write path");
    detail::MultiOp m{detail::MultiOp::Kind::kCheck, op.path, op.data, op.version,
                      static_cast<int>(op.mode)};
    switch (op.kind) {
      case FencedWrite::Op::Kind::kCreate: m.kind = detail::MultiOp::Kind::kCreate; break;
      case FencedWrite::Op::Kind::kSet: m.kind = detail::MultiOp::Kind::kSet; break;
      case FencedWrite::Op::Kind::kRemove: m.kind = detail::MultiOp::Kind::kDelete; break;
      case FencedWrite::Op::Kind::kCheck: m.kind = detail::MultiOp::Kind::kCheck; break;
    }
    ops.push_back(std::move(m));
  }
  const unsigned generation = acquisition->generation;
  auto r = session.call(
      [&](detail::Handle& h, detail::Completion done) {
        // Decided as the multi is handed to the client: once the session that holds the lock has
        // ended, or the clock says Lost (no answer for T - margin; the monitor thread may not have
        // run yet, say right after this process was paused past its session timeout), the server
        // may already have handed the lock on, so nothing is sent.
        if (h.generation() != generation || session.state_of(generation) == SessionState::kLost) {
          detail::OpResult lost;
          lost.rc = Errc::session_lost;
          done(std::move(lost));  // called synchronously here; session.call only waits on it
          return;
        }
        h.multi(ops, std::move(done));
      },
      session.negotiated_timeout());
  if (r.rc == Errc::ok) return;
  if (r.rc == Errc::session_lost || r.rc == Errc::session_expired || r.rc == Errc::invalid_state) {
    throw LockLostError(context + ": the session that held the lock has ended, or had no answer for "
                                  "the session timeout; nothing written");
  }
  if (!r.multi_results.empty() && r.multi_results.front() == Errc::no_node) {
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
  throw_error(r.rc, context);
}

}  // namespace zklock
