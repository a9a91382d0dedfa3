#include "client/timeout_probe.h"

#include <condition_variable>
#include <mutex>

#include "client/c_client.h"
#include "client/connection_drop.h"
#include "client/tls.h"

namespace zklock::detail {
namespace {

struct ProbeState {
  std::mutex mutex;
  std::condition_variable cv;
  bool connected = false;
};

void on_probe_event(zhandle_t* zh, int type, int state, const char* /*path*/, void* /*ctx*/) {
  if (type != ZOO_SESSION_EVENT || state != ZOO_CONNECTED_STATE) return;
  auto* probe = static_cast<ProbeState*>(const_cast<void*>(zoo_get_context(zh)));
  std::lock_guard lock(probe->mutex);
  probe->connected = true;
  probe->cv.notify_all();
}

}  // namespace

std::optional<std::chrono::milliseconds> granted_session_timeout(
    const std::string& addresses, std::chrono::milliseconds requested,
    std::chrono::milliseconds wait, const std::function<bool()>& stop, CLogCallback log,
    const std::optional<std::string>& tls_settings, const std::function<void()>& on_cut) {
  ProbeState probe;
  zhandle_t* zh = open_handle(addresses, &on_probe_event, static_cast<int>(requested.count()),
                              &probe, log, tls_settings);
  if (zh == nullptr) return std::nullopt;
  std::optional<std::chrono::milliseconds> granted;
  {
    std::unique_lock lock(probe.mutex);
    const auto until = std::chrono::steady_clock::now() + wait;
    // Over TLS the C client never gives up on a connect or a handshake by itself: a listed server
    // that accepts and never answers would hold the probe until `wait`, and the Session's
    // constructor with it. Each attempt gets kTlsAttempt, then the C client is moved on to the
    // next server (as LivenessRule does for the session's own connection).
    constexpr std::chrono::seconds kTlsAttempt{1};
    auto attempt_since = std::chrono::steady_clock::now();
    while (!probe.connected && std::chrono::steady_clock::now() < until && !(stop && stop())) {
      probe.cv.wait_for(lock, std::chrono::milliseconds(50));
      const auto now = std::chrono::steady_clock::now();
      if (tls_settings && !probe.connected && now - attempt_since >= kTlsAttempt) {
        if (shut_down_connection(zh, addresses) && on_cut) on_cut();
        attempt_since = now;
      }
    }
    if (probe.connected) granted = std::chrono::milliseconds(zoo_recv_timeout(zh));
  }
  // Connected: CloseSession ends it on the server at once. The watcher runs no more after this.
  // Over TLS, a handshake with a silent peer would keep zookeeper_close waiting: shut down such
  // sockets while it runs (client/tls.h).
  if (tls_settings) {
    close_tls_handle(zh, addresses);
    return granted;
  }
  zookeeper_close(zh);
  return granted;
}

}  // namespace zklock::detail
