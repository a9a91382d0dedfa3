// RequestCounters: the requests one Session sent, by operation, and the answers other than ok, by
// code (internal). ClientConnection adds to them on the C client's threads; lock-free.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "zklock/errors.h"
#include "zklock/testing/fault_hook.h"

namespace zklock::detail {

class RequestCounters {
 public:
  void sent(testing::Operation op) noexcept {
    sent_[static_cast<std::size_t>(op)].fetch_add(1, std::memory_order_relaxed);
  }
  void answered(Errc rc) noexcept {
    if (rc == Errc::ok) return;
    errors_[slot(rc)].fetch_add(1, std::memory_order_relaxed);
  }

  /// Effects: adds the counts to `requests` and `errors`, named as in the Prometheus labels.
  void add_to(std::map<std::string, std::uint64_t>& requests,
              std::map<std::string, std::uint64_t>& errors) const;

 private:
  static constexpr std::size_t kOperations =
      static_cast<std::size_t>(testing::Operation::kAddAuth) + 1;
  // Errc values run from -127 (throttled) to small positive zklock codes.
  static constexpr int kLowestCode = -128;
  static constexpr std::size_t kCodeSlots = 160;
  static std::size_t slot(Errc rc) noexcept {
    const int index = static_cast<int>(rc) - kLowestCode;
    return index < 0 || index >= static_cast<int>(kCodeSlots) ? 0 : static_cast<std::size_t>(index);
  }

  std::array<std::atomic<std::uint64_t>, kOperations> sent_{};
  std::array<std::atomic<std::uint64_t>, kCodeSlots> errors_{};
};

/// The label of an operation ("create", "get_children", ...) and of a code ("no_node", ...).
std::string operation_label(testing::Operation op);
std::string code_label(Errc rc);

}  // namespace zklock::detail
