#include "handle.h"

#include <zookeeper/zookeeper.h>

#include <cstring>
#include <utility>

namespace zklock::detail {

struct Handle::OpContext {
  Handle* handle = nullptr;
  std::uint64_t id = 0;
  Completion done;
  Clock::time_point sent;
  bool delivered = false;  // done() already called (by finish or fail_pending)
  bool lose_reply = false;
  Errc lose_code = Errc::ok;
  // multi keeps its op array, results and strings alive until the C client is done.
  std::vector<MultiOp> multi_ops;
  std::vector<zoo_op_t> multi_c_ops;
  std::vector<zoo_op_result_t> multi_results;
  std::vector<std::vector<char>> multi_path_buffers;
  std::vector<struct Stat> multi_stats;
};

namespace {

NodeStat to_node_stat(const struct Stat* s) {
  NodeStat n;
  if (s == nullptr) return n;
  n.czxid = s->czxid;
  n.mzxid = s->mzxid;
  n.pzxid = s->pzxid;
  n.ctime_ms = s->ctime;
  n.mtime_ms = s->mtime;
  n.version = s->version;
  n.cversion = s->cversion;
  n.aversion = s->aversion;
  n.ephemeral_owner = s->ephemeralOwner;
  n.data_length = s->dataLength;
  n.num_children = s->numChildren;
  return n;
}

// Codes that mean the server never answered (or we cannot know that it did).
bool unanswered(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZCLOSING ||
         rc == ZINVALIDSTATE || rc == ZSESSIONEXPIRED;
}

Handle::OpContext* as_ctx(const void* data) {
  return static_cast<Handle::OpContext*>(const_cast<void*>(data));
}

void on_string_stat(int rc, const char* value, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK) {
    if (value) r.value = value;
    r.stat = to_node_stat(stat);
  }
  auto* ctx = as_ctx(data);
  ctx->handle->finish(ctx, std::move(r));
}

void on_strings(int rc, const struct String_vector* strings, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK && strings) {
    r.children.reserve(static_cast<std::size_t>(strings->count));
    for (int i = 0; i < strings->count; ++i) r.children.emplace_back(strings->data[i]);
  }
  auto* ctx = as_ctx(data);
  ctx->handle->finish(ctx, std::move(r));
}

void on_data(int rc, const char* value, int value_len, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK) {
    if (value && value_len > 0) r.value.assign(value, static_cast<std::size_t>(value_len));
    r.stat = to_node_stat(stat);
  }
  auto* ctx = as_ctx(data);
  ctx->handle->finish(ctx, std::move(r));
}

void on_stat(int rc, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK) r.stat = to_node_stat(stat);
  auto* ctx = as_ctx(data);
  ctx->handle->finish(ctx, std::move(r));
}

void on_void(int rc, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  auto* ctx = as_ctx(data);
  if (!ctx->multi_results.empty()) {
    for (const auto& res : ctx->multi_results) r.multi_results.push_back(static_cast<Errc>(res.err));
  }
  ctx->handle->finish(ctx, std::move(r));
}

// Watch contexts are ids, not pointers: a watch that fires after its owner forgot it finds nothing.
void on_watch(zhandle_t* zh, int type, int /*state*/, const char* /*path*/, void* watcher_ctx) {
  if (type == ZOO_SESSION_EVENT) return;  // session events go to the handle's global watcher
  auto* handle = static_cast<Handle*>(const_cast<void*>(zoo_get_context(zh)));
  if (handle) handle->fire_watch(reinterpret_cast<std::uintptr_t>(watcher_ctx), type);
}

void on_global(zhandle_t* zh, int type, int state, const char* /*path*/, void* /*ctx*/) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* handle = static_cast<Handle*>(const_cast<void*>(zoo_get_context(zh)));
  if (handle) handle->session_event(state);
}

WatchEventType watch_type(int type) {
  if (type == ZOO_CREATED_EVENT) return WatchEventType::kCreated;
  if (type == ZOO_DELETED_EVENT) return WatchEventType::kDeleted;
  if (type == ZOO_CHANGED_EVENT) return WatchEventType::kChanged;
  if (type == ZOO_CHILD_EVENT) return WatchEventType::kChildren;
  return WatchEventType::kNotWatching;
}

}  // namespace

Handle::Handle(const std::string& connect, std::chrono::milliseconds session_timeout,
               unsigned generation, HandleListener& listener, CLogCallback log_callback,
               std::shared_ptr<FaultHook> fault_hook)
    : generation_(generation), listener_(listener), fault_hook_(std::move(fault_hook)) {
  errno = 0;
  zh_ = zookeeper_init2(connect.c_str(), &on_global, static_cast<int>(session_timeout.count()),
                        nullptr, this, ZOO_NO_LOG_CLIENTENV, log_callback);
  if (zh_ == nullptr) {
    throw InvalidArgumentError("connect string \"" + connect +
                               "\": the ZooKeeper client refused it (" + std::strerror(errno) + ")");
  }
}

Handle::~Handle() { close(Errc::closed); }

std::int64_t Handle::session_id() const noexcept {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return 0;
  const clientid_t* id = zoo_client_id(zh_);
  return id ? id->client_id : 0;
}

std::string Handle::session_password() const {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return {};
  const clientid_t* id = zoo_client_id(zh_);
  return id ? std::string(id->passwd, sizeof id->passwd) : std::string();
}

std::chrono::milliseconds Handle::negotiated_timeout() const noexcept {
  std::lock_guard lock(mutex_);
  return std::chrono::milliseconds(!closed_ && zh_ ? zoo_recv_timeout(zh_) : 0);
}

bool Handle::connected() const noexcept {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return false;
  const int s = zoo_state(zh_);
  return s == ZOO_CONNECTED_STATE || s == ZOO_READONLY_STATE;
}

// Holds mutex_ while one request is submitted. Requests that fail at once are completed later, on
// the Session's monitor thread - handed over only after mutex_ is released, since the Session takes
// its own lock to queue them and holds it while it sends (lock order: Session, then Handle).
class Handle::Locked {
 public:
  explicit Locked(Handle& handle) : handle_(handle), lock_(handle.mutex_) {}
  ~Locked() {
    lock_.unlock();
    for (auto& [done, code] : failures_) {
      handle_.listener_.defer([done = std::move(done), code = code]() mutable {
        OpResult r;
        r.rc = code;
        done(std::move(r));
      });
    }
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  void fail(Completion done, Errc code) { failures_.emplace_back(std::move(done), code); }

 private:
  Handle& handle_;
  std::unique_lock<std::mutex> lock_;
  std::vector<std::pair<Completion, Errc>> failures_;
};

// Returns null (and fails `done` soon) when the request must not go out.
Handle::OpContext* Handle::begin(Locked& locked, Operation op, const std::string& path, Completion& done) {
  if (closed_ || zh_ == nullptr) {
    locked.fail(std::move(done), Errc::closing);
    return nullptr;
  }
  FaultDecision decision;
  if (fault_hook_) decision = fault_hook_->on_request(op, path);
  if (decision.kind == FaultDecision::Kind::kFailBeforeSend) {
    locked.fail(std::move(done), decision.code);
    return nullptr;
  }
  auto ctx = std::make_unique<OpContext>();
  ctx->handle = this;
  ctx->id = next_id_++;
  ctx->done = std::move(done);
  ctx->sent = Clock::now();
  ctx->lose_reply = decision.kind == FaultDecision::Kind::kLoseReply;
  ctx->lose_code = decision.code;
  OpContext* raw = ctx.get();
  pending_.emplace(raw->id, std::move(ctx));
  return raw;
}

// After the zoo_a* call.
void Handle::submitted(Locked& locked, OpContext* ctx, int rc) {
  if (rc == ZOK) return;
  // The C client refused the request outright: it will never call back.
  auto it = pending_.find(ctx->id);
  Completion done = std::move(it->second->done);
  pending_.erase(it);
  locked.fail(std::move(done), static_cast<Errc>(rc));
}

void Handle::create(const std::string& path, const std::string& data, int mode, Completion done) {
  Locked locked(*this);
  OpContext* ctx = begin(locked, Operation::kCreate, path, done);
  if (!ctx) return;
  const int rc = zoo_acreate2(zh_, path.c_str(), data.data(), static_cast<int>(data.size()),
                              &ZOO_OPEN_ACL_UNSAFE, mode, &on_string_stat, ctx);
  submitted(locked, ctx, rc);
}

void Handle::get_children(const std::string& path, Completion done) {
  Locked locked(*this);
  OpContext* ctx = begin(locked, Operation::kGetChildren, path, done);
  if (!ctx) return;
  submitted(locked, ctx, zoo_aget_children(zh_, path.c_str(), 0, &on_strings, ctx));
}

std::uint64_t Handle::get_data(const std::string& path, WatchFn watch, Completion done) {
  Locked locked(*this);
  OpContext* ctx = begin(locked, Operation::kGetData, path, done);
  if (!ctx) return 0;
  std::uint64_t watch_id = 0;
  int rc;
  if (watch) {
    watch_id = next_id_++;
    watches_.emplace(watch_id, Watch{path, std::move(watch)});
    ++watches_per_path_[path];
    rc = zoo_awget(zh_, path.c_str(), &on_watch, reinterpret_cast<void*>(watch_id), &on_data, ctx);
    if (rc != ZOK) forget_watch_locked(watch_id);
  } else {
    rc = zoo_aget(zh_, path.c_str(), 0, &on_data, ctx);
  }
  submitted(locked, ctx, rc);
  return rc == ZOK ? watch_id : 0;
}

void Handle::exists(const std::string& path, Completion done) {
  Locked locked(*this);
  OpContext* ctx = begin(locked, Operation::kExists, path, done);
  if (!ctx) return;
  submitted(locked, ctx, zoo_aexists(zh_, path.c_str(), 0, &on_stat, ctx));
}

void Handle::remove(const std::string& path, int version, Completion done) {
  Locked locked(*this);
  OpContext* ctx = begin(locked, Operation::kDelete, path, done);
  if (!ctx) return;
  submitted(locked, ctx, zoo_adelete(zh_, path.c_str(), version, &on_void, ctx));
}

void Handle::set(const std::string& path, const std::string& data, int version, Completion done) {
  Locked locked(*this);
  OpContext* ctx = begin(locked, Operation::kSetData, path, done);
  if (!ctx) return;
  submitted(locked, ctx, zoo_aset(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), version,
                          &on_stat, ctx));
}

void Handle::add_digest_auth(const std::string& user_password, Completion done) {
  Locked locked(*this);
  if (closed_ || zh_ == nullptr) {
    locked.fail(std::move(done), Errc::closing);
    return;
  }
  auto ctx = std::make_unique<OpContext>();
  ctx->handle = this;
  ctx->id = next_id_++;
  ctx->done = std::move(done);
  ctx->sent = Clock::now();
  OpContext* raw = ctx.get();
  pending_.emplace(raw->id, std::move(ctx));
  submitted(locked, raw, zoo_add_auth(zh_, "digest", user_password.data(),
                              static_cast<int>(user_password.size()), &on_void, raw));
}

void Handle::multi(std::vector<MultiOp> ops, Completion done) {
  Locked locked(*this);
  OpContext* ctx = begin(locked, Operation::kMulti, ops.empty() ? std::string() : ops.front().path, done);
  if (!ctx) return;
  const std::size_t n = ops.size();
  ctx->multi_ops = std::move(ops);
  ctx->multi_c_ops.resize(n);
  ctx->multi_results.resize(n);
  ctx->multi_path_buffers.resize(n);
  ctx->multi_stats.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    MultiOp& op = ctx->multi_ops[i];
    zoo_op_t* c = &ctx->multi_c_ops[i];
    switch (op.kind) {
      case MultiOp::Kind::kCheck: zoo_check_op_init(c, op.path.c_str(), op.version); break;
      case MultiOp::Kind::kDelete: zoo_delete_op_init(c, op.path.c_str(), op.version); break;
      case MultiOp::Kind::kSet:
        zoo_set_op_init(c, op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                        op.version, &ctx->multi_stats[i]);
        break;
      case MultiOp::Kind::kCreate:
        ctx->multi_path_buffers[i].resize(op.path.size() + 32);
        zoo_create_op_init(c, op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                           &ZOO_OPEN_ACL_UNSAFE, op.create_mode, ctx->multi_path_buffers[i].data(),
                           static_cast<int>(ctx->multi_path_buffers[i].size()));
        break;
    }
  }
  submitted(locked, ctx, zoo_amulti(zh_, static_cast<int>(n), ctx->multi_c_ops.data(),
                            ctx->multi_results.data(), &on_void, ctx));
}

void Handle::forget_watch_locked(std::uint64_t watch_id) {
  auto it = watches_.find(watch_id);
  if (it == watches_.end()) return;
  auto count = watches_per_path_.find(it->second.path);
  if (count != watches_per_path_.end() && --count->second <= 0) watches_per_path_.erase(count);
  watches_.erase(it);
}

void Handle::remove_watch(const std::string& path, std::uint64_t watch_id, Completion done) {
  Locked locked(*this);
  forget_watch_locked(watch_id);
  if (watches_per_path_.count(path) != 0) {
    locked.fail(std::move(done), Errc::ok);  // another of ours still needs the server's watch
    return;
  }
  OpContext* ctx = begin(locked, Operation::kRemoveWatches, path, done);
  if (!ctx) return;
  // zoo_aremove_watches() sends only a CheckWatches request (the server keeps the watch); the
  // "all" variant sends RemoveWatches. Server side (local = 0) only: the 3.8.0 async call with
  // local = 1 corrupts memory. 3.8.0 declares the completion as a pointer to a function pointer
  // but stores and calls it as the function pointer itself, hence the cast.
  auto* completion = reinterpret_cast<void_completion_t*>(reinterpret_cast<void*>(&on_void));
  submitted(locked, ctx, zoo_aremove_all_watches(zh_, path.c_str(), ZWATCHTYPE_DATA, 0, completion, ctx));
}

void Handle::forget_watch(std::uint64_t watch_id) {
  std::lock_guard lock(mutex_);
  forget_watch_locked(watch_id);
}

void Handle::finish(OpContext* ctx, OpResult&& result) {
  Completion done;
  Clock::time_point sent;
  bool answered;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(ctx->id);
    if (it == pending_.end()) return;
    answered = !unanswered(static_cast<int>(result.rc)) && !ctx->lose_reply;
    sent = ctx->sent;
    if (ctx->lose_reply) result = OpResult{ctx->lose_code, {}, {}, {}, {}};
    const bool already = ctx->delivered;
    if (!already) done = std::move(ctx->done);
    pending_.erase(it);  // frees ctx
    if (already) return;
  }
  if (answered) listener_.on_answered(generation_, sent);
  done(std::move(result));
}

void Handle::fire_watch(std::uint64_t id, int type) {
  WatchFn fn;
  {
    std::lock_guard lock(mutex_);
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    fn = std::move(it->second.fn);
    forget_watch_locked(id);
  }
  fn(watch_type(type));
}

void Handle::session_event(int state) { listener_.on_connection_state(generation_, state); }

void Handle::fail_pending(Errc code) {
  std::vector<Completion> to_fail;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, ctx] : pending_) {
      if (ctx->delivered) continue;
      ctx->delivered = true;
      to_fail.push_back(std::move(ctx->done));
    }
    watches_.clear();
    watches_per_path_.clear();
  }
  for (auto& done : to_fail) {
    OpResult r;
    r.rc = code;
    done(std::move(r));
  }
}

void Handle::close(Errc code) {
  zhandle_t* zh;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    zh = zh_;
  }
  // Outside our lock: completions running on the C client's thread during close take it.
  if (zh) zookeeper_close(zh);
  {
    std::lock_guard lock(mutex_);
    zh_ = nullptr;
  }
  fail_pending(code);
  std::lock_guard lock(mutex_);
  pending_.clear();
}

}  // namespace zklock::detail
