// tests/metrics/prometheus_server.h: a real Prometheus (Debian's package prometheus) run by a
// test - a child process on a free loopback port, its database in the test's scratch directory,
// scraping one target every second - and its HTTP query API read back as numbers.
//
// It never outlives the test: it is a ChildProcess (support/process.h), killed by the destructor,
// and by the kernel should the test process die.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"

namespace zklock::testing {

class PrometheusServer {
 public:
  // Starts `binary` with a prometheus.yml (written in `dir`) that scrapes
  // http://127.0.0.1:`target_port`/metrics every second as job "zklock", and waits until it is
  // ready (GET /-/ready answers 200; up to 60 s). A port taken meanwhile by someone else is
  // retried with another. Throws std::runtime_error with the tail of its log when it does not
  // come up.
  PrometheusServer(const std::string& binary, const TempDir& dir, int target_port);
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  int port() const { return port_; }

  // The value of the instant query `promql` (GET /api/v1/query), which must select at most one
  // sample (wrap it in sum(...)). nullopt when it selects none yet or the query fails; `why` then
  // says which, for the test's message.
  std::optional<double> query(const std::string& promql, std::string* why = nullptr) const;

  // Its log (stdout and stderr): the reason when a scrape or query does not do what it should.
  std::string log() const;

 private:
  // Starts it on `port_`. Returns false when the port was taken; throws on any other failure.
  bool launch(const std::string& binary, const std::string& config, const std::string& storage);
  bool ready() const;

  std::string log_path_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace zklock::testing
