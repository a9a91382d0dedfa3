// `--metrics-listen HOST:PORT` of `zklock exec` and `zklock hold`: zklock's figures -
// zklock::process_metrics() in Prometheus' text format - served at http://HOST:PORT/metrics for as
// long as the command runs, so that Prometheus can scrape how long a job waited for its lock, how
// long it held it, and whether it lost it.
//
// The HTTP server is cpp-httplib (the CLI's dependency; the library speaks no HTTP), kept out of
// this header so that the rest of the CLI never includes it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "console.h"

namespace zklock::cli {

struct ListenAddress {
  std::string host;  // as given, without the brackets of an IPv6 address
  int port = 0;      // 0: any free port
};

/// Parses "HOST:PORT" ("[::1]:9464" for IPv6; PORT 0 takes a free port). Nothing is resolved.
/// Returns: the address, or what is wrong with `text` (a usage error's message).
std::variant<ListenAddress, std::string> parse_listen_address(std::string_view text);

class MetricsListener {
 public:
  /// Effects: binds `address` and serves GET /metrics on threads of its own (created now: they
  ///   inherit the caller's signal mask, so SignalReader's signals stay blocked in them).
  /// Throws: Failure(64) when the address cannot be bound (in use, or not this machine's).
  explicit MetricsListener(const ListenAddress& address);
  /// Effects: stops serving and joins its threads (a scrape under way is answered first).
  ~MetricsListener();
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  /// "http://HOST:PORT/metrics", with the port actually bound.
  std::string url() const;

 private:
  struct Server;
  std::unique_ptr<Server> server_;
};

/// The listener --metrics-listen asks for (`address`, already checked by the command line), its
/// URL reported under --verbose; null when `address` is empty.
/// Throws: as MetricsListener's constructor.
std::unique_ptr<MetricsListener> listen_for_metrics(const std::string& address,
                                                    const Console& console);

}  // namespace zklock::cli
