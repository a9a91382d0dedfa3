// tests/scripted_hook.h: fault hooks for tests that inject faults at the client seam
// (zklock/testing/fault_hook.h), and a Session that uses one.
//  * ScriptedHook - every request is shown to an action; its decision (or pass) is the request's
//    fate; it records every request it saw.
//  * OneShotHook - only the first request the action decides on gets that decision (a decision
//    of pass() still counts as the one, for actions that act on the side).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zklock/session.h"
#include "zklock/testing/fault_hook.h"

namespace zklock::testing {

using HookAction = std::function<std::optional<FaultDecision>(Operation, std::string_view)>;

class ScriptedHook : public FaultHook {
 public:
  using Action = HookAction;
  explicit ScriptedHook(Action action) : action_(std::move(action)) {}
  FaultDecision on_request(Operation op, std::string_view path) override {
    Action action;
    {
      std::lock_guard lock(mutex_);
      seen_.emplace_back(op, std::string(path));
      action = action_;
    }
    const std::optional<FaultDecision> d = action ? action(op, path) : std::nullopt;
    return d ? *d : FaultDecision::pass();
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

 private:
  mutable std::mutex mutex_;
  Action action_;
  std::vector<std::pair<Operation, std::string>> seen_;
};

class OneShotHook : public FaultHook {
 public:
  using Action = HookAction;
  explicit OneShotHook(Action action) : action_(std::move(action)) {}
  FaultDecision on_request(Operation op, std::string_view path) override {
    std::lock_guard lock(mutex_);
    if (fired_) return FaultDecision::pass();
    std::optional<FaultDecision> d = action_(op, path);
    if (!d) return FaultDecision::pass();
    fired_ = true;
    return *d;
  }
  bool fired() const {
    std::lock_guard lock(mutex_);
    return fired_;
  }

 private:
  mutable std::mutex mutex_;
  bool fired_ = false;
  Action action_;
};

// A Session each of whose requests is first shown to `action`; `hook` keeps what it saw.
struct ScriptedSession {
  std::shared_ptr<ScriptedHook> hook;
  std::unique_ptr<Session> session;
};
inline ScriptedSession scripted_session(const SessionOptions& options, HookAction action) {
  auto hook = std::make_shared<ScriptedHook>(std::move(action));
  return {hook, open_session(options, hook)};
}

}  // namespace zklock::testing
