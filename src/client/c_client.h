// The C client's side of the client seam (internal to src/client/): the only header that includes
// <zookeeper/zookeeper.h>. The context each request carries through the C client, the mapping of
// zklock's values to the C client's, and the static callbacks the C client calls.
#pragma once

#include <zookeeper/zookeeper.h>

#include <cstdint>
#include <string>
#include <vector>

#include "client/client_connection.h"

namespace zklock::detail {

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

namespace c_client {

// zklock's values as the C client's. Its modes, permissions and states are `extern const int`s,
// not constants: mapped by name rather than by assumed values.
int to_c_mode(NodeMode mode);
int to_c_permissions(int permissions);
/// Points `ctx`'s ACL_vector at `acl` (strings owned by ctx); ZOO_OPEN_ACL_UNSAFE when empty.
const struct ACL_vector* fill_acl(ClientConnection::OpContext& ctx, const Acl& acl);
NodeStat to_node_stat(const struct Stat* s);
/// True when the C client failed the request because it dropped the connection (answers out of
/// the order it expected): the outcome is unknown, as after a connection loss.
bool dropped_by_client(const OpResult& r);

// The completions the C client calls (data: the request's OpContext).
void on_string_stat(int rc, const char* value, const struct Stat* stat, const void* data);
void on_string(int rc, const char* value, const void* data);
void on_strings(int rc, const struct String_vector* strings, const void* data);
/// A listing with the parent's stat (getChildren2).
void on_strings_stat(int rc, const struct String_vector* strings, const struct Stat* stat,
                     const void* data);
void on_data(int rc, const char* value, int value_len, const struct Stat* stat, const void* data);
void on_stat(int rc, const struct Stat* stat, const void* data);
void on_void(int rc, const void* data);
/// A watch fired (watcher_ctx: the watch's id, looked up when it fires).
void on_watch(zhandle_t* zh, int type, int state, const char* path, void* watcher_ctx);
/// The handle's global watcher: session events.
void on_global(zhandle_t* zh, int type, int state, const char* path, void* ctx);
WatchEventType watch_type(int type);

/// The host list the C client gets for `connect`'s hosts (a single host twice: see the .cpp).
std::string client_hosts(const std::string& connect);
/// "/app" of "host:port/app", or "".
std::string chroot_of(const std::string& connect);

}  // namespace c_client
}  // namespace zklock::detail
