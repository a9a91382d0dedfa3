// tests/held_lock.h: how many contention tests begin - a new lock path on the shared server,
// already held: by a Mutex (HeldLock) or, for a one-lease Semaphore, by its lease (HeldLease).
//
// What it guarantees: once constructed, `holder` (in a session of its own, `holder_session`) holds
// `path`, a path no other test uses (unique_path(stem)); nothing else is queued there. The test
// brings its contenders, and may use `holder_session` to look at the path or as a contender's
// session. Destroyed in reverse order: the hold goes, then the session.
#pragma once

#include <string>
#include <vector>

#include "test_env.h"
#include "zklock/mutex.h"
#include "zklock/semaphore.h"
#include "zklock/session.h"

namespace zklock::testing {

struct HeldLock {
  explicit HeldLock(const std::string& stem)
      : server(shared_server()),
        path(unique_path(stem)),
        holder_session(options_for(server.connect)),
        holder(holder_session, path) {
    holder.lock();
  }
  // The nodes on `path` now, the holder's among them (seen through holder_session).
  std::vector<std::string> nodes() { return lock_children(holder_session, path); }

  const ServerRef server;
  const std::string path;
  Session holder_session;
  Mutex holder;
};

struct HeldLease {
  explicit HeldLease(const std::string& stem)
      : server(shared_server()),
        path(unique_path(stem)),
        holder_session(options_for(server.connect)),
        holder(holder_session, path, 1),
        lease(holder.acquire()) {}

  const ServerRef server;
  const std::string path;
  Session holder_session;
  Semaphore holder;  // of one lease
  Lease lease;       // holder's
};

}  // namespace zklock::testing
