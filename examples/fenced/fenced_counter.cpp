// zklock-example-fenced-counter: processes take turns incrementing a counter in SQLite under a
// zklock Mutex, and the database refuses the write of a holder whose lock has meanwhile passed to
// someone else.
//
//   zklock-example-fenced-counter --connect 127.0.0.1:2181 --db /tmp/counter.db --iterations 100 &
//   zklock-example-fenced-counter --connect 127.0.0.1:2181 --db /tmp/counter.db --iterations 100 &
//   wait; sqlite3 /tmp/counter.db 'SELECT value, token FROM counter'   # 200, the last token
//
// Each hold: lock, take the fencing token, write with the token, unlock. The lock alone cannot
// keep a paused holder from writing late (see docs/fencing.md); the token does, because the
// database compares it with the highest token it has seen in the same statement that writes.
//
// Output, one line per event (tests parse them):
//   acquired <token>
//   waiting for <file>                                             (with --hold-until)
//   wrote <value> with token <token>
//   write refused: token <token> is older than <stored token>     (exit status 3)
#include <iostream>
#include <map>

#include "example_options.h"
#include "sqlite_fenced_store.h"
#include "zklock/zklock.h"

using namespace zklock::examples;

namespace {

int run(const CommonOptions& o, const std::string& db_path) {
  FencedCounterStore store(db_path);

  zklock::SessionOptions so;
  so.connect = o.connect;
  so.session_timeout = std::chrono::milliseconds(o.session_timeout_ms);
  zklock::Session session(so);
  zklock::Mutex mutex(session, o.path);

  for (long i = 0; i < o.iterations; ++i) {
    zklock::Guard guard(mutex);  // blocks until held; unlocks at the end of the iteration
    const zklock::FencingToken token = guard.fencing_token();
    say("acquired " + token.to_string());

    // A local check is still worth making - it stops a holder that already knows it lost the lock
    // - but it cannot stop one that is paused right after it. Only the database's check can.
    guard.throw_if_lost();
    pause_before_write(o);

    const FencedCounterStore::Outcome r = store.increment(token);
    if (!r.applied) {
      say("write refused: token " + token.to_string() + " is older than " +
          std::to_string(r.state.token));
      return kExitRefused;
    }
    say("wrote " + std::to_string(r.state.value) + " with token " + token.to_string());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return example_main(
      argc, argv, "zklock-example-fenced-counter", "/zklock-examples/fenced-counter",
      {{"db", "fenced-counter.db"}},
      "  --db FILE                    SQLite database (default fenced-counter.db)\n",
      [](CommonOptions& o, std::map<std::string, std::string>& extra) {
        return run(o, extra["db"]);
      });
}
