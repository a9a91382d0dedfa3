// LivenessRule: the Lost / Suspended decision and the heartbeat and reconnect schedule, from times
// alone (internal; pure: no threads, no I/O, the clock is an input).
//
// The rule (docs/sessions.md has the arithmetic):
//   Lost       at confirmed + T - m, where `confirmed` is the latest send time of a request the
//              ZooKeeper leader is known to have counted (leader_confirmation.h), T the negotiated
//              session timeout and m the margin; or at once when the server said "expired".
//   Suspended  when the connection drops, or a heartbeat has waited `suspend_after` for its answer.
//   Connected  again once a request sent after the suspension is confirmed.
// Heartbeats (a cheap request of our own) go out one interval after the later of the last one and
// the latest confirmation - a busy session needs none - and at once after each (re)connection.
// While Suspended and silent, a fresh connection is forced every `reconnect_interval`, so that the
// session answers again within a round trip of the network healing instead of after TCP's backoff.
// And once after a silence too short to have forced one, when the connection answers again but
// the Lost deadline is nearer than an ordinary confirmation can come (through an ensemble it waits
// a relay after the answers it confirms): a fresh connection's revalidation is counted at once.
// A connection whose heartbeat read was answered is not silent - only the leader is slow to answer
// the sync (a GC pause, a slow disk): it is dropped only once the sync has waited T/2, so that a
// leader pause does not make every client of the ensemble reconnect at once, while a follower cut
// off from its leader is still left early enough to revalidate the session through another one.
// Over TLS, also before the first connection: the C client never gives up on a TCP connect or a
// TLS handshake (its SSL_CONNECTING state is exempt from its receive timeout), so one that has
// lasted `suspend_after` is cut, and the C client tries the next server.
#pragma once

#include <chrono>
#include <optional>

#include "base/boot_clock.h"
#include "zklock/session_options.h"
#include "zklock/session_state.h"

namespace zklock::detail {

/// The rule's durations, fitted to the timeout the server granted.
struct LivenessSettings {
  using Duration = BootClock::duration;
  Duration session_timeout{0};     // T
  Duration lost_margin{0};         // m
  Duration heartbeat_interval{0};  // i
  Duration suspend_after{0};       // s
  Duration reconnect_interval{0};  // r

  /// Effects: the options' values where they fit the negotiated timeout `t` (interval and margin
  ///   below t/2, suspend_after below t, reconnect_interval below t/4), the defaults derived from
  ///   t otherwise: i = t/20, m = max(t/20, 50 ms) (at most t/4), s = t/3, r = 150 ms (at most
  ///   t/8).
  ///   `*fitted_down` (if given) is set when an option given by the application did not fit.
  static LivenessSettings fitted(const SessionOptions& options, std::chrono::milliseconds t,
                                 bool* fitted_down = nullptr);
};

/// What the connection is doing, as far as forcing a reconnect goes.
enum class LinkPhase { kConnected, kAssociating, kConnecting, kEnded };

struct LivenessInputs {
  using TimePoint = BootClock::time_point;
  using Duration = BootClock::duration;
  TimePoint now;
  std::optional<TimePoint> confirmed;  // latest leader-confirmed send time (this generation)
  LinkPhase phase = LinkPhase::kConnecting;
  std::optional<TimePoint> phase_since;        // when `phase` began (as observed)
  std::optional<TimePoint> heartbeat_pending;  // send time of the heartbeat in flight, if any
  bool heartbeat_read_answered = false;  // its read came back: the connection works (slow sync)
  // When a heartbeat's read came back late (it waited a heartbeat interval or more): a silence of
  // the connection just ended. None: not since the last (re)connection.
  std::optional<TimePoint> late_read_at;
  // How long before the Lost deadline an ordinary confirmation must be under way: a relay (what
  // a confirming sync waits after the answers it confirms) and two heartbeat intervals. 0: never.
  Duration rescue_window{0};
  std::optional<TimePoint> last_heartbeat;  // send time of the latest heartbeat
  bool heartbeat_requested = false;         // (re)connected: prove the session lives at once
  std::optional<TimePoint> last_reconnect;  // when a reconnect was last forced
  bool server_ended_session = false;        // the server said expired (or auth failed)
  bool tls = false;  // the C client never times out a connect or a handshake: the rule does
};

struct LivenessDecision {
  using TimePoint = BootClock::time_point;
  SessionState state = SessionState::kConnecting;
  TimePoint lost_deadline = TimePoint::max();  // confirmed + T - m (max: nothing confirmed yet)
  bool send_heartbeat = false;
  bool force_reconnect = false;
  TimePoint wake_at = TimePoint::max();  // re-evaluate no later than this
};

class LivenessRule {
 public:
  using TimePoint = BootClock::time_point;

  /// Returns: the deadline for Lost given the latest confirmation.
  static TimePoint lost_deadline(const LivenessSettings& s, std::optional<TimePoint> confirmed);

  /// Decides the state that follows `current` and what to do now. Remembers when it declared
  /// Suspended (to know when the session answered again); call once per evaluation, in time order.
  LivenessDecision evaluate(const LivenessSettings& s, const LivenessInputs& in,
                            SessionState current);

 private:
  TimePoint suspended_since_{};
};

}  // namespace zklock::detail
