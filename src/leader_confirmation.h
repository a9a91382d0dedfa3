// LeaderConfirmation: which of our requests the ZooKeeper leader is known to have counted as a sign
// of life of our session (internal; pure: no threads, no clock of its own).
//
// The server that expires sessions is the leader (a standalone server is its own leader). A
// follower answers reads by itself and passes the sessions it heard from ("touches") to the leader
// only in its answer to the leader's ping, which the leader sends every tickTime/2. A follower cut
// off from its leader therefore keeps answering our reads for up to syncLimit x tickTime while the
// leader counts our session down: answers to reads prove nothing about the leader's clock.
//
// What does prove something: a request the follower forwards to the leader (a write, or a sync).
// The follower->leader link is one ordered stream carrying both those requests and the ping
// answers, and the leader handles a follower's packets in order. When such a request sent at s is
// answered, the leader has therefore handled every ping answer the follower sent before forwarding
// it - and the follower answers a ping every tickTime/2 - so the leader has touched our session for
// every request of ours the follower received before s - lag, lag = tickTime/2 (plus the one-way
// delay between follower and leader, which the Lost margin covers). A touch at time t lets the
// leader expire the session no earlier than t + T, and t is at or after our send time. So:
//
//   confirmed = the latest send time t of a request answered on the same connection, with
//               t <= s - lag, where s is the send time of an answered leader-routed request.
//
// Connected directly to the leader (or a standalone server) every answered request confirms its own
// send time (lag 0, and reads count too). Answers of an earlier connection (epoch) do not count:
// another server may never have passed them on.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "answer.h"
#include "boot_clock.h"

namespace zklock::detail {

class LeaderConfirmation {
 public:
  using TimePoint = BootClock::time_point;
  using Duration = BootClock::duration;

  /// How answers confirm: `direct` when the server we talk to expires sessions itself (standalone),
  /// else through leader-routed requests with `lag` (half the ensemble's tickTime, or a bound).
  void set_route(bool direct, Duration lag) noexcept {
    direct_ = direct;
    lag_ = lag;
  }
  bool direct() const noexcept { return direct_; }
  Duration lag() const noexcept { return lag_; }

  /// Forgets everything (a new session generation).
  void reset() noexcept;

  /// Takes one answered request into account. Returns: the confirmed send time, if it advanced.
  std::optional<TimePoint> on_answered(const Answer& answer);

  /// Takes a sign of life the leader is known to have counted, sent at `sent` (a session created,
  /// or revalidated on a reconnect, by a connect request that left after `sent`). Returns: the
  /// confirmed send time, if it advanced.
  std::optional<TimePoint> on_counted(TimePoint sent);

  /// The latest send time the leader is known to have counted (nullopt: none yet).
  std::optional<TimePoint> confirmed() const noexcept { return confirmed_; }

 private:
  // Send times of requests answered in `epoch_`, oldest first, at least kGranularity apart (the
  // earliest of each bucket is kept: a candidate may only be too early, never too late).
  static constexpr Duration kGranularity = std::chrono::milliseconds(10);
  static constexpr std::size_t kMaxHistory = 4096;

  bool direct_ = true;
  Duration lag_{0};
  std::uint64_t epoch_ = 0;
  std::deque<TimePoint> answered_;
  std::optional<TimePoint> confirmed_;
};

}  // namespace zklock::detail
