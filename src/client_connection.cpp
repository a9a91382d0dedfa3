#include "client_connection.h"

#include <zookeeper/zookeeper.h>

#include <cstring>
#include <system_error>
#include <utility>

namespace zklock::detail {

// Errc carries the C client's result codes unchanged: a value read from the C client is cast.
#define ZKLOCK_SAME_CODE(errc, c) \
  static_assert(static_cast<int>(Errc::errc) == (c), "Errc::" #errc " must equal " #c)
ZKLOCK_SAME_CODE(ok, ZOK);
ZKLOCK_SAME_CODE(system_error, ZSYSTEMERROR);
ZKLOCK_SAME_CODE(runtime_inconsistency, ZRUNTIMEINCONSISTENCY);
ZKLOCK_SAME_CODE(data_inconsistency, ZDATAINCONSISTENCY);
ZKLOCK_SAME_CODE(connection_loss, ZCONNECTIONLOSS);
ZKLOCK_SAME_CODE(marshalling_error, ZMARSHALLINGERROR);
ZKLOCK_SAME_CODE(unimplemented, ZUNIMPLEMENTED);
ZKLOCK_SAME_CODE(operation_timeout, ZOPERATIONTIMEOUT);
ZKLOCK_SAME_CODE(bad_arguments, ZBADARGUMENTS);
ZKLOCK_SAME_CODE(invalid_state, ZINVALIDSTATE);
ZKLOCK_SAME_CODE(new_config_no_quorum, ZNEWCONFIGNOQUORUM);
ZKLOCK_SAME_CODE(reconfig_in_progress, ZRECONFIGINPROGRESS);
ZKLOCK_SAME_CODE(api_error, ZAPIERROR);
ZKLOCK_SAME_CODE(no_node, ZNONODE);
ZKLOCK_SAME_CODE(no_auth, ZNOAUTH);
ZKLOCK_SAME_CODE(bad_version, ZBADVERSION);
ZKLOCK_SAME_CODE(no_children_for_ephemerals, ZNOCHILDRENFOREPHEMERALS);
ZKLOCK_SAME_CODE(node_exists, ZNODEEXISTS);
ZKLOCK_SAME_CODE(not_empty, ZNOTEMPTY);
ZKLOCK_SAME_CODE(session_expired, ZSESSIONEXPIRED);
ZKLOCK_SAME_CODE(invalid_callback, ZINVALIDCALLBACK);
ZKLOCK_SAME_CODE(invalid_acl, ZINVALIDACL);
ZKLOCK_SAME_CODE(auth_failed, ZAUTHFAILED);
ZKLOCK_SAME_CODE(closing, ZCLOSING);
ZKLOCK_SAME_CODE(nothing, ZNOTHING);
ZKLOCK_SAME_CODE(session_moved, ZSESSIONMOVED);
ZKLOCK_SAME_CODE(not_readonly, ZNOTREADONLY);
ZKLOCK_SAME_CODE(ephemeral_on_local_session, ZEPHEMERALONLOCALSESSION);
ZKLOCK_SAME_CODE(no_watcher, ZNOWATCHER);
ZKLOCK_SAME_CODE(throttled, ZTHROTTLEDOP);
#undef ZKLOCK_SAME_CODE

using testing::FaultDecision;
using testing::Operation;

struct ClientConnection::OpContext {
  ClientConnection* connection = nullptr;
  std::uint64_t id = 0;
  Completion done;
  BootClock::time_point sent;
  bool via_leader = false;
  bool delivered = false;  // done() already called (by fail_pending)
  bool lose_reply = false;
  Errc lose_code = Errc::ok;
  std::uint64_t watch_id = 0;  // get_data with a watch
  // The C client reads these until it is done with the request.
  std::string path;
  std::string data;
  struct ACL_vector acl_vector {};
  std::vector<struct ACL> acl_entries;
  std::vector<MultiOp> multi_ops;
  std::vector<zoo_op_t> multi_c_ops;
  std::vector<zoo_op_result_t> multi_results;
  std::vector<std::vector<char>> multi_path_buffers;
  std::vector<struct Stat> multi_stats;
};

namespace {

// The C client's modes, permissions and states are `extern const int`s, not constants: map them
// by name rather than assume their values.
int to_c_mode(NodeMode mode) {
  switch (mode) {
    case NodeMode::kPersistent:
      return ZOO_PERSISTENT;
    case NodeMode::kEphemeral:
      return ZOO_EPHEMERAL;
    case NodeMode::kPersistentSequential:
      return ZOO_PERSISTENT_SEQUENTIAL;
    case NodeMode::kEphemeralSequential:
      return ZOO_EPHEMERAL_SEQUENTIAL;
    case NodeMode::kContainer:
      return ZOO_CONTAINER;
  }
  return ZOO_PERSISTENT;
}

int to_c_permissions(int permissions) {
  int c = 0;
  if (permissions & permission::kRead) c |= ZOO_PERM_READ;
  if (permissions & permission::kWrite) c |= ZOO_PERM_WRITE;
  if (permissions & permission::kCreate) c |= ZOO_PERM_CREATE;
  if (permissions & permission::kDelete) c |= ZOO_PERM_DELETE;
  if (permissions & permission::kAdmin) c |= ZOO_PERM_ADMIN;
  return c;
}

// Points `ctx`'s ACL_vector at `acl` (strings owned by ctx); ZOO_OPEN_ACL_UNSAFE when empty.
const struct ACL_vector* fill_acl(ClientConnection::OpContext& ctx, const Acl& acl) {
  if (acl.empty()) return &ZOO_OPEN_ACL_UNSAFE;
  ctx.acl_entries.resize(acl.size());
  for (std::size_t i = 0; i < acl.size(); ++i) {
    ctx.acl_entries[i].perms = to_c_permissions(acl[i].permissions);
    ctx.acl_entries[i].id.scheme = const_cast<char*>(acl[i].scheme.c_str());
    ctx.acl_entries[i].id.id = const_cast<char*>(acl[i].id.c_str());
  }
  ctx.acl_vector.count = static_cast<int32_t>(ctx.acl_entries.size());
  ctx.acl_vector.data = ctx.acl_entries.data();
  return &ctx.acl_vector;
}

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

// ZRUNTIMEINCONSISTENCY is a multi's answer when one of its operations failed (the others carry it,
// the failing one its own code), and also what the C client fails every pending request with when
// it drops a connection whose answers came out of order (as ZMARSHALLINGERROR when it could not
// read one). Only a failed multi carries another code.
bool dropped_by_client(const OpResult& r) {
  if (r.rc == Errc::marshalling_error) return true;
  if (r.rc != Errc::runtime_inconsistency) return false;
  for (const Errc e : r.multi_results) {
    if (e != Errc::ok && e != Errc::runtime_inconsistency) return false;
  }
  return true;
}

ClientConnection::OpContext* as_ctx(const void* data) {
  return static_cast<ClientConnection::OpContext*>(const_cast<void*>(data));
}

void deliver(const void* data, OpResult&& r) {
  auto* ctx = as_ctx(data);
  ctx->connection->finish(ctx, std::move(r));
}

void on_string_stat(int rc, const char* value, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK) {
    if (value) r.value = value;
    r.stat = to_node_stat(stat);
  }
  deliver(data, std::move(r));
}

void on_string(int rc, const char* value, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK && value) r.value = value;
  deliver(data, std::move(r));
}

void on_strings(int rc, const struct String_vector* strings, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK && strings) {
    r.children.reserve(static_cast<std::size_t>(strings->count));
    for (int i = 0; i < strings->count; ++i) r.children.emplace_back(strings->data[i]);
  }
  deliver(data, std::move(r));
}

void on_data(int rc, const char* value, int value_len, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK) {
    if (value && value_len > 0) r.value.assign(value, static_cast<std::size_t>(value_len));
    r.stat = to_node_stat(stat);
  }
  deliver(data, std::move(r));
}

void on_stat(int rc, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  if (rc == ZOK) r.stat = to_node_stat(stat);
  deliver(data, std::move(r));
}

void on_void(int rc, const void* data) {
  OpResult r;
  r.rc = static_cast<Errc>(rc);
  for (const auto& res : as_ctx(data)->multi_results) {
    r.multi_results.push_back(static_cast<Errc>(res.err));
  }
  deliver(data, std::move(r));
}

// Watch contexts are ids, not pointers: a watch that fires after its owner forgot it finds nothing.
void on_watch(zhandle_t* zh, int type, int /*state*/, const char* /*path*/, void* watcher_ctx) {
  if (type == ZOO_SESSION_EVENT) return;  // session events go to the handle's global watcher
  auto* connection = static_cast<ClientConnection*>(const_cast<void*>(zoo_get_context(zh)));
  if (connection) connection->fire_watch(reinterpret_cast<std::uintptr_t>(watcher_ctx), type);
}

void on_global(zhandle_t* zh, int type, int state, const char* /*path*/, void* /*ctx*/) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* connection = static_cast<ClientConnection*>(const_cast<void*>(zoo_get_context(zh)));
  if (connection) connection->session_event(state);
}

WatchEventType watch_type(int type) {
  if (type == ZOO_CREATED_EVENT) return WatchEventType::kCreated;
  if (type == ZOO_DELETED_EVENT) return WatchEventType::kDeleted;
  if (type == ZOO_CHANGED_EVENT) return WatchEventType::kChanged;
  if (type == ZOO_CHILD_EVENT) return WatchEventType::kChildren;
  return WatchEventType::kNotWatching;
}

// The host list the C client gets. A single host is listed twice: after the C client drops a
// connection it moves to the next host at once, but after the last one it pauses T/60 ("tried all
// servers") - and each forced reconnect ends with one such drop (see force_reconnect).
std::string client_hosts(const std::string& connect) {
  const std::string hosts = connect.substr(0, connect.find('/'));
  return hosts.find(',') == std::string::npos ? hosts + "," + hosts : hosts;
}

std::string chroot_of(const std::string& connect) {
  const auto slash = connect.find('/');
  return slash == std::string::npos ? std::string() : connect.substr(slash);
}

}  // namespace

ClientConnection::ClientConnection(const std::string& connect,
                                   std::chrono::milliseconds session_timeout, unsigned generation,
                                   ConnectionListener& listener, CLogCallback log_callback,
                                   std::shared_ptr<testing::FaultHook> fault_hook)
    : generation_(generation),
      listener_(listener),
      fault_hook_(std::move(fault_hook)),
      hosts_(client_hosts(connect)) {
  errno = 0;
  const std::string client_connect = hosts_ + chroot_of(connect);
  zh_ =
      zookeeper_init2(client_connect.c_str(), &on_global, static_cast<int>(session_timeout.count()),
                      nullptr, this, ZOO_NO_LOG_CLIENTENV, log_callback);
  if (zh_ == nullptr) {
    throw InvalidArgumentError("connect string \"" + connect +
                               "\": the ZooKeeper client refused it (" +
                               std::generic_category().message(errno) + ")");
  }
}

ClientConnection::~ClientConnection() { close(Errc::closed); }

std::int64_t ClientConnection::session_id() const noexcept {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return 0;
  const clientid_t* id = zoo_client_id(zh_);
  return id ? id->client_id : 0;
}

std::string ClientConnection::session_password() const {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return {};
  const clientid_t* id = zoo_client_id(zh_);
  return id ? std::string(id->passwd, sizeof id->passwd) : std::string();
}

std::chrono::milliseconds ClientConnection::negotiated_timeout() const noexcept {
  std::lock_guard lock(mutex_);
  return std::chrono::milliseconds(!closed_ && zh_ ? zoo_recv_timeout(zh_) : 0);
}

ConnectionPhase ClientConnection::phase() const noexcept {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return ConnectionPhase::kEnded;
  const int s = zoo_state(zh_);
  if (s == ZOO_CONNECTED_STATE || s == ZOO_READONLY_STATE) return ConnectionPhase::kConnected;
  if (s == ZOO_ASSOCIATING_STATE) return ConnectionPhase::kAssociating;
  if (s == ZOO_EXPIRED_SESSION_STATE || s == ZOO_AUTH_FAILED_STATE) return ConnectionPhase::kEnded;
  return ConnectionPhase::kConnecting;
}

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
ClientConnection::OpContext* ClientConnection::begin(Submission& submission, Operation /*op*/,
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
  submitted(submission, ctx, zoo_aget_children(zh_, ctx->path.c_str(), 0, &on_strings, ctx));
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
  if (watches_per_path_.count(watch_key(Watch{path, {}, children})) != 0) {
    submission.fail(std::move(done), Errc::ok);  // another of ours still needs the server's watch
    return;
  }
  OpContext* ctx = begin(submission, Operation::kRemoveWatches, path, done, decision, false);
  if (!ctx) return;
  // The "all" variant sends RemoveWatches whatever the client's own table says - also while the
  // read that sets the watch is still on its way (the server applies the two in order); the
  // per-watcher zoo_aremove_watches() checks the local table first and sends nothing then.
  // Server side (local = 0) only: the 3.8.0 async call with local = 1 corrupts memory. 3.8.0
  // declares the completion as a pointer to a function pointer but stores and calls it as the
  // function pointer itself, hence the cast.
  auto* completion = reinterpret_cast<void_completion_t*>(reinterpret_cast<void*>(&on_void));
  submitted(
      submission, ctx,
      zoo_aremove_all_watches(zh_, ctx->path.c_str(), children ? ZWATCHTYPE_CHILD : ZWATCHTYPE_DATA,
                              0, completion, ctx));
}

std::optional<BootClock::time_point> ClientConnection::force_reconnect(bool even_if_connected) {
  bool moved = false;
  BootClock::time_point closed_at;
  {
    std::lock_guard lock(mutex_);
    if (closed_ || zh_ == nullptr) return std::nullopt;
    const int state = zoo_state(zh_);
    if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) return std::nullopt;
    if (state == 0) return std::nullopt;  // between attempts: the next one opens a socket anyway
    const bool up = state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE;
    if (up && !even_if_connected) return std::nullopt;  // it got through meanwhile
    // The C client has no "reconnect now". Its server-list update closes the connection when it
    // decides to move this client: with our list written twice, it does so with probability 1/2
    // (the load-balancing rule for a grown list); written once again, it stays where it is. The
    // session, its ephemerals and its watches are untouched: the next connection resumes them.
    // (The C client keeps the requests it had sent on the old connection waiting; the first answer
    // on the new one then mismatches their order and it drops that connection and fails them
    // once more - a second, ordinary reconnect. SessionCore waits for an answer before it counts
    // the new connection.)
    const std::string twice = hosts_ + "," + hosts_;
    for (int attempt = 0; attempt < 48 && !moved; ++attempt) {
      zoo_set_servers(zh_, twice.c_str());
      moved = zoo_state(zh_) == ZOO_NOTCONNECTED_STATE;
      zoo_set_servers(zh_, hosts_.c_str());
    }
    closed_at = BootClock::now();
  }
  if (!moved) return std::nullopt;
  // The C client's I/O thread may sleep in poll() on the closed socket for up to a third of the
  // session timeout; a queued request wakes it, and it connects at once. (Its answer, on the new
  // connection, is a heartbeat like any other.)
  exists("/", [](OpResult&&) {});
  return closed_at;
}

void ClientConnection::finish(OpContext* ctx, OpResult&& result) {
  Completion done;
  Answer answer;
  bool answered;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(ctx->id);
    if (it == pending_.end()) return;
    if (dropped_by_client(result)) {
      // The C client dropped the connection (it found the server's answers out of the order it
      // expected) and failed what it had sent with ZRUNTIMEINCONSISTENCY: the outcome is unknown,
      // exactly as after a connection loss.
      result = OpResult{Errc::connection_loss, {}, {}, {}, {}};
    }
    answered = detail::answered(result.rc) && !ctx->lose_reply;
    if (ctx->lose_reply) result = OpResult{ctx->lose_code, {}, {}, {}, {}};
    // A read that set no watch (the node is missing, or the answer never came) leaves no watch
    // on the server: forget ours, or a later removal would think another watch still needs it.
    if (ctx->watch_id != 0 && result.rc != Errc::ok) forget_watch_locked(ctx->watch_id);
    answer = Answer{generation_, epoch_.load(), ctx->sent, BootClock::now(), ctx->via_leader,
                    result.rc};
    const bool already = ctx->delivered;
    if (!already) done = std::move(ctx->done);
    pending_.erase(it);  // frees ctx
    if (pending_.empty()) drained_.notify_all();
    if (already) return;
  }
  if (answered) listener_.on_answered(answer);
  done(std::move(result));
}

void ClientConnection::fire_watch(std::uint64_t id, int c_event_type) {
  WatchFn fn;
  {
    std::lock_guard lock(mutex_);
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    fn = std::move(it->second.fn);
    forget_watch_locked(id);
  }
  fn(watch_type(c_event_type));
}

void ClientConnection::session_event(int c_state) {
  ConnectionEvent event = ConnectionEvent::kDisconnected;
  if (c_state == ZOO_CONNECTED_STATE || c_state == ZOO_READONLY_STATE) {
    ++epoch_;  // before anyone hears of it: answers from here on belong to the new connection
    event = ConnectionEvent::kConnected;
  } else if (c_state == ZOO_EXPIRED_SESSION_STATE) {
    event = ConnectionEvent::kExpired;
  } else if (c_state == ZOO_AUTH_FAILED_STATE) {
    event = ConnectionEvent::kAuthFailed;
  }
  listener_.on_connection_event(generation_, event);
}

void ClientConnection::fail_pending(Errc code) {
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

void ClientConnection::close(Errc code) {
  zhandle_t* zh;
  {
    std::unique_lock lock(mutex_);
    if (closed_) return;
    closed_ = true;  // no new requests from here on
    zh = zh_;
    // zookeeper_close may drop the completions of requests still in flight without calling them -
    // and without freeing them. Over a live connection their answers are a round trip away: let
    // them come (briefly; a connection that does not answer is not waited for).
    if (zh && (zoo_state(zh) == ZOO_CONNECTED_STATE || zoo_state(zh) == ZOO_READONLY_STATE)) {
      drained_.wait_for(lock, kCloseDrainWait, [&] { return pending_.empty(); });
    }
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
