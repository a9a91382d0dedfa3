// SessionCore's generations: opening one (its connection made without the session's lock, its
// first events kept until it is installed), the events of its connection, and ending one (its
// connection handed to the reaper). The monitor decides when (session_monitor.cpp).
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "session/session_core.h"

namespace zklock::detail {

using std::chrono::milliseconds;

void SessionCore::open_generation(std::unique_lock<std::mutex>& lock, unsigned generation) {
  opening_generation_ = generation;
  // The server creates the session after our first connect request, which leaves after this: the
  // session's first sign of life at the leader is no earlier than now.
  const auto started = BootClock::now();
  std::string addresses;
  {
    std::lock_guard addresses_lock(addresses_mutex_);
    addresses = addresses_;
  }
  lock.unlock();
  std::shared_ptr<ClientConnection> connection;
  std::exception_ptr failed;
  try {
    connection = std::make_shared<ClientConnection>(
        addresses + chroot_, options_.session_timeout, generation, *this, log_slot_.callback(),
        fault_hook_, options_.metrics ? &metrics_->requests() : nullptr, tls_settings_);
  } catch (...) {
    failed = std::current_exception();
  }
  lock.lock();
  if (failed || stopping_) {
    opening_generation_ = 0;
    opening_events_.clear();
    if (failed) std::rethrow_exception(failed);
    // Closed without our lock: the C client's callbacks take it.
    lock.unlock();
    connection.reset();
    lock.lock();
    return;
  }
  install_generation_locked(generation, std::move(connection), started);
}

void SessionCore::drain_opening_events() {
  while (true) {
    unsigned generation = 0;
    std::vector<ConnectionEvent> events;
    {
      std::lock_guard lock(mutex_);
      if (opening_generation_ == 0) return;
      if (opening_events_.empty()) {
        opening_generation_ = 0;  // from here on its events are handled as they come
        return;
      }
      generation = opening_generation_;
      events.swap(opening_events_);
    }
    for (const ConnectionEvent event : events) handle_connection_event(generation, event);
  }
}

void SessionCore::install_generation_locked(unsigned generation,
                                            std::shared_ptr<ClientConnection> connection,
                                            BootClock::time_point started) {
  generation_.store(generation);
  session_id_.store(0);
  connected_.store(false);
  server_ended_session_ = false;
  ever_connected_ = false;
  generation_answered_ = false;
  heartbeat_pending_.reset();
  heartbeat_read_answered_ = false;
  late_read_at_.reset();
  last_heartbeat_.reset();
  heartbeat_requested_ = false;
  last_reconnect_.reset();
  confirmation_.reset();
  confirm_locked(std::nullopt);
  route_query_in_flight_ = false;
  phase_ = LinkPhase::kConnecting;
  phase_since_ = BootClock::now();
  timeout_ms_.store(options_.session_timeout.count());
  settings_ = LivenessSettings::fitted(options_, options_.session_timeout);
  rule_ = LivenessRule();
  generation_started_ = started;  // before the connection was made (open_generation)
  connection_ = std::move(connection);
  metrics_->generation_opened();
  credentials_pending_ = options_.credentials.has_value();
  credentials_refused_ = Errc::ok;
  if (options_.credentials) {
    // A refusal on the spot completes on the monitor thread (defer), never here.
    connection_->add_digest_auth(
        options_.credentials->user + ":" + options_.credentials->password,
        [this, generation](OpResult&& r) {
          std::lock_guard lock(mutex_);
          if (generation != generation_.load()) return;
          // The C client completes it again on each reconnect only if it was re-sent: once is
          // enough to know whether the server takes our credentials.
          credentials_pending_ = false;
          if (r.rc != Errc::ok && r.rc != Errc::connection_loss && r.rc != Errc::closing) {
            credentials_refused_ = r.rc;
            log_slot_.log(LogLevel::kError,
                          std::string("the server refused the credentials of user \"") +
                              options_.credentials->user +
                              "\": " + make_error_code(r.rc).message());
          }
          ++changes_;
          changed_.notify_all();
        });
  }
  ++changes_;
  changed_.notify_all();
}

void SessionCore::on_connection_event(unsigned generation, ConnectionEvent event) {
  {
    std::lock_guard lock(mutex_);
    if (opening_generation_ != 0 && generation == opening_generation_) {
      opening_events_.push_back(event);  // handled in order by drain_opening_events()
      return;
    }
  }
  handle_connection_event(generation, event);
}

void SessionCore::handle_connection_event(unsigned generation, ConnectionEvent event) {
  std::shared_ptr<ClientConnection> connection;
  {
    std::lock_guard lock(mutex_);
    if (generation != generation_.load() || stopping_) return;
    connection = connection_;
  }
  // Read what the connection knows outside our lock (its own lock is taken).
  const bool up = event == ConnectionEvent::kConnected;
  const std::int64_t id = up && connection ? connection->session_id() : 0;
  const auto timeout = up && connection ? connection->negotiated_timeout() : milliseconds(0);
  std::lock_guard lock(mutex_);
  if (generation != generation_.load() || stopping_) return;
  const auto now = BootClock::now();
  switch (event) {
    case ConnectionEvent::kConnected: {
      connected_.store(true);
      phase_ = LinkPhase::kConnected;
      phase_since_ = now;
      if (id != 0) session_id_.store(id);
      if (timeout.count() > 0) {
        timeout_ms_.store(timeout.count());
        refit_settings_locked(timeout);
      }
      // The server (the leader, or a follower revalidating with it) touched the session when it
      // took our connect request, which left after the generation began: a sign of life we know
      // a lower bound of the send time of. Counted only when the connect was quick: after a slow
      // one (the C client gives each server that drops SYNs 2T/3) it would leave next to no time,
      // or none, before Lost - for a session that holds nothing yet. Then the first answers
      // confirm it instead. (After our own drop, see LeaderConfirmation: the reconnect credit.)
      const auto connect_took = now - generation_started_;
      if (!ever_connected_ &&
          connect_took < (settings_.session_timeout - settings_.lost_margin) / 2 &&
          confirmation_.on_counted(generation_started_)) {
        confirm_locked(confirmation_.confirmed());
      }
      ever_connected_ = true;
      heartbeat_requested_ = true;  // prove the session lives: answered requests, not events
      break;
    }
    case ConnectionEvent::kDisconnected:
      connected_.store(false);
      phase_ = LinkPhase::kConnecting;
      phase_since_ = now;
      break;
    case ConnectionEvent::kExpired:
    case ConnectionEvent::kAuthFailed:
      connected_.store(false);
      phase_ = LinkPhase::kEnded;
      phase_since_ = now;
      server_ended_session_ = true;
      break;
  }
  ++changes_;
  changed_.notify_all();
  wake_monitor();
}

std::shared_ptr<std::atomic<std::int64_t>> SessionCore::end_generation_locked(
    std::unique_lock<std::mutex>& lock) {
  // Whatever the ended generation owned is gone. Its connection is closed by the reaper.
  EndedConnection ended;
  ended.connection.swap(connection_);
  ended.told_ns = std::make_shared<std::atomic<std::int64_t>>(0);
  const auto confirmed = confirmation_.confirmed();
  const auto now = BootClock::now();
  // Kept open only while it works: a connection that is down sends no CloseSession when closed,
  // and keeping it would let its C client reconnect and revalidate the session - which would then
  // outlive it by T.
  const bool works = phase_ == LinkPhase::kConnected;
  if (confirmed && !server_ended_session_ && works) {
    ended.not_before = *confirmed + settings_.session_timeout;
    ended.latest = ended.not_before + settings_.session_timeout;
    ended.margin = settings_.lost_margin;
  } else {
    // Nothing to protect: the server ended it, it never held anything, or it is down (then the
    // server expires it on its own, no earlier than confirmed + T).
    ended.not_before = ended.latest = now;
    ended.told_ns->store(1);
  }
  auto told = ended.told_ns;
  lock.unlock();
  if (ended.connection) {
    ended.connection->fail_pending(Errc::session_lost);
    std::lock_guard reaper_lock(reaper_mutex_);
    to_close_.push_back(std::move(ended));
    reaper_wake_.notify_all();
  }
  lock.lock();
  return told;
}

}  // namespace zklock::detail
