// zklock-example-znode-counter: processes take turns incrementing a counter kept in a znode,
// each write made with Mutex::commit_fenced, so a holder whose lock has meanwhile passed to
// someone else writes nothing.
//
//   zklock-example-znode-counter --connect 127.0.0.1:2181 --iterations 100 &
//   zklock-example-znode-counter --connect 127.0.0.1:2181 --iterations 100 &
//   wait   # the counter node /zklock-examples/znode-counter-value now holds 200
//
// Each hold: lock, read the counter (data and version), write value + 1 with commit_fenced, unlock.
// commit_fenced sends one ZooKeeper multi: "our lock node still exists" + "set the counter if its
// version is still the one we read". The server applies both or neither, so a holder paused past
// its session's expiry (its lock node is gone with the session) gets LockLostError and the counter
// keeps the value the new holder wrote.
//
// Output, one line per event (tests parse them):
//   acquired <token>
//   waiting for <file>                                             (with --hold-until)
//   wrote <value> with token <token>
//   write refused: <LockLostError's message>                       (exit status 3)
#include <iostream>
#include <map>
#include <stdexcept>

#include "example_options.h"
#include "zklock/zklock.h"

using namespace zklock::examples;

namespace {

int run(const CommonOptions& o, const std::string& counter_path) {
  zklock::SessionOptions so;
  so.connect = o.connect;
  so.session_timeout = std::chrono::milliseconds(o.session_timeout_ms);
  zklock::Session session(so);
  zklock::Mutex mutex(session, o.path);

  try {
    session.create(counter_path, "0", zklock::CreateMode::kPersistent, /*make_parents=*/true);
  } catch (const zklock::Error& e) {
    if (e.errc() != zklock::Errc::node_exists) throw;  // another process created it first: fine
  }

  for (long i = 0; i < o.iterations; ++i) {
    zklock::Guard guard(mutex);  // blocks until held; unlocks at the end of the iteration
    const zklock::FencingToken token = guard.fencing_token();
    say("acquired " + token.to_string());

    const auto node = session.get(counter_path);
    if (!node) throw std::runtime_error("counter node " + counter_path + " is missing");
    long long value = 0;
    try {
      value = std::stoll(node->data);
    } catch (const std::exception&) {
      throw std::runtime_error("counter node " + counter_path + " holds \"" + node->data +
                               "\", not a number");
    }
    pause_before_write(o);  // the read is done, the write not yet: the classic place to be paused

    zklock::FencedWrite write;
    write.set(counter_path, std::to_string(value + 1), node->stat.version);
    try {
      mutex.commit_fenced(write);
    } catch (const zklock::LockLostError& e) {
      say(std::string("write refused: ") + e.what());
      return kExitRefused;
    }
    say("wrote " + std::to_string(value + 1) + " with token " + token.to_string());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return example_main(
      argc, argv, "zklock-example-znode-counter", "/zklock-examples/znode-counter",
      {{"counter", ""}},
      "  --counter PATH               the counter znode (default <lock path>-value)\n",
      [](CommonOptions& o, std::map<std::string, std::string>& extra) {
        return run(o, extra["counter"].empty() ? o.path + "-value" : extra["counter"]);
      });
}
