// zklock/fenced_write.h: FencedWrite, ZooKeeper writes that apply only while a lock is held.
//
//   zklock::FencedWrite w;
//   w.set("/app/counter", std::to_string(n + 1), stat.version);
//   mutex.commit_fenced(w);   // one multi: check(our lock node) + the writes; all or nothing
//
// ZooKeeper applies a multi atomically: if our lock node is gone (session expired, node deleted),
// the check fails and nothing is written - even for a holder that was paused past its expiry and
// does not know it yet. This fences writes to ZooKeeper itself; other resources check the
// FencingToken (see docs/fencing.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "zklock/session.h"

namespace zklock {

class FencedWrite {
 public:
  struct Op {
    enum class Kind { kCreate, kSet, kRemove, kCheck } kind;
    std::string path;
    std::string data;
    int version = -1;
    CreateMode mode = CreateMode::kPersistent;
  };

  /// Adds: create `path` with `data`.
  FencedWrite& create(std::string path, std::string data = {},
                      CreateMode mode = CreateMode::kPersistent) {
    ops_.push_back({Op::Kind::kCreate, std::move(path), std::move(data), -1, mode});
    return *this;
  }
  /// Adds: set `path`'s data if its version matches (-1: any).
  FencedWrite& set(std::string path, std::string data, int version = -1) {
    ops_.push_back(
        {Op::Kind::kSet, std::move(path), std::move(data), version, CreateMode::kPersistent});
    return *this;
  }
  /// Adds: delete `path` if its version matches (-1: any).
  FencedWrite& remove(std::string path, int version = -1) {
    ops_.push_back({Op::Kind::kRemove, std::move(path), {}, version, CreateMode::kPersistent});
    return *this;
  }
  /// Adds: require `path` to exist with `version` (-1: any version).
  FencedWrite& check(std::string path, int version = -1) {
    ops_.push_back({Op::Kind::kCheck, std::move(path), {}, version, CreateMode::kPersistent});
    return *this;
  }

  const std::vector<Op>& ops() const noexcept { return ops_; }
  bool empty() const noexcept { return ops_.empty(); }

 private:
  std::vector<Op> ops_;
};

}  // namespace zklock
