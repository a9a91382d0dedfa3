// The lease count stored with the semaphore path (internal): the data of <path> is N in decimal,
// as python kazoo's Semaphore stores it. The first client writes it (creating <path>, or setting
// the empty data of a <path> that Curator or an operator created); every later one compares.
#include <charconv>
#include <string>

#include "base/paths.h"
#include "base/retry_rules.h"
#include "semaphore/semaphore_core.h"

namespace zklock::detail {
namespace {

constexpr int kMaxRaces = 16;  // the node created or deleted under us again and again: give up

}  // namespace

bool SemaphoreCore::check_count(std::optional<SteadyClock::time_point> deadline) {
  const std::string context = this->context() + "::acquire";
  const std::string ours = std::to_string(max_leases_);
  const NodeMode mode = options_.container_parents ? NodeMode::kContainer : NodeMode::kPersistent;
  for (int round = 0; round < kMaxRaces; ++round) {
    if (session_->closed()) throw ClosedError(Errc::closed, context);
    auto c = await_connection(std::nullopt, deadline);
    if (!c) {
      if (session_->closed()) throw ClosedError(Errc::closed, context);
      return false;  // the deadline passed while no connection was up
    }
    OpResult r = call(c, [&](ClientConnection& conn, Completion done) {
      conn.get_data(path_, {}, std::move(done));
    });
    if (r.rc == Errc::ok) {
      if (r.value == ours) return true;
      if (!r.value.empty()) {
        int stored = 0;
        const char* end = r.value.data() + r.value.size();
        const auto [p, ec] = std::from_chars(r.value.data(), end, stored);
        std::string what = context;
        if (ec == std::errc() && p == end) {
          what += ": the path stores a lease count of " + std::to_string(stored);
        } else {
          what += ": the path's data is not a lease count (\"" + r.value.substr(0, 40) + "\")";
        }
        what += ", this Semaphore was given ";
        what += ours;
        throw LeaseCountMismatchError(what);
      }
      // Empty: created by Curator (which stores no count), kazoo's ensure_path or an operator.
      // Set it only if nobody else did meanwhile (the version), then look again.
      const int version = r.stat.version;
      r = call(c, [&](ClientConnection& conn, Completion done) {
        conn.set(path_, ours, version, std::move(done));
      });
      if (r.rc == Errc::ok) return true;
      if (r.rc == Errc::bad_version || r.rc == Errc::no_node || cured_by_reconnecting(r.rc) ||
          worth_retrying_later(r.rc))
        continue;
    } else if (r.rc == Errc::no_node) {
      r = call(c, [&](ClientConnection& conn, Completion done) {
        conn.create(path_, ours, mode, session_->node_acl(), std::move(done));
      });
      if (r.rc == Errc::ok || r.rc == Errc::node_exists) continue;  // look (again) at what is there
      if (r.rc == Errc::no_node) {
        create_ancestors(parent_path(path_));
        continue;
      }
      // Created or not: the next look tells.
      if (cured_by_reconnecting(r.rc) || worth_retrying_later(r.rc)) continue;
    } else if (cured_by_reconnecting(r.rc) || worth_retrying_later(r.rc)) {
      continue;
    }
    if (is_session_gone(r.rc)) {
      continue;  // the next generation tries again
    }
    if (r.rc == Errc::closed) throw ClosedError(Errc::closed, context);
    throw_error(r.rc, context + ": storing the lease count in " + path_);
  }
  throw Error(Errc::runtime_inconsistency,
              context + ": " + path_ + " keeps changing; the lease count could not be checked");
}

// The missing ancestors of `path` (and `path`), top down. Only what is missing is created: the
// server checks CREATE permission on the parent before it looks whether a node exists.
void SemaphoreCore::create_ancestors(const std::string& path) {
  if (path == "/") return;
  const NodeMode mode = options_.container_parents ? NodeMode::kContainer : NodeMode::kPersistent;
  std::vector<std::string> chain;
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    chain.push_back(path.substr(0, slash));
  }
  chain.push_back(path);
  for (const auto& node : chain) {
    auto c = session_->connection();
    if (!c) return;
    const OpResult seen = call(
        c, [&](ClientConnection& conn, Completion done) { conn.exists(node, std::move(done)); });
    if (seen.rc != Errc::no_node) continue;  // there, or we cannot tell: the caller looks again
    call(c, [&](ClientConnection& conn, Completion done) {
      conn.create(node, {}, mode, session_->node_acl(), std::move(done));
    });
  }
}

}  // namespace zklock::detail
