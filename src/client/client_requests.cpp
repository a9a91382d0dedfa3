// ClientConnection, its requests: each handed to the C client under the connection's lock, with
// its context kept alive until the C client is done with it; refusals completed on the listener's
// deferred-task thread, never on the submitter's.
#include <cstring>
#include <system_error>
#include <utility>

#include "client/c_client.h"
#include "client/client_connection.h"

namespace zklock::detail {

using namespace c_client;  // NOLINT(google-build-using-namespace): this seam's own glue
using testing::FaultDecision;
using testing::Operation;

// One request's submission: holds mutex_ while the request is handed to the C client. Requests
// that fail at once are completed later, on the listener's deferred-task thread, handed over only
// after mutex_ is released - never on the submitting thread, which may hold locks of its own.
class ClientConnection::Submission {
 public:
  explicit Submission(ClientConnection& connection)
      : connection_(connection), lock_(connection.mutex_) {}
  ~Submission() {
    lock_.unlock();
    for (auto& [done, code] : failures_) {
      connection_.listener_.defer([done = std::move(done), code = code]() mutable {
        OpResult r;
        r.rc = code;
        done(std::move(r));
      });
    }
  }
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;
  void fail(Completion done, Errc code) { failures_.emplace_back(std::move(done), code); }

 private:
  ClientConnection& connection_;
  std::unique_lock<std::mutex> lock_;
  std::vector<std::pair<Completion, Errc>> failures_;
};

FaultDecision ClientConnection::consult_hook(Operation op, const std::string& path) const {
  return fault_hook_ ? fault_hook_->on_request(op, path) : FaultDecision::pass();
}

// Returns null (and fails `done` soon) when the request must not go out.
ClientConnection::OpContext* ClientConnection::begin(Submission& submission, Operation op,
                                                     const std::string& path, Completion& done,
                                                     const FaultDecision& decision,
                                                     bool via_leader) {
  if (closed_ || zh_ == nullptr) {
    submission.fail(std::move(done), Errc::closing);
    return nullptr;
  }
  if (decision.kind == FaultDecision::Kind::kFailBeforeSend) {
    submission.fail(std::move(done), decision.code);
    return nullptr;
  }
  if (counters_) counters_->sent(op);
  auto ctx = std::make_unique<OpContext>();
  ctx->connection = this;
  ctx->id = next_id_++;
  ctx->done = std::move(done);
  ctx->sent = BootClock::now();
  ctx->via_leader = via_leader;
  ctx->lose_reply = decision.kind == FaultDecision::Kind::kLoseReply;
  ctx->lose_code = decision.code;
  ctx->path = path;
  OpContext* raw = ctx.get();
  pending_.emplace(raw->id, std::move(ctx));
  return raw;
}

// After the zoo_a* call.
void ClientConnection::submitted(Submission& submission, OpContext* ctx, int rc) {
  if (rc == ZOK) return;
  // The C client refused the request outright: it will never call back.
  auto it = pending_.find(ctx->id);
  Completion done = std::move(it->second->done);
  if (it->second->watch_id != 0) forget_watch_locked(it->second->watch_id);
  pending_.erase(it);
  if (pending_.empty()) drained_.notify_all();
  submission.fail(std::move(done), static_cast<Errc>(rc));
}

void ClientConnection::create(const std::string& path, const std::string& data, NodeMode mode,
                              const Acl& acl, Completion done) {
  const FaultDecision decision = consult_hook(Operation::kCreate, path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kCreate, path, done, decision, true);
  if (!ctx) return;
  ctx->data = data;
  const struct ACL_vector* c_acl = fill_acl(*ctx, acl);
  submitted(
      submission, ctx,
      zoo_acreate2(zh_, ctx->path.c_str(), ctx->data.data(), static_cast<int>(ctx->data.size()),
                   c_acl, to_c_mode(mode), &on_string_stat, ctx));
}

void ClientConnection::get_children(const std::string& path, Completion done) {
  const FaultDecision decision = consult_hook(Operation::kGetChildren, path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kGetChildren, path, done, decision, false);
  if (!ctx) return;
  submitted(submission, ctx, zoo_aget_children2(zh_, ctx->path.c_str(), 0, &on_strings_stat, ctx));
}

std::uint64_t ClientConnection::get_data(const std::string& path, WatchFn watch, Completion done) {
  const FaultDecision decision = consult_hook(Operation::kGetData, path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kGetData, path, done, decision, false);
  if (!ctx) return 0;
  if (!watch) {
    submitted(submission, ctx, zoo_aget(zh_, ctx->path.c_str(), 0, &on_data, ctx));
    return 0;
  }
  const std::uint64_t watch_id = next_id_++;
  Watch w{path, std::move(watch), false};
  ++watches_per_path_[watch_key(w)];
  watches_.emplace(watch_id, std::move(w));
  ctx->watch_id = watch_id;
  const int rc = zoo_awget(zh_, ctx->path.c_str(), &on_watch, reinterpret_cast<void*>(watch_id),
                           &on_data, ctx);
  submitted(submission, ctx, rc);
  return rc == ZOK ? watch_id : 0;
}

void ClientConnection::exists(const std::string& path, Completion done) {
  const FaultDecision decision = consult_hook(Operation::kExists, path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kExists, path, done, decision, false);
  if (!ctx) return;
  submitted(submission, ctx, zoo_aexists(zh_, ctx->path.c_str(), 0, &on_stat, ctx));
}

void ClientConnection::get_config(Completion done) {
  const FaultDecision decision = consult_hook(Operation::kGetData, ZOO_CONFIG_NODE);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kGetData, ZOO_CONFIG_NODE, done, decision, false);
  if (!ctx) return;
  // zoo_awgetconfig sends the config node's path as it is: the chroot is not prepended.
  submitted(submission, ctx, zoo_awgetconfig(zh_, nullptr, nullptr, &on_data, ctx));
}

std::uint64_t ClientConnection::get_children_watched(const std::string& path, WatchFn watch,
                                                     Completion done) {
  const FaultDecision decision = consult_hook(Operation::kGetChildren, path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kGetChildren, path, done, decision, false);
  if (!ctx) return 0;
  const std::uint64_t watch_id = next_id_++;
  Watch w{path, std::move(watch), true};
  ++watches_per_path_[watch_key(w)];
  watches_.emplace(watch_id, std::move(w));
  ctx->watch_id = watch_id;
  const int rc = zoo_awget_children(zh_, ctx->path.c_str(), &on_watch,
                                    reinterpret_cast<void*>(watch_id), &on_strings, ctx);
  submitted(submission, ctx, rc);
  return rc == ZOK ? watch_id : 0;
}

void ClientConnection::remove(const std::string& path, int version, Completion done) {
  const FaultDecision decision = consult_hook(Operation::kDelete, path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kDelete, path, done, decision, true);
  if (!ctx) return;
  submitted(submission, ctx, zoo_adelete(zh_, ctx->path.c_str(), version, &on_void, ctx));
}

void ClientConnection::set(const std::string& path, const std::string& data, int version,
                           Completion done) {
  const FaultDecision decision = consult_hook(Operation::kSetData, path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kSetData, path, done, decision, true);
  if (!ctx) return;
  ctx->data = data;
  submitted(submission, ctx,
            zoo_aset(zh_, ctx->path.c_str(), ctx->data.data(), static_cast<int>(ctx->data.size()),
                     version, &on_stat, ctx));
}

void ClientConnection::sync(const std::string& path, Completion done) {
  const FaultDecision decision = consult_hook(Operation::kSync, path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kSync, path, done, decision, true);
  if (!ctx) return;
  submitted(submission, ctx, zoo_async(zh_, ctx->path.c_str(), &on_string, ctx));
}

void ClientConnection::add_digest_auth(const std::string& user_password, Completion done) {
  const FaultDecision decision = consult_hook(Operation::kAddAuth, {});
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kAddAuth, {}, done, decision, false);
  if (!ctx) return;
  ctx->data = user_password;
  submitted(submission, ctx,
            zoo_add_auth(zh_, "digest", ctx->data.data(), static_cast<int>(ctx->data.size()),
                         &on_void, ctx));
}

void ClientConnection::multi(std::vector<MultiOp> ops, const Acl& acl, Completion done) {
  const std::string first_path = ops.empty() ? std::string() : ops.front().path;
  const FaultDecision decision = consult_hook(Operation::kMulti, first_path);
  Submission submission(*this);
  OpContext* ctx = begin(submission, Operation::kMulti, first_path, done, decision, true);
  if (!ctx) return;
  const std::size_t n = ops.size();
  ctx->multi_ops = std::move(ops);
  ctx->multi_c_ops.resize(n);
  ctx->multi_results.resize(n);
  ctx->multi_path_buffers.resize(n);
  ctx->multi_stats.resize(n);
  const struct ACL_vector* c_acl = fill_acl(*ctx, acl);
  for (std::size_t i = 0; i < n; ++i) {
    MultiOp& op = ctx->multi_ops[i];
    zoo_op_t* c = &ctx->multi_c_ops[i];
    switch (op.kind) {
      case MultiOp::Kind::kCheck:
        zoo_check_op_init(c, op.path.c_str(), op.version);
        break;
      case MultiOp::Kind::kDelete:
        zoo_delete_op_init(c, op.path.c_str(), op.version);
        break;
      case MultiOp::Kind::kSet:
        zoo_set_op_init(c, op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                        op.version, &ctx->multi_stats[i]);
        break;
      case MultiOp::Kind::kCreate:
        ctx->multi_path_buffers[i].resize(op.path.size() + 32);
        zoo_create_op_init(c, op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                           c_acl, to_c_mode(op.mode), ctx->multi_path_buffers[i].data(),
                           static_cast<int>(ctx->multi_path_buffers[i].size()));
        break;
    }
  }
  submitted(submission, ctx,
            zoo_amulti(zh_, static_cast<int>(n), ctx->multi_c_ops.data(), ctx->multi_results.data(),
                       &on_void, ctx));
}

void ClientConnection::forget_watch_locked(std::uint64_t watch_id) {
  auto it = watches_.find(watch_id);
  if (it == watches_.end()) return;
  auto count = watches_per_path_.find(watch_key(it->second));
  if (count != watches_per_path_.end() && --count->second <= 0) watches_per_path_.erase(count);
  watches_.erase(it);
}

void ClientConnection::remove_watch(const std::string& path, std::uint64_t watch_id,
                                    Completion done) {
  const FaultDecision decision = consult_hook(Operation::kRemoveWatches, path);
  Submission submission(*this);
  bool children = false;
  if (auto it = watches_.find(watch_id); it != watches_.end()) children = it->second.children;
  forget_watch_locked(watch_id);
  send_removal_locked(submission, Watch{path, {}, children}, std::move(done), decision);
}

void ClientConnection::send_removal_locked(Submission& submission, const Watch& kind,
                                           Completion done, const FaultDecision& decision) {
  const std::string key = watch_key(kind);
  if (watches_per_path_.count(key) != 0) {
    submission.fail(std::move(done), Errc::ok);  // another of ours still needs the server's watch
    return;
  }
  // A removal lost with its connection leaves the watcher in the C client's table, which sets it
  // again on the next connection: remember it, to be sent again then (resend_lost_removals).
  done = [lost = lost_removals_, key, done = std::move(done)](OpResult&& r) mutable {
    if (r.rc == Errc::connection_loss || r.rc == Errc::operation_timeout) {
      std::lock_guard lock(lost->mutex);
      lost->keys.insert(key);
    }
    done(std::move(r));
  };
  OpContext* ctx = begin(submission, Operation::kRemoveWatches, kind.path, done, decision, false);
  if (!ctx) return;
  // The "all" variant sends RemoveWatches whatever the client's own table says - also while the
  // read that sets the watch is still on its way (the server applies the two in order); the
  // per-watcher zoo_aremove_watches() checks the local table first and sends nothing then.
  // Server side (local = 0) only: the 3.8.0 async call with local = 1 corrupts memory. 3.8.0
  // declares the completion as a pointer to a function pointer but stores and calls it as the
  // function pointer itself, hence the cast.
  auto* completion = reinterpret_cast<void_completion_t*>(reinterpret_cast<void*>(&on_void));
  submitted(submission, ctx,
            zoo_aremove_all_watches(zh_, ctx->path.c_str(),
                                    kind.children ? ZWATCHTYPE_CHILD : ZWATCHTYPE_DATA, 0,
                                    completion, ctx));
}

void ClientConnection::resend_lost_removals() {
  std::set<std::string> keys;
  {
    std::lock_guard lock(lost_removals_->mutex);
    keys.swap(lost_removals_->keys);
  }
  for (const std::string& key : keys) {
    const Watch kind{key.substr(2), {}, key[0] == 'c'};  // watch_key(): "c:" or "d:", the path
    const FaultDecision decision = consult_hook(Operation::kRemoveWatches, kind.path);
    Submission submission(*this);
    send_removal_locked(
        submission, kind, [](OpResult&&) {}, decision);
  }
}

std::size_t ClientConnection::watch_count() const {
  std::lock_guard lock(mutex_);
  return watches_.size();
}

}  // namespace zklock::detail
