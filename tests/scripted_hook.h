// tests/scripted_hook.h: fault hooks for tests that inject faults at the client seam
// (zklock/testing/fault_hook.h), and a Session that uses one.
//  * ScriptedHook - every request is shown to an action; its decision (or pass) is the request's
//    fate; it records every request it saw, and fired() tells whether the action has decided on
//    one. Without an action it passes everything: a hook that only records and counts.
//  * OneShotHook - a ScriptedHook whose action decides once: only the first request it decides on
//    gets that decision, every later request passes without being shown to it (a decision of
//    pass() still counts as the one, for actions that act on the side). The action is called by
//    one request at a time.
//  * fault_on(op, part, decision) - the action of the usual fault: `decision` for requests of `op`
//    whose path contains `part`.
//  * scripted_session, one_shot_session - a Session with either hook; silenceable_session - one
//    that goes silent on demand; FaultedSession - one test's
//    lock path on the shared server and a session with a OneShotHook, the start of many a fault
//    test.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "test_env.h"
#include "zklock/session.h"
#include "zklock/testing/fault_hook.h"

namespace zklock::testing {

using HookAction = std::function<std::optional<FaultDecision>(Operation, std::string_view)>;

class ScriptedHook : public FaultHook {
 public:
  using Action = HookAction;
  explicit ScriptedHook(Action action = nullptr) : ScriptedHook(std::move(action), false) {}
  FaultDecision on_request(Operation op, std::string_view path) override {
    Action action;
    {
      std::lock_guard lock(mutex_);
      seen_.emplace_back(op, std::string(path));
      action = action_;
    }
    if (!action) return FaultDecision::pass();
    std::unique_lock once(once_mutex_, std::defer_lock);
    if (once_) {
      once.lock();
      if (fired_) return FaultDecision::pass();
    }
    const std::optional<FaultDecision> d = action(op, path);
    if (!d) return FaultDecision::pass();
    fired_ = true;
    return *d;
  }
  std::vector<std::pair<Operation, std::string>> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  int count(Operation op) const {
    std::lock_guard lock(mutex_);
    int n = 0;
    for (const auto& s : seen_) n += s.first == op;
    return n;
  }
  bool fired() const { return fired_; }

 protected:
  ScriptedHook(Action action, bool once) : once_(once), action_(std::move(action)) {}

 private:
  const bool once_;
  std::mutex once_mutex_;  // a OneShotHook's action runs for one request at a time
  std::atomic<bool> fired_{false};
  mutable std::mutex mutex_;
  Action action_;
  std::vector<std::pair<Operation, std::string>> seen_;
};

class OneShotHook : public ScriptedHook {
 public:
  explicit OneShotHook(Action action) : ScriptedHook(std::move(action), true) {}
};

// `decision` for each request of `op` whose path contains `part` ("" : any path).
inline HookAction fault_on(Operation op, std::string part, FaultDecision decision) {
  return [op, part = std::move(part), decision](
             Operation o, std::string_view p) -> std::optional<FaultDecision> {
    if (o != op || p.find(part) == std::string_view::npos) return std::nullopt;
    return decision;
  };
}

// A Session each of whose requests is first shown to `action` (scripted_session: a
// ScriptedHook), or whose first request that `action` decides on gets that decision
// (one_shot_session: a OneShotHook); `hook` keeps what it saw.
struct ScriptedSession {
  std::shared_ptr<ScriptedHook> hook;
  std::unique_ptr<Session> session;
};
inline ScriptedSession scripted_session(const SessionOptions& options, HookAction action) {
  auto hook = std::make_shared<ScriptedHook>(std::move(action));
  return {hook, open_session(options, hook)};
}
// A Session whose every request fails before it is sent (no answer) while `silent` is true: the
// session is Lost on its own clock, as if the network were cut. `silent` must outlive it.
inline ScriptedSession silenceable_session(const SessionOptions& options,
                                           const std::atomic<bool>& silent) {
  return scripted_session(options,
                          [&silent](Operation, std::string_view) -> std::optional<FaultDecision> {
                            if (!silent) return std::nullopt;
                            return FaultDecision::fail_before_send(Errc::connection_loss);
                          });
}

inline ScriptedSession one_shot_session(const SessionOptions& options, HookAction action) {
  auto hook = std::make_shared<OneShotHook>(std::move(action));
  return {hook, open_session(options, hook)};
}

// One test's new lock path on the shared server (unique_path(stem)), and a session there whose
// first request that `fault` decides on gets that decision, every other passing
// (one_shot_session): `hook` keeps what the session sent and tells whether the fault fired.
struct FaultedSession {
  FaultedSession(const std::string& stem, HookAction fault)
      : server(shared_server()),
        path(unique_path(stem)),
        scripted(one_shot_session(options_for(server.connect), std::move(fault))),
        hook(*scripted.hook),
        session(*scripted.session) {}

  const ServerRef server;
  const std::string path;
  const ScriptedSession scripted;
  ScriptedHook& hook;
  Session& session;
};

}  // namespace zklock::testing
