#include "zklock/session.h"

#include <array>
#include <cstdio>
#include <utility>

#include "base/paths.h"
#include "client/tls.h"
#include "session/session_core.h"
#include "zklock/errors.h"
#include "zklock/testing/fault_hook.h"

namespace zklock {
namespace {

void validate_options(const SessionOptions& o) {
  detail::validate_connect_string(o.connect);
  auto positive = [](std::chrono::milliseconds v, const char* name) {
    if (v.count() <= 0) {
      throw InvalidArgumentError(std::string("SessionOptions::") + name +
                                 " must be positive (got " + std::to_string(v.count()) + " ms)");
    }
  };
  positive(o.session_timeout, "session_timeout");
  positive(o.connect_timeout, "connect_timeout");
  auto not_negative = [](std::chrono::milliseconds v, const char* name) {
    if (v.count() < 0) {
      throw InvalidArgumentError(std::string("SessionOptions::") + name + " must not be negative");
    }
  };
  not_negative(o.heartbeat_interval, "heartbeat_interval");
  not_negative(o.lost_margin, "lost_margin");
  not_negative(o.suspend_after, "suspend_after");
  not_negative(o.reconnect_interval, "reconnect_interval");
  not_negative(o.server_tick_time, "server_tick_time");
  if (o.heartbeat_interval.count() > 0 && o.heartbeat_interval >= o.session_timeout / 2) {
    throw InvalidArgumentError(
        "SessionOptions::heartbeat_interval must be below half the session timeout");
  }
  if (o.lost_margin.count() > 0 && o.lost_margin >= o.session_timeout / 2) {
    throw InvalidArgumentError(
        "SessionOptions::lost_margin must be below half the session timeout");
  }
  if (o.credentials &&
      (o.credentials->user.empty() || o.credentials->user.find(':') != std::string::npos)) {
    throw InvalidArgumentError("DigestCredentials::user must be non-empty and contain no ':'");
  }
  if (o.node_acl) {
    if (o.node_acl->empty())
      throw InvalidArgumentError("SessionOptions::node_acl must not be empty");
    for (const auto& entry : *o.node_acl) {
      if (entry.scheme == "auth" && !o.credentials && !o.tls) {
        throw InvalidArgumentError(
            "SessionOptions::node_acl names the creator (scheme \"auth\"), which needs "
            "credentials or a TLS client certificate");
      }
      if (entry.scheme.empty() || (entry.permissions & ~permission::kAll) != 0 ||
          entry.permissions == 0) {
        throw InvalidArgumentError(
            "SessionOptions::node_acl: an entry needs a scheme and permissions "
            "among zklock::permission::kAll");
      }
    }
  }
}

// Turns a failed OpResult into the exception its code calls for.
[[noreturn]] void fail(const detail::OpResult& r, const std::string& what,
                       const std::string& path) {
  throw_error(r.rc, "zklock::Session::" + what + "(\"" + path + "\")");
}

detail::NodeMode node_mode(CreateMode mode) {
  switch (mode) {
    case CreateMode::kPersistent:
      return detail::NodeMode::kPersistent;
    case CreateMode::kEphemeral:
      return detail::NodeMode::kEphemeral;
    case CreateMode::kContainer:
      return detail::NodeMode::kContainer;
  }
  throw InvalidArgumentError("zklock::Session::create: unknown CreateMode " +
                             std::to_string(static_cast<int>(mode)));
}

}  // namespace

Session::Session(SessionOptions options) : Session(std::move(options), nullptr) {}

Session::Session(SessionOptions options, std::shared_ptr<testing::FaultHook> hook) {
  validate_options(options);
  auto core = std::make_shared<detail::SessionCore>(std::move(options), std::move(hook));
  const auto& o = core->options();
  const auto connect_deadline = std::chrono::steady_clock::now() + o.connect_timeout;
  core->start();
  const Errc ready = core->wait_ready(o.connect_timeout);
  // The probe of tickTime runs beside the connect and normally ends with it; under load it may
  // end later, within the same connect timeout (it gives up then), and never outlives this.
  if (ready == Errc::ok) {
    core->finish_probe(std::max(std::chrono::milliseconds(0),
                                std::chrono::duration_cast<std::chrono::milliseconds>(
                                    connect_deadline - std::chrono::steady_clock::now())));
  }
  if (ready != Errc::ok) {
    // Read before close(), which breaks a handshake still waiting (a failure of zklock's own).
    const bool tls_refused = core->encrypted() && core->tls_handshake_refused();
    core->close();
    if (ready == Errc::connection_loss && tls_refused) {
      throw TlsError("zklock::Session: no ZooKeeper server at \"" + o.connect +
                     "\" completed a TLS handshake within " +
                     std::to_string(o.connect_timeout.count()) +
                     " ms: does the port serve TLS (secureClientPort), does "
                     "SessionOptions::tls.ca_file sign the server's certificate, does the "
                     "server trust ours?");
    }
    if (ready == Errc::connection_loss && core->encrypted()) {
      throw ConnectionLossError(
          Errc::connection_loss,
          "zklock::Session: no ZooKeeper server at \"" + o.connect + "\" answered within " +
              std::to_string(o.connect_timeout.count()) +
              " ms (over TLS: a server that accepts the connection and never answers the TLS "
              "handshake looks like this too)");
    }
    if (ready == Errc::connection_loss) {
      throw ConnectionLossError(Errc::connection_loss,
                                "zklock::Session: no ZooKeeper server at \"" + o.connect +
                                    "\" answered within " +
                                    std::to_string(o.connect_timeout.count()) + " ms");
    }
    throw NotAuthorizedError(ready,
                             "zklock::Session: the server refused the credentials of user \"" +
                                 o.credentials->user + "\"");
  }
  // Listeners added from here on see later transitions only, not the initial Connected.
  core->flush_events(o.connect_timeout);
  core_ = std::move(core);
}

Session::~Session() { close(); }

void Session::close() noexcept {
  if (core_) core_->close();
}

SessionState Session::state() const noexcept { return core_->state(); }
std::int64_t Session::session_id() const noexcept { return core_->session_id(); }

std::string session_id_hex(std::int64_t session_id) {
  std::array<char, 24> text{};
  std::snprintf(text.data(), text.size(), "0x%llx",
                static_cast<unsigned long long>(static_cast<std::uint64_t>(session_id)));
  return text.data();
}
unsigned Session::generation() const noexcept { return core_->generation(); }
std::chrono::milliseconds Session::negotiated_timeout() const noexcept {
  return core_->negotiated_timeout();
}
std::chrono::steady_clock::time_point Session::lost_deadline() const noexcept {
  return detail::to_steady(core_->lost_deadline());
}
bool Session::encrypted() const noexcept { return core_->encrypted(); }
bool Session::tls_available() noexcept { return detail::client_has_tls(); }
bool Session::wait_connected(std::chrono::milliseconds timeout) {
  return core_->wait_connected(timeout);
}
Session::ListenerId Session::add_listener(Listener listener) {
  return core_->add_listener(std::move(listener));
}
void Session::remove_listener(ListenerId id) { core_->remove_listener(id); }

MetricsSnapshot Session::metrics() const { return core_->metrics().snapshot(); }

std::optional<std::vector<std::string>> Session::children(const std::string& path) {
  detail::validate_node_path(path, "path");
  auto r = core_->call([&](detail::ClientConnection& h,
                           detail::Completion done) { h.get_children(path, std::move(done)); },
                       core_->negotiated_timeout());
  if (r.rc == Errc::no_node) return std::nullopt;
  if (r.rc != Errc::ok) fail(r, "children", path);
  return std::move(r.children);
}

std::optional<NodeData> Session::get(const std::string& path) {
  detail::validate_node_path(path, "path");
  auto r = core_->call([&](detail::ClientConnection& h,
                           detail::Completion done) { h.get_data(path, {}, std::move(done)); },
                       core_->negotiated_timeout());
  if (r.rc == Errc::no_node) return std::nullopt;
  if (r.rc != Errc::ok) fail(r, "get", path);
  return NodeData{std::move(r.value), r.stat};
}

std::string Session::create(const std::string& path, const std::string& data, CreateMode mode,
                            bool make_parents) {
  detail::validate_node_path(path, "path");
  if (path == "/") throw InvalidArgumentError("zklock::Session::create: \"/\" always exists");
  if (make_parents) {
    for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      const std::string ancestor = path.substr(0, slash);
      auto r = core_->call(
          [&](detail::ClientConnection& h, detail::Completion done) {
            h.create(ancestor, {}, detail::NodeMode::kPersistent, core_->node_acl(),
                     std::move(done));
          },
          core_->negotiated_timeout());
      if (r.rc != Errc::ok && r.rc != Errc::node_exists) fail(r, "create", ancestor);
    }
  }
  auto r = core_->call(
      [&](detail::ClientConnection& h, detail::Completion done) {
        h.create(path, data, node_mode(mode), core_->node_acl(), std::move(done));
      },
      core_->negotiated_timeout());
  if (r.rc != Errc::ok) fail(r, "create", path);
  return r.value;
}

NodeStat Session::set(const std::string& path, const std::string& data, int version) {
  detail::validate_node_path(path, "path");
  auto r =
      core_->call([&](detail::ClientConnection& h,
                      detail::Completion done) { h.set(path, data, version, std::move(done)); },
                  core_->negotiated_timeout());
  if (r.rc != Errc::ok) fail(r, "set", path);
  return r.stat;
}

bool Session::remove(const std::string& path, int version) {
  detail::validate_node_path(path, "path");
  auto r = core_->call([&](detail::ClientConnection& h,
                           detail::Completion done) { h.remove(path, version, std::move(done)); },
                       core_->negotiated_timeout());
  if (r.rc == Errc::no_node) return false;
  if (r.rc != Errc::ok) fail(r, "remove", path);
  return true;
}

}  // namespace zklock

namespace zklock::testing {

std::unique_ptr<Session> open_session(SessionOptions options, std::shared_ptr<FaultHook> hook) {
  return std::unique_ptr<Session>(new Session(std::move(options), std::move(hook)));
}

}  // namespace zklock::testing
