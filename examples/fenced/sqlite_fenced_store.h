// examples/fenced/sqlite_fenced_store.h: a counter in SQLite that refuses writes from stale lock
// holders.
//
// The table keeps the counter and the highest fencing token that has written it:
//
//   counter(id = 1, value, token)
//
// An increment is ONE statement that applies only when the caller's token is not older than the
// stored one, and records the caller's token:
//
//   UPDATE counter SET value = value + 1, token = ?1 WHERE id = 1 AND token <= ?1
//
// The comparison and the write happen atomically inside SQLite, so a holder that was paused past
// its lock's expiry - and does not know it - cannot overwrite the work of the holder that took
// over: the new holder's token is larger, it is stored by the new holder's first write, and from
// then on every write with the old token matches no row. Equal tokens are accepted: one holder may
// write several times under one acquisition.
//
// Several processes may share the database file: SQLite's busy timeout makes a process that finds
// the file locked wait for it instead of failing. The UPDATE runs inside BEGIN IMMEDIATE only so
// that the write lock is taken before anything is read (then SQLite always waits, never fails
// with SQLITE_BUSY at once); the fence is the UPDATE's WHERE clause.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "zklock/fencing_token.h"

struct sqlite3;

namespace zklock::examples {

class FencedCounterStore {
 public:
  struct State {
    std::int64_t value = 0;
    std::int64_t token = 0;  // the highest token accepted so far (0: none yet)
  };
  struct Outcome {
    bool applied = false;  // false: refused, the stored token is newer than ours
    State state;           // applied: the row as written; refused: the row that refused us
  };

  /// Effects: opens (creating if needed) the database at `path` and the counter row (value 0,
  ///   token 0) if missing. Other connections that hold the file locked are waited for up to
  ///   `busy_timeout`. Throws: std::runtime_error with SQLite's message.
  explicit FencedCounterStore(const std::string& path,
                              std::chrono::milliseconds busy_timeout = std::chrono::seconds(30));
  ~FencedCounterStore();
  FencedCounterStore(const FencedCounterStore&) = delete;
  FencedCounterStore& operator=(const FencedCounterStore&) = delete;

  /// Returns: the stored row.
  State read() const;

  /// Effects: value + 1 and token := `token`, in one statement, only if `token` is not older than
  ///   the stored token. Throws: std::invalid_argument for an empty token (an unfenced write is a
  ///   bug, not something to let through); std::runtime_error for SQLite errors.
  Outcome increment(zklock::FencingToken token);

 private:
  void exec(const char* sql);
  sqlite3* db_ = nullptr;
};

}  // namespace zklock::examples
