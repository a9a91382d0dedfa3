// zklock/fault_hook.h: a seam in zklock's ZooKeeper client layer where tests inject faults.
//
// Every request zklock sends passes through the Session's FaultHook (if one is set) first. The
// hook can let it through, fail it before it is sent, or send it and then hide the reply behind an
// error - which is exactly what a lost reply looks like to a client (the request may well have been
// applied). Production code sets no hook; the cost is then one null check per request.
#pragma once

#include <string_view>

#include "zklock/errors.h"

namespace zklock {

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
/// thread or the C client's completion thread): must be thread-safe and quick.
class FaultHook {
 public:
  virtual ~FaultHook() = default;
  virtual FaultDecision on_request(Operation op, std::string_view path) = 0;
};

}  // namespace zklock
