#include "leader_confirmation.h"

#include <algorithm>

namespace zklock::detail {

void LeaderConfirmation::reset() noexcept {
  epoch_ = 0;
  answered_.clear();
  confirmed_.reset();
}

std::optional<LeaderConfirmation::TimePoint> LeaderConfirmation::on_counted(TimePoint sent) {
  if (confirmed_ && *confirmed_ >= sent) return std::nullopt;
  confirmed_ = sent;
  return sent;
}

std::optional<LeaderConfirmation::TimePoint> LeaderConfirmation::on_answered(
    const Answer& answer) {
  const std::uint64_t epoch = answer.epoch;
  const TimePoint sent = answer.sent;
  const bool via_leader = answer.via_leader;
  const auto advance = [&](TimePoint t) { return on_counted(t); };
  if (direct_) return advance(sent);

  if (epoch != epoch_) {
    // A new connection: what the previous server received may never have reached the leader.
    epoch_ = epoch;
    answered_.clear();
  }
  std::optional<TimePoint> candidate;
  if (via_leader) {
    const TimePoint horizon = sent - lag_;
    // The latest recorded send at or before the horizon (the history is in send order).
    auto it = std::upper_bound(answered_.begin(), answered_.end(), horizon);
    if (it != answered_.begin()) candidate = *std::prev(it);
    if (lag_.count() == 0) candidate = sent;
  }
  if (answered_.empty() || sent - answered_.back() >= kGranularity) {
    if (answered_.empty() || sent > answered_.back()) answered_.push_back(sent);
  }
  std::optional<TimePoint> advanced;
  if (candidate) advanced = advance(*candidate);
  // Entries at or before the confirmed time can never raise it: keep only the latest of them.
  if (confirmed_) {
    while (answered_.size() > 1 && answered_[1] <= *confirmed_) answered_.pop_front();
  }
  while (answered_.size() > kMaxHistory) answered_.pop_front();
  return advanced;
}

}  // namespace zklock::detail
