// zklock/testing/fault_hook.h: inject faults into zklock's ZooKeeper client seam, for tests.
//
// Not for production code. Installed so that applications can test their own handling of lost
// replies, refused requests and lost sessions the way zklock's own tests do, against a real server:
//
//   auto hook = std::make_shared<MyHook>();               // decides each request's fate
//   auto session = zklock::testing::open_session(options, hook);
//   zklock::Mutex mutex(*session, "/locks/x");
//
// Every request such a Session sends passes through the hook first. The hook can let it through,
// fail it before it is sent, or send it and then hide the reply behind an error - which is exactly
// what a lost reply looks like to a client (the request may well have been applied).
#pragma once

#include <memory>
#include <string_view>

#include "zklock/errors.h"
#include "zklock/session.h"

namespace zklock::testing {

/// The requests zklock sends.
enum class Operation {
  kCreate,
  kDelete,
  kGetData,
  kSetData,
  kGetChildren,
  kExists,
  kMulti,
  kRemoveWatches,
  kSync,
  kAddAuth,  // adding the session's credentials (path: empty)
};

struct FaultDecision {
  enum class Kind {
    kPass,            // send the request, deliver its reply
    kFailBeforeSend,  // do not send; the caller sees `code`
    kLoseReply,       // send it (the server applies it), then report `code` instead of the reply
  };
  Kind kind = Kind::kPass;
  Errc code = Errc::connection_loss;

  static FaultDecision pass() { return {}; }
  static FaultDecision fail_before_send(Errc c) { return {Kind::kFailBeforeSend, c}; }
  static FaultDecision lose_reply(Errc c = Errc::connection_loss) { return {Kind::kLoseReply, c}; }
};

/// Decides the fate of each request. Called on whichever thread sends the request (an application
/// thread, zklock's monitor thread or the C client's completion thread), possibly while zklock
/// holds locks of its own (a Mutex sends its requests under its lock): it must be thread-safe, must
/// not call back into the Session it belongs to or its Mutexes, and must not wait for anything that
/// does. It may block otherwise (stop a server, use another Session): that thread's requests wait.
class FaultHook {
 public:
  virtual ~FaultHook() = default;
  virtual FaultDecision on_request(Operation op, std::string_view path) = 0;
};

/// Effects: as Session(options), with every request of the session (of every generation) passing
///   through `hook` first.
/// Throws: as Session(options).
std::unique_ptr<Session> open_session(SessionOptions options, std::shared_ptr<FaultHook> hook);

}  // namespace zklock::testing
