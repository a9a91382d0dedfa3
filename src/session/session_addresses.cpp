// SessionCore's host names (host_resolver.h): resolved when the session starts, then again on the
// reaper thread every minute, or sooner when the monitor asks (it is reconnecting: the servers
// may have moved). The C client only ever sees numeric addresses.
#include "client/host_resolver.h"
#include "session/session_core.h"

namespace zklock::detail {

void SessionCore::resolve_on_start() {
  if (!needs_resolving_) {
    std::lock_guard lock(addresses_mutex_);
    addresses_ = hosts_;
    return;
  }
  ResolvedHosts resolved = resolve_hosts(hosts_);
  if (resolved.addresses.empty()) {
    std::string names;
    for (const auto& h : resolved.unresolved) names += (names.empty() ? "" : ", ") + h;
    throw InvalidArgumentError("connect string \"" + options_.connect +
                               "\": no host could be resolved (" + names + ")");
  }
  for (const auto& h : resolved.unresolved) {
    log_slot_.log(LogLevel::kWarn, "\"" + h + "\" does not resolve (now); looking again later");
  }
  {
    std::lock_guard lock(addresses_mutex_);
    addresses_ = std::move(resolved.addresses);
  }
  std::lock_guard lock(reaper_mutex_);
  last_resolve_ = BootClock::now();
}

void SessionCore::refresh_addresses() {
  ResolvedHosts resolved = resolve_hosts(hosts_);  // may block on the resolver: no lock held
  if (resolved.addresses.empty()) return;  // keep what we had: resolution fails now and then
  {
    std::lock_guard lock(addresses_mutex_);
    if (resolved.addresses == addresses_) return;
    addresses_ = resolved.addresses;
  }
  log_slot_.log(LogLevel::kInfo, "the servers' addresses changed: " + resolved.addresses);
  if (auto c = connection()) c->set_servers(resolved.addresses);
}

void SessionCore::request_resolve() {
  if (!needs_resolving_) return;
  std::lock_guard lock(reaper_mutex_);
  resolve_requested_ = true;
  reaper_wake_.notify_all();
}

}  // namespace zklock::detail
