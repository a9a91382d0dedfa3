#include "session/liveness_rule.h"

#include <algorithm>

namespace zklock::detail {
namespace {

using std::chrono::milliseconds;
using Duration = LivenessSettings::Duration;

Duration pick(milliseconds requested, Duration limit, Duration fallback, bool& did_not_fit) {
  if (requested.count() <= 0) return fallback;
  if (Duration(requested) >= limit) {
    did_not_fit = true;
    return fallback;
  }
  return requested;
}

}  // namespace

LivenessSettings LivenessSettings::fitted(const SessionOptions& o, milliseconds t,
                                          bool* fitted_down) {
  const Duration timeout = t;
  bool did_not_fit = false;
  LivenessSettings s;
  s.session_timeout = timeout;
  s.heartbeat_interval = pick(o.heartbeat_interval, timeout / 2, timeout / 20, did_not_fit);
  s.lost_margin =
      pick(o.lost_margin, timeout / 2,
           std::min<Duration>(std::max<Duration>(timeout / 20, milliseconds(50)), timeout / 4),
           did_not_fit);
  s.suspend_after = pick(o.suspend_after, timeout, timeout / 3, did_not_fit);
  s.reconnect_interval = pick(o.reconnect_interval, timeout / 4,
                              std::min<Duration>(milliseconds(150), timeout / 8), did_not_fit);
  if (fitted_down) *fitted_down = did_not_fit;
  return s;
}

LivenessRule::TimePoint LivenessRule::lost_deadline(const LivenessSettings& s,
                                                    std::optional<TimePoint> confirmed) {
  if (!confirmed) return TimePoint::max();
  return *confirmed + s.session_timeout - s.lost_margin;
}

LivenessDecision LivenessRule::evaluate(const LivenessSettings& s, const LivenessInputs& in,
                                        SessionState current) {
  LivenessDecision d;
  d.state = current;
  d.lost_deadline = lost_deadline(s, in.confirmed);
  const TimePoint now = in.now;
  auto wake_by = [&](TimePoint t) { d.wake_at = std::min(d.wake_at, t); };

  if (current == SessionState::kClosed || current == SessionState::kLost) return d;

  if (current == SessionState::kConnecting) {
    if (in.server_ended_session) {
      d.state = SessionState::kLost;
      return d;
    }
    if (in.confirmed) d.state = SessionState::kConnected;
  }
  if (d.state == SessionState::kConnected || d.state == SessionState::kSuspended) {
    if (in.server_ended_session || now >= d.lost_deadline) {
      d.state = SessionState::kLost;
      return d;
    }
    wake_by(d.lost_deadline);
  }

  const bool connected = in.phase == LinkPhase::kConnected;
  const bool heartbeat_overdue =
      in.heartbeat_pending && now - *in.heartbeat_pending >= s.suspend_after;
  if (d.state == SessionState::kConnected) {
    if (!connected || heartbeat_overdue) {
      d.state = SessionState::kSuspended;
      suspended_since_ = now;
    } else if (in.heartbeat_pending) {
      wake_by(*in.heartbeat_pending + s.suspend_after);
    }
  } else if (d.state == SessionState::kSuspended && current == SessionState::kSuspended) {
    if (connected && !heartbeat_overdue && in.confirmed && *in.confirmed >= suspended_since_) {
      d.state = SessionState::kConnected;
    }
  }

  // Heartbeat: only over a live connection, one at a time.
  if (connected && !in.heartbeat_pending && d.state != SessionState::kLost) {
    TimePoint due = in.last_heartbeat ? *in.last_heartbeat + s.heartbeat_interval : now;
    if (in.confirmed) due = std::max(due, *in.confirmed + s.heartbeat_interval);
    if (in.heartbeat_requested || now >= due) {
      d.send_heartbeat = true;
    } else {
      wake_by(due);
    }
  }

  // A fresh connection, while Suspended and silent: a connection that stopped answering, a TCP
  // connect waiting on SYN backoff, or a handshake that does not complete (a follower cut off from
  // its leader cannot revalidate the session).
  if (d.state == SessionState::kSuspended && in.phase != LinkPhase::kEnded) {
    bool stuck = false;
    TimePoint stuck_at = TimePoint::max();
    const TimePoint since = in.phase_since ? *in.phase_since : now;
    switch (in.phase) {
      case LinkPhase::kConnected:
        if (in.heartbeat_pending) {
          // Reads answer: the leader is slow, the connection is not silent (see the header).
          const Duration patience = in.heartbeat_read_answered
                                        ? std::max<Duration>(s.suspend_after, s.session_timeout / 2)
                                        : s.suspend_after;
          stuck_at = *in.heartbeat_pending + patience;
          stuck = now >= stuck_at;
        }
        break;
      case LinkPhase::kConnecting:
        stuck_at = since + s.reconnect_interval;
        stuck = now >= stuck_at;
        break;
      case LinkPhase::kAssociating:
        stuck_at = since + s.suspend_after;
        stuck = now >= stuck_at;
        break;
      case LinkPhase::kEnded:
        break;
    }
    const TimePoint allowed = in.last_reconnect ? *in.last_reconnect + s.reconnect_interval : now;
    if (stuck && now >= allowed) {
      d.force_reconnect = true;
      wake_by(now + s.reconnect_interval);
    } else if (stuck) {
      wake_by(allowed);
    } else if (stuck_at != TimePoint::max()) {
      wake_by(std::max(stuck_at, allowed));
    }
  }

  // Over TLS, before the first connection (or a new generation's): a connect or handshake that has
  // lasted suspend_after is cut, so that a listed server that accepts and never answers, or whose
  // SYNs go unanswered, does not keep the session from the others until the connect timeout.
  if (in.tls && d.state == SessionState::kConnecting &&
      (in.phase == LinkPhase::kConnecting || in.phase == LinkPhase::kAssociating)) {
    const TimePoint since = in.phase_since ? *in.phase_since : now;
    const TimePoint stuck_at = since + s.suspend_after;
    const TimePoint allowed = in.last_reconnect ? *in.last_reconnect + s.reconnect_interval : now;
    if (now >= stuck_at && now >= allowed) {
      d.force_reconnect = true;
      wake_by(now + s.suspend_after);
    } else {
      wake_by(std::max(stuck_at, allowed));
    }
  }

  // A rescue after a short silence (see the header): once per late answer, while it is recent.
  if (!d.force_reconnect && connected && in.late_read_at && in.rescue_window.count() > 0 &&
      d.lost_deadline != TimePoint::max()) {
    const bool rescued = in.last_reconnect && *in.last_reconnect >= *in.late_read_at;
    const TimePoint until = *in.late_read_at + s.suspend_after;
    const TimePoint rescue_at = d.lost_deadline - in.rescue_window;
    if (!rescued && now < until) {
      if (now >= rescue_at) {
        d.force_reconnect = true;
      } else {
        wake_by(std::min(rescue_at, until));
      }
    }
  }
  return d;
}

}  // namespace zklock::detail
