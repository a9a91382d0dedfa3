#include "session/leader_confirmation.h"

#include <algorithm>

namespace zklock::detail {

bool LeaderConfirmation::produced_by_leader(Errc rc) noexcept {
  switch (rc) {
    case Errc::ok:
    case Errc::node_exists:
    case Errc::no_node:
    case Errc::bad_version:
    case Errc::not_empty:
    case Errc::no_children_for_ephemerals:
      return true;
    default:
      // Among others: throttled (a follower's throttler answers without forwarding), no_auth
      // (a follower's eager ACL check), and codes of requests refused before they were read.
      return false;
  }
}

void LeaderConfirmation::reset() noexcept {
  epoch_ = 0;
  answered_.clear();
  confirmed_.reset();
  credit_.reset();
}

std::optional<LeaderConfirmation::TimePoint> LeaderConfirmation::on_counted(TimePoint sent) {
  if (confirmed_ && *confirmed_ >= sent) return std::nullopt;
  confirmed_ = sent;
  return sent;
}

std::optional<LeaderConfirmation::TimePoint> LeaderConfirmation::on_answered(const Answer& answer) {
  const bool leader_made = answer.via_leader && produced_by_leader(answer.rc);
  std::optional<TimePoint> credited;
  if (credit_ && answer.sent >= *credit_) {
    // Sent after our drop, so answered over a connection opened after it: its connect request
    // was counted (by a leader that may have been stale, through an ensemble: the lag).
    credited = on_counted(direct_ ? *credit_ : *credit_ - lag_);
    credit_.reset();
  }
  if (direct_) {
    auto advanced = on_counted(answer.sent);
    return advanced ? advanced : credited;
  }

  if (answer.epoch != epoch_) {
    // A new connection: what the previous server received may never have reached the leader.
    epoch_ = answer.epoch;
    answered_.clear();
  }
  std::optional<TimePoint> candidate;
  if (leader_made) {
    if (lag_.count() == 0 && relay_.count() == 0) {
      candidate = answer.sent;
    } else {
      // The latest send among requests answered by s - relay (the history is in answer order;
      // each entry carries the latest send answered up to it, so the sends rise too), that was
      // itself sent by s - lag.
      const auto answered_by =
          std::upper_bound(answered_.begin(), answered_.end(), answer.sent - relay_,
                           [](TimePoint t, const Entry& e) { return t < e.answered; });
      const auto sent_by =
          std::upper_bound(answered_.begin(), answered_by, answer.sent - lag_,
                           [](TimePoint t, const Entry& e) { return t < e.latest_sent; });
      if (sent_by != answered_.begin()) candidate = std::prev(sent_by)->latest_sent;
    }
  }
  record(answer.sent, answer.answered);
  std::optional<TimePoint> advanced = credited;
  if (candidate) {
    if (auto raised = on_counted(*candidate)) advanced = raised;
  }
  // Entries whose send is at or before the confirmed time can never raise it: keep only the
  // latest of them.
  if (confirmed_) {
    while (answered_.size() > 1 && answered_[1].latest_sent <= *confirmed_) answered_.pop_front();
  }
  while (answered_.size() > kMaxHistory) answered_.pop_front();
  return advanced;
}

void LeaderConfirmation::record(TimePoint sent, TimePoint answered) {
  if (!answered_.empty()) {
    Entry& last = answered_.back();
    const TimePoint latest = std::max(last.latest_sent, sent);
    if (answered < last.answered) {
      // Processed out of order (answers of one connection come in order; this is a request
      // refused at once): it was answered no later than the last entry - count it there.
      last.latest_sent = latest;
      return;
    }
    if (answered - last.bucket_start < kGranularity) {
      // One bucket: its answer time moves later (only ever stricter), its send the latest.
      last.answered = answered;
      last.latest_sent = latest;
      return;
    }
    answered_.push_back(Entry{answered, answered, latest});
    return;
  }
  answered_.push_back(Entry{answered, answered, sent});
}

}  // namespace zklock::detail
