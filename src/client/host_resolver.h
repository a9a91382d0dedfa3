// Resolving the connect string's host names, done by zklock itself so that the ZooKeeper C client
// only ever sees numeric addresses (internal).
//
// The C client resolves its whole host list on every server-list update and, with its default
// settings, on every turn of its I/O loop, each time holding its reconfiguration lock: with host
// names and a slow or unreachable resolver, its I/O thread stalls, and so does whoever updates the
// list (zklock's forced reconnects). Given numeric addresses it never asks a resolver. zklock
// resolves the names when the Session opens (on the application's thread) and again now and then
// on its reaper thread, which holds none of the session's locks while it waits for the resolver;
// a change of address reaches the C client as a server-list update of numeric addresses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

struct ResolvedHosts {
  /// "address:port,address:port,..." (IPv6 addresses without brackets, as the C client parses
  /// them), every address of every host that resolved, each once, in the order listed.
  std::string addresses;
  /// The hosts ("name:port") that did not resolve.
  std::vector<std::string> unresolved;
};

/// Resolves `hosts` ("host:port[,host:port...]", no chroot; hosts may be names, IPv4 or IPv6
/// addresses, the latter optionally in brackets). Blocks on the system resolver for each name.
ResolvedHosts resolve_hosts(std::string_view hosts);

/// True when every host of `hosts` is a numeric address (nothing to ask a resolver).
bool all_numeric(std::string_view hosts);

}  // namespace zklock::detail
