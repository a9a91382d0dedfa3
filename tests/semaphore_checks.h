// tests/semaphore_checks.h: what the Semaphore suites (semaphore_test, semaphore_cleanup_test)
// check on the server - a semaphore's children, its watches, "only the holder's lease is left" -
// and LeaseWaiter, an acquire() on a thread of its own.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "held_lock.h"
#include "support/four_letter_words.h"
#include "test_env.h"
#include "waiter.h"
#include "zklock/zklock.h"

namespace zklock::testing {

// The server's child watches: mntr's zk_watch_count counts data and child watches, wchp lists only
// the data watches. -1 when the server does not answer.
inline std::int64_t child_watch_count(int port) {
  const std::int64_t all = watch_count(port);
  std::int64_t data = 0;
  for (const auto& [path, sessions] : parse_wchp(four_letter_word(port, "wchp"))) {
    data += static_cast<std::int64_t>(sessions.size());
  }
  return all < 0 ? -1 : all - data;
}

// True when no watch of ours is left at or under `path`: no data watch there (wchp) and - on the
// server of this test process, where the tests run one at a time - no child watch anywhere.
inline bool no_watches_at(int port, const std::string& path) {
  if (!watches_under(port, path).empty()) return false;
  return using_external_server() || child_watch_count(port) == 0;
}

// Once the waiters of `held` have gone (as `s` sees it): only the holder's lease node is left,
// no node in the internal lock's queue, no watch.
inline bool only_the_holders_lease_left(Session& s, const HeldLease& held) {
  return lock_children(s, held.path + "/leases").size() == 1 &&
         lock_children(s, held.path + "/locks").empty() &&
         no_watches_at(held.server.port, held.path);
}

// The Lease a LeaseWaiter acquired, kept until release(). A base of its own, ahead of the
// Waiter: it exists before the waiter's thread starts and outlives it.
struct KeptLease {
  std::mutex mutex;
  Lease lease;
};

// acquire() on a thread of its own (a Waiter); the Lease it gets is kept until release().
class LeaseWaiter : private KeptLease, public Waiter {
 public:
  explicit LeaseWaiter(Semaphore& sem)
      : Waiter([this, &sem] {
          Lease got = sem.acquire();
          std::lock_guard lock(mutex);
          lease = std::move(got);
        }) {}
  void release() {
    std::lock_guard lock(mutex);
    lease.release();
  }
};

}  // namespace zklock::testing
