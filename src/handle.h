// Handle: one ZooKeeper C client handle (one session generation) behind zklock's client seam.
//
// Everything zklock sends goes through here, asynchronously. The Handle
//  - keeps every pending request's context alive until the C client is done with it (close may
//    drop completions without calling them: we then fail them ourselves, exactly once);
//  - never calls a completion synchronously from the call that submitted it (failures found at
//    submit time are deferred to the Session's monitor thread), so callers may hold their locks;
//  - stamps each request with its send time and reports the send time of every answered request
//    (the basis of the Lost rule);
//  - consults the FaultHook (tests) before each request.
// Watch callbacks are looked up by id at fire time, so a watch that fires after its owner gave up
// finds nothing and does nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "log_router.h"
#include "zklock/errors.h"
#include "zklock/fault_hook.h"
#include "zklock/node_stat.h"

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own name

namespace zklock::detail {

using Clock = std::chrono::steady_clock;

struct OpResult {
  Errc rc = Errc::ok;
  std::string value;                   // create: the created path; get: the data
  NodeStat stat;                       // create (create2), get, exists
  std::vector<std::string> children;   // get_children
  std::vector<Errc> multi_results;     // multi: one code per op
};
using Completion = std::function<void(OpResult&&)>;

enum class WatchEventType { kCreated, kDeleted, kChanged, kChildren, kNotWatching };
using WatchFn = std::function<void(WatchEventType type)>;

/// One write of a multi (fenced writes).
struct MultiOp {
  enum class Kind { kCheck, kCreate, kSet, kDelete } kind;
  std::string path;
  std::string data;
  int version = -1;
  int create_mode = 0;
};

/// What the Handle reports to the Session that owns it. Called on C client threads: must be quick.
class HandleListener {
 public:
  virtual ~HandleListener() = default;
  /// A request of generation `generation`, sent at `sent`, was answered by the server.
  virtual void on_answered(unsigned generation, Clock::time_point sent) = 0;
  /// The C client reported a session event (its ZOO_*_STATE value).
  virtual void on_connection_state(unsigned generation, int c_state) = 0;
  /// Runs `task` soon on the Session's monitor thread (deferred completions).
  virtual void defer(std::function<void()> task) = 0;
};

class Handle {
 public:
  /// Opens a C client handle for generation `generation`. Throws InvalidArgumentError when the C
  /// client refuses the connect string (e.g. no resolvable host).
  Handle(const std::string& connect, std::chrono::milliseconds session_timeout, unsigned generation,
         HandleListener& listener, CLogCallback log_callback, std::shared_ptr<FaultHook> fault_hook);
  /// Closes if still open.
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  unsigned generation() const noexcept { return generation_; }
  std::int64_t session_id() const noexcept;
  /// The session's password (for tests that attach a second handle to expire the session).
  std::string session_password() const;
  std::chrono::milliseconds negotiated_timeout() const noexcept;
  /// True while the C client reports CONNECTED (or read-only).
  bool connected() const noexcept;

  // Asynchronous requests. `done` is called exactly once, on a C client thread, the monitor thread,
  // or the thread that calls fail_pending()/close().
  void create(const std::string& path, const std::string& data, int mode, Completion done);
  void get_children(const std::string& path, Completion done);
  /// getData; with `watch`, sets a data watch in the same call (none is left if the node is missing).
  /// Returns: the watch id (0 without a watch) for remove_watch().
  std::uint64_t get_data(const std::string& path, WatchFn watch, Completion done);
  void exists(const std::string& path, Completion done);
  void remove(const std::string& path, int version, Completion done);
  void set(const std::string& path, const std::string& data, int version, Completion done);
  void multi(std::vector<MultiOp> ops, Completion done);
  void add_digest_auth(const std::string& user_password, Completion done);
  /// Forgets a data watch set by get_data() (its callback will not be called after this returns,
  /// even if the event is already on its way) and, when no other watch of ours is left on `path`,
  /// removes the session's data watch on `path` from the server. (The C client's per-watcher
  /// removal only checks the server's watch and removes it locally: server-side removal is
  /// per path and session, hence the count.)
  void remove_watch(const std::string& path, std::uint64_t watch_id, Completion done);
  /// Forgets a watch's callback locally only (the server's watch stays until it fires).
  void forget_watch(std::uint64_t watch_id);

  /// Fails every pending request now with `code` (their contexts stay alive for the C client).
  void fail_pending(Errc code);
  /// Closes the C handle (ephemerals go at once if connected), then fails what is still pending
  /// with `code`. Idempotent. Must not be called from a C client thread.
  void close(Errc code);

  // Entry points for the C client's static callbacks.
  struct OpContext;
  void finish(OpContext* ctx, OpResult&& result);
  void fire_watch(std::uint64_t id, int type);
  void session_event(int state);

 private:
  class Locked;
  OpContext* begin(Locked& locked, Operation op, const std::string& path, Completion& done);
  void submitted(Locked& locked, OpContext* ctx, int rc);

  const unsigned generation_;
  HandleListener& listener_;
  const std::shared_ptr<FaultHook> fault_hook_;

  mutable std::mutex mutex_;  // guards zh_ use vs close, pending_, watches_, next_id_
  zhandle_t* zh_ = nullptr;
  bool closed_ = false;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<OpContext>> pending_;
  struct Watch {
    std::string path;
    WatchFn fn;
  };
  void forget_watch_locked(std::uint64_t watch_id);
  std::unordered_map<std::uint64_t, Watch> watches_;
  std::unordered_map<std::string, int> watches_per_path_;  // our live data watches on each path
};

}  // namespace zklock::detail
