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
// answers, and the leader handles a follower's packets in order. When such a request S, sent at
// s, is answered by the leader, the leader has handled every ping answer the follower sent before
// forwarding S - and the follower answers a ping every tickTime/2 - so the leader has touched our
// session for every request of ours the follower had received by s - lag, lag = tickTime/2 (plus
// the one-way delay between follower and leader, which the Lost margin covers). When the follower
// received a request R we do not know - R may have waited in TCP's retransmission backoff or in
// the follower's request throttler - but it was before R's answer came back. A touch at time t
// lets the leader expire the session no earlier than t + T, and t is at or after R's send time.
// So:
//
//   confirmed = the latest send time of a request R answered on the same connection, whose answer
//               came at or before s - lag, where s is the send time of a request S that went
//               through the leader and was answered by the leader (not by the follower on its
//               own: see produced_by_leader).
//
// Connected directly to the leader (or a standalone server) every answered request confirms its own
// send time (lag 0, and reads count too). Answers of an earlier connection (epoch) do not count:
// another server may never have passed them on.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "base/boot_clock.h"
#include "client/answer.h"

namespace zklock::detail {

class LeaderConfirmation {
 public:
  using TimePoint = BootClock::time_point;
  using Duration = BootClock::duration;

  /// How answers confirm: `direct` when the server we talk to expires sessions itself (standalone),
  /// else through leader-routed requests. Through an ensemble a request sent at t and answered at
  /// a is confirmed by a leader-made answer to a request sent at s when
  ///   a <= s - relay  (its touch had reached the leader: the follower's relay, tickTime/2, or a
  ///                    tickTime through an ObserverMaster)
  ///   t <= s - lag    (a leader elected meanwhile counts the session from its election, and a
  ///                    stale leader answers syncs for up to a tickTime after that)
  /// (server_topology.h). `relay` defaults to `lag`.
  void set_route(bool direct, Duration lag, std::optional<Duration> relay = std::nullopt) noexcept {
    direct_ = direct;
    lag_ = lag;
    relay_ = relay ? *relay : lag;
  }
  bool direct() const noexcept { return direct_; }
  Duration lag() const noexcept { return lag_; }
  Duration relay() const noexcept { return relay_; }

  /// Forgets everything (a new session generation).
  void reset() noexcept;

  /// Takes one answered request into account (answers in the order they were processed).
  /// Returns: the confirmed send time, if it advanced.
  std::optional<TimePoint> on_answered(const Answer& answer);

  /// True for the answers to a forwarded request that only the leader gives: its verdicts on a
  /// write it took (ok, node_exists, no_node, bad_version, not_empty, no_children_for_ephemerals)
  /// and a sync's ok. A follower answers throttled (3.7+ request throttling) and no_auth (eager
  /// ACL checks) without forwarding; those prove nothing about the leader.
  static bool produced_by_leader(Errc rc) noexcept;

  /// Takes a sign of life the leader is known to have counted, sent at `sent` (a session created,
  /// or revalidated on a reconnect, by a connect request that left after `sent`). Returns: the
  /// confirmed send time, if it advanced.
  std::optional<TimePoint> on_counted(TimePoint sent);

  /// We dropped the connection on purpose, and by `dropped_at` its socket was closed: every
  /// request sent from then on goes out on a connection opened later, whose connect request the
  /// leader counted (a session revalidated on a new connection is touched by the leader). Credited
  /// at the first answer to such a request - not at any answer of a newer epoch, which may come
  /// from a connection opened before the drop whose CONNECTED event was processed late. Through
  /// an ensemble the credit is `dropped_at - lag`: a stale leader revalidates sessions too.
  void expect_reconnect_credit(TimePoint dropped_at) noexcept { credit_ = dropped_at; }

  /// The latest send time the leader is known to have counted (nullopt: none yet).
  std::optional<TimePoint> confirmed() const noexcept { return confirmed_; }

 private:
  // Requests answered in `epoch_`, in answer order, in buckets of kGranularity: a bucket's answer
  // time is the latest answer in it and its send the latest send answered by then, so a candidate
  // may only be too early, never too late.
  struct Entry {
    TimePoint bucket_start;
    TimePoint answered;
    TimePoint latest_sent;
  };
  static constexpr Duration kGranularity = std::chrono::milliseconds(10);
  static constexpr std::size_t kMaxHistory = 4096;

  void record(TimePoint sent, TimePoint answered);

  bool direct_ = false;
  Duration lag_{0};
  Duration relay_{0};
  std::uint64_t epoch_ = 0;
  std::deque<Entry> answered_;
  std::optional<TimePoint> confirmed_;
  std::optional<TimePoint> credit_;  // expect_reconnect_credit()
};

}  // namespace zklock::detail
