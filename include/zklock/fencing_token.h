// zklock/fencing_token.h: FencingToken, the number a resource checks to refuse a stale lock holder.
//
// A token is the czxid of the holder's lock node: the zxid of the transaction that created it.
// Zxids grow with every write to the ensemble and never repeat, so for one lock path a later holder
// always has a larger token - also after the lock's parent node was deleted and re-created, and
// across the 2^31 wrap of sequence numbers. The node's sequence number is kept too (it is what the
// recipe queues by), but it orders holders only while the parent node lives and below 2^31; see
// docs/fencing.md before using it as a token.
//
// A resource keeps the largest token it has accepted and refuses any write with a smaller one, in
// one atomic step (a conditional UPDATE, a compare-and-set, ZooKeeper's multi with a version).
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace zklock {

class FencingToken {
 public:
  /// An empty token (valid() == false): older than every real one.
  constexpr FencingToken() noexcept = default;
  constexpr FencingToken(std::int64_t czxid, std::int32_t sequence) noexcept
      : czxid_(czxid), sequence_(sequence) {}

  /// The token as a signed 64-bit number (the czxid). Positive for every real token.
  constexpr std::int64_t value() const noexcept { return czxid_; }
  /// The lock node's sequence number (see the file comment for its limits).
  constexpr std::int32_t sequence() const noexcept { return sequence_; }
  constexpr bool valid() const noexcept { return czxid_ > 0; }

  /// Stable text form: value() in decimal. parse(to_string()) gives the token back (the sequence
  /// number is not part of the text form).
  std::string to_string() const { return std::to_string(czxid_); }
  /// Returns: the token for a decimal text, or nullopt for anything else (empty, sign, junk).
  static std::optional<FencingToken> parse(std::string_view text) noexcept {
    std::int64_t v = 0;
    if (text.empty() || text.front() == '-' || text.front() == '+') return std::nullopt;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v <= 0) return std::nullopt;
    return FencingToken(v, 0);
  }

  // Tokens compare by value() only.
  friend constexpr bool operator==(FencingToken a, FencingToken b) noexcept {
    return a.czxid_ == b.czxid_;
  }
  friend constexpr bool operator!=(FencingToken a, FencingToken b) noexcept {
    return a.czxid_ != b.czxid_;
  }
  friend constexpr bool operator<(FencingToken a, FencingToken b) noexcept {
    return a.czxid_ < b.czxid_;
  }
  friend constexpr bool operator>(FencingToken a, FencingToken b) noexcept {
    return a.czxid_ > b.czxid_;
  }
  friend constexpr bool operator<=(FencingToken a, FencingToken b) noexcept {
    return a.czxid_ <= b.czxid_;
  }
  friend constexpr bool operator>=(FencingToken a, FencingToken b) noexcept {
    return a.czxid_ >= b.czxid_;
  }
  friend std::ostream& operator<<(std::ostream& os, FencingToken t) { return os << t.czxid_; }

 private:
  std::int64_t czxid_ = 0;
  std::int32_t sequence_ = 0;
};

}  // namespace zklock
