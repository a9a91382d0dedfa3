#include "metrics_listener.h"

#include <httplib.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <thread>

#include "exit_codes.h"
#include "zklock/metrics.h"
#include "zklock/prometheus.h"

namespace zklock::cli {
namespace {

// An IPv6 address goes in brackets in a URL (and in --metrics-listen).
std::string host_for_url(const std::string& host) {
  return host.find(':') == std::string::npos ? host : "[" + host + "]";
}

}  // namespace

std::variant<ListenAddress, std::string> parse_listen_address(std::string_view text) {
  const std::string problem =
      "invalid address '" + std::string(text) + "': expected HOST:PORT, e.g. 127.0.0.1:9464";
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return problem;
  std::string_view host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return problem;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return problem + " (an IPv6 address goes in brackets: [::1]:9464)";
  }
  const std::string_view digits = text.substr(colon + 1);
  int port = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || port < 0 ||
      port > 65535) {
    return problem + " (PORT is 0 to 65535)";
  }
  return ListenAddress{std::string(host), port};
}

struct MetricsListener::Server {
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> returned{false};  // listen_after_bind() has returned
  std::string host;
  int port = 0;
};

MetricsListener::MetricsListener(const ListenAddress& address)
    : server_(std::make_unique<Server>()) {
  Server& s = *server_;
  // One scrape at a time is plenty for a CLI; httplib's default is a thread per core.
  s.http.new_task_queue = [] { return new httplib::ThreadPool(1); };
  // A scraper's idle keep-alive connection would hold the one thread, and the exit, for seconds.
  s.http.set_keep_alive_max_count(1);
  s.http.Get("/metrics", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(to_prometheus(process_metrics()), std::string(kPrometheusContentType));
  });
  s.host = address.host;
  s.port = address.port == 0
               ? s.http.bind_to_any_port(address.host)
               : (s.http.bind_to_port(address.host, address.port) ? address.port : -1);
  if (s.port < 0) {
    throw Failure(exit_code::kUsage, "--metrics-listen " + host_for_url(address.host) + ":" +
                                         std::to_string(address.port) +
                                         ": cannot listen there (the port is in use, or the "
                                         "address is not this machine's)");
  }
  s.thread = std::thread([&s] {
    s.http.listen_after_bind();
    s.returned = true;
  });
  // httplib's stop() does nothing until the thread has begun accepting (its first step): wait
  // for that, or for its end should accepting fail at once, so that the destructor can stop it.
  while (!s.http.is_running() && !s.returned) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

MetricsListener::~MetricsListener() {
  server_->http.stop();
  server_->thread.join();
}

std::string MetricsListener::url() const {
  return "http://" + host_for_url(server_->host) + ":" + std::to_string(server_->port) + "/metrics";
}

std::unique_ptr<MetricsListener> listen_for_metrics(const std::string& address,
                                                    const Console& console) {
  if (address.empty()) return nullptr;
  auto listener = std::make_unique<MetricsListener>(
      std::get<ListenAddress>(parse_listen_address(address)));  // checked by the command line
  console.note("serving metrics at " + listener->url());
  return listener;
}

}  // namespace zklock::cli
