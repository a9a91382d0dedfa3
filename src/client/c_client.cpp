// The C client's side of the client seam: its result codes tied to Errc, zklock's values mapped to
// the C client's, and the static callbacks through which it completes requests, fires watches and
// reports the session's state.
#include "client/c_client.h"

#include <cstring>
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

namespace c_client {

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

namespace {

ClientConnection::OpContext* as_ctx(const void* data) {
  return static_cast<ClientConnection::OpContext*>(const_cast<void*>(data));
}

// A request's outcome from the C client's code. ZSSLCONNECTIONERROR is how the C client built
// with OpenSSL fails every request pending while a TLS handshake fails (a server that closes, a
// forced reconnect cutting a handshake): to the request that is the connection lost, and it is
// retried, or its outcome looked for, as after ZCONNECTIONLOSS - not a refusal that ends a lock
// attempt. (It is not a server's answer either: answered() in answer.h.)
Errc completion_code(int rc) {
  return rc == ZSSLCONNECTIONERROR ? Errc::connection_loss : static_cast<Errc>(rc);
}

void deliver(const void* data, OpResult&& r) {
  auto* ctx = as_ctx(data);
  ctx->connection->finish(ctx, std::move(r));
}

}  // namespace

void on_string_stat(int rc, const char* value, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = completion_code(rc);
  if (rc == ZOK) {
    if (value) r.value = value;
    r.stat = to_node_stat(stat);
  }
  deliver(data, std::move(r));
}

void on_string(int rc, const char* value, const void* data) {
  OpResult r;
  r.rc = completion_code(rc);
  if (rc == ZOK && value) r.value = value;
  deliver(data, std::move(r));
}

namespace {
OpResult listing_result(int rc, const struct String_vector* strings) {
  OpResult r;
  r.rc = completion_code(rc);
  if (rc == ZOK && strings) {
    r.children.reserve(static_cast<std::size_t>(strings->count));
    for (int i = 0; i < strings->count; ++i) r.children.emplace_back(strings->data[i]);
  }
  return r;
}
}  // namespace

void on_strings(int rc, const struct String_vector* strings, const void* data) {
  deliver(data, listing_result(rc, strings));
}

void on_strings_stat(int rc, const struct String_vector* strings, const struct Stat* stat,
                     const void* data) {
  OpResult r = listing_result(rc, strings);
  if (rc == ZOK) r.stat = to_node_stat(stat);
  deliver(data, std::move(r));
}

void on_data(int rc, const char* value, int value_len, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = completion_code(rc);
  if (rc == ZOK) {
    if (value && value_len > 0) r.value.assign(value, static_cast<std::size_t>(value_len));
    r.stat = to_node_stat(stat);
  }
  deliver(data, std::move(r));
}

void on_stat(int rc, const struct Stat* stat, const void* data) {
  OpResult r;
  r.rc = completion_code(rc);
  if (rc == ZOK) r.stat = to_node_stat(stat);
  deliver(data, std::move(r));
}

void on_void(int rc, const void* data) {
  OpResult r;
  r.rc = completion_code(rc);
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
// servers"). That spares only some drops - the C client moves two places per failed attempt, and
// once a session was established every drop after the first ends at the list's end - so a forced
// reconnect also ends the pause itself (ClientConnection::force_reconnect).
std::string client_hosts(const std::string& connect) {
  const std::string hosts = connect.substr(0, connect.find('/'));
  return hosts.find(',') == std::string::npos ? hosts + "," + hosts : hosts;
}

std::string chroot_of(const std::string& connect) {
  const auto slash = connect.find('/');
  return slash == std::string::npos ? std::string() : connect.substr(slash);
}

}  // namespace c_client
}  // namespace zklock::detail
