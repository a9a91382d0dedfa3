// tests/metrics/prometheus_server.cpp
#include "metrics/prometheus_server.h"

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "support/files.h"
#include "support/wait.h"
#include "support/zk_server.h"

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto kStartTimeout = 60s;  // a loaded machine; it is up in a second or two when idle
constexpr int kPortAttempts = 3;

std::string scrape_config(int target_port) {
  return "global:\n"
         "  scrape_interval: 1s\n"
         "  scrape_timeout: 1s\n"
         "scrape_configs:\n"
         "  - job_name: zklock\n"
         "    static_configs:\n"
         "      - targets: ['127.0.0.1:" +
         std::to_string(target_port) + "']\n";
}

}  // namespace

PrometheusServer::PrometheusServer(const std::string& binary, const TempDir& dir, int target_port) {
  const std::string config = dir.file("prometheus.yml");
  write_file(config, scrape_config(target_port));
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    // A database of its own per attempt: one that did not come up may hold the lock file.
    log_path_ = dir.file("prometheus-" + std::to_string(attempt) + ".log");
    port_ = pick_free_port();
    if (launch(binary, config, dir.file("tsdb-" + std::to_string(attempt)))) return;
  }
  throw std::runtime_error("prometheus: every port tried was taken; last log:\n" + log());
}

PrometheusServer::~PrometheusServer() = default;  // ~ChildProcess stops it

bool PrometheusServer::launch(const std::string& binary, const std::string& config,
                              const std::string& storage) {
  SpawnOptions options;
  options.log_path = log_path_;
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{binary, "--config.file=" + config, "--storage.tsdb.path=" + storage,
                               "--web.listen-address=127.0.0.1:" + std::to_string(port_)},
      options);
  bool exited = false;
  const bool up = wait_until(
      [&] {
        if (!process_->running()) {
          exited = true;
          return true;
        }
        return ready();
      },
      kStartTimeout, 50ms);
  if (exited) {
    const std::string text = log();
    process_.reset();
    if (text.find("address already in use") != std::string::npos) return false;
    throw std::runtime_error("prometheus exited at start; its log:\n" + tail_file(log_path_));
  }
  if (!up) {
    throw std::runtime_error("prometheus not ready within 60 s; its log:\n" + tail_file(log_path_));
  }
  return true;
}

bool PrometheusServer::ready() const {
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(1s);
  client.set_read_timeout(2s);
  const httplib::Result result = client.Get("/-/ready");
  return result && result->status == 200;
}

std::optional<double> PrometheusServer::query(const std::string& promql, std::string* why) const {
  auto fail = [why](std::string reason) -> std::optional<double> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(2s);
  client.set_read_timeout(5s);
  const httplib::Params params = {{"query", promql}};
  const httplib::Result result = client.Get("/api/v1/query", params, httplib::Headers());
  if (!result) return fail("no answer from prometheus: " + httplib::to_string(result.error()));
  const auto body = nlohmann::json::parse(result->body, nullptr, false);
  if (result->status != 200 || body.is_discarded() || body.value("status", "") != "success") {
    return fail("HTTP " + std::to_string(result->status) + ": " + result->body);
  }
  const auto& samples = body["data"]["result"];
  if (!samples.is_array() || samples.empty()) return fail("no sample yet for " + promql);
  if (samples.size() > 1) return fail("more than one sample: " + samples.dump());
  // An instant vector's sample: {"metric":{...},"value":[<time>,"<value as text>"]}.
  return std::stod(samples[0]["value"][1].get<std::string>());
}

std::string PrometheusServer::log() const { return read_file(log_path_); }

}  // namespace zklock::testing
