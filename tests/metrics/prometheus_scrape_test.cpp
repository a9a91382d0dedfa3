// tests/metrics/prometheus_scrape_test.cpp: zklock's figures as a real Prometheus sees them. The
// test serves zklock::to_prometheus(zklock::process_metrics()) at /metrics (cpp-httplib, as a
// service would), makes figures it knows exactly - acquisitions on a named path, a timeout behind
// another session, a hold lost to a frozen server - then has Debian's prometheus scrape it every
// second and reads the values back through Prometheus' query API.
//
// Synchronisation: the lock calls themselves, wait_lost_for() for the Lost, then Prometheus'
// readiness and its query API polled (with a deadline) until every value is the final one; the
// values at the deadline are what the assertions judge. Prometheus only accepts exposition it can
// parse, so up == 1 is the format check, and each value read back is the figure's.
//
// Missing prometheus or cpp-httplib: skipped - or failed on CI and with ZKLOCK_INTEROP_REQUIRED.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "support/environment.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/metrics.h"
#include "zklock/mutex.h"
#include "zklock/prometheus.h"
#include "zklock/session.h"

#ifndef ZKLOCK_SCRAPE_MISSING  // what the build did not find (tests/metrics/scrape_tests.cmake)
#define ZKLOCK_SCRAPE_MISSING "the build did not say what it found"
#endif

#if ZKLOCK_SCRAPE_HAVE_HTTPLIB
#include <httplib.h>

#include <atomic>
#include <thread>

#include "metrics/prometheus_server.h"
#endif

namespace zklock::testing {
namespace {

#if ZKLOCK_SCRAPE_HAVE_HTTPLIB

// GET /metrics on a free loopback port: process_metrics(), what a service serves.
class MetricsEndpoint {
 public:
  MetricsEndpoint() {
    http_.new_task_queue = [] { return new httplib::ThreadPool(1); };
    http_.set_keep_alive_max_count(1);  // no idle connection can hold up the stop
    http_.Get("/metrics", [](const httplib::Request&, httplib::Response& response) {
      response.set_content(to_prometheus(process_metrics()), std::string(kPrometheusContentType));
    });
    port_ = http_.bind_to_any_port("127.0.0.1");
    if (port_ < 0) throw std::runtime_error("cannot bind a loopback port for /metrics");
    thread_ = std::thread([this] {
      http_.listen_after_bind();
      returned_ = true;
    });
    // httplib's stop() does nothing before its thread accepts: wait for that (its first step).
    if (!wait_until([&] { return http_.is_running() || returned_; }, 10s, 1ms) || returned_) {
      throw std::runtime_error("the /metrics server did not start");
    }
  }
  ~MetricsEndpoint() {
    http_.stop();
    thread_.join();
  }
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  int port() const { return port_; }

 private:
  httplib::Server http_;
  std::thread thread_;
  std::atomic<bool> returned_{false};
  int port_ = -1;
};

// `family`{labels} summed, as PromQL.
std::string sum_of(const std::string& family, const std::string& labels) {
  return "sum(" + family + "{" + labels + "})";
}

TEST(PrometheusScrape, AScrapeShowsWhatTheLocksDid) {
  if (*ZKLOCK_SCRAPE_MISSING != '\0') {
    if (prerequisites_required("ZKLOCK_INTEROP_REQUIRED")) FAIL() << ZKLOCK_SCRAPE_MISSING;
    GTEST_SKIP() << ZKLOCK_SCRAPE_MISSING;
  }
  if (using_external_server()) GTEST_SKIP() << "freezes its own server";
  auto server = ZkServer::start();
  const std::string path = unique_path("scrape");
  SessionOptions named = options_for(server->connect_string());
  named.metrics_paths = {path};
  Session session(named);
  Mutex mutex(session, path);
  MetricsEndpoint endpoint;

  constexpr int kReleased = 3;
  for (int i = 0; i < kReleased; ++i) {
    mutex.lock();
    mutex.unlock();
  }
  {
    // Another session, as another process would be. It names no path: its own acquisition
    // counts under path="" and never in the figures of `path` checked below.
    Session other(options_for(server->connect_string()));
    Mutex holder(other, path);
    holder.lock();
    EXPECT_FALSE(mutex.try_lock_for(200ms)) << "acquired while another session held the lock";
  }  // closed before the freeze: only `session` is lost
  mutex.lock();
  server->freeze();
  const bool lost = mutex.wait_lost_for(30s);
  server->thaw();
  ASSERT_TRUE(lost) << "the hold was not lost to the frozen server";
  mutex.unlock();

  const int acquired = kReleased + 1;
  const int timed_out = 1;
  const TempDir dir("zklock-prometheus-");
  PrometheusServer prometheus(ZKLOCK_PROMETHEUS, dir, endpoint.port());

  const std::string on_path = "recipe=\"mutex\",path=\"" + path + "\"";
  const std::map<std::string, std::string> queries = {
      {"up", "sum(up{job=\"zklock\"})"},
      {"acquired", sum_of("zklock_lock_acquisitions_total", on_path + ",outcome=\"acquired\"")},
      {"timed_out", sum_of("zklock_lock_acquisitions_total", on_path + ",outcome=\"timed_out\"")},
      {"released", sum_of("zklock_lock_holds_ended_total", on_path + ",end=\"released\"")},
      {"session_silent",
       sum_of("zklock_lock_holds_ended_total", on_path + ",end=\"session_silent\"")},
      {"sessions_lost_silent", sum_of("zklock_sessions_lost_total", "cause=\"silent\"")},
      {"wait_count", sum_of("zklock_lock_wait_seconds_count", on_path)},
      {"wait_inf_bucket", sum_of("zklock_lock_wait_seconds_bucket", on_path + ",le=\"+Inf\"")},
  };
  const std::map<std::string, double> expected = {
      {"up", 1},
      {"acquired", acquired},
      {"timed_out", timed_out},
      {"released", kReleased},
      {"session_silent", 1},
      {"sessions_lost_silent", 1},
      {"wait_count", acquired + timed_out},  // every outcome's wait
      {"wait_inf_bucket", acquired + timed_out},
  };
  std::map<std::string, std::optional<double>> seen;
  std::map<std::string, std::string> why;
  const auto read_all = [&] {
    for (const auto& [name, promql] : queries) seen[name] = prometheus.query(promql, &why[name]);
    for (const auto& [name, value] : expected) {
      if (seen[name] != value) return false;
    }
    return true;
  };
  // The first scrape comes within a second or two of the start: 60 s is only against hangs.
  wait_until(read_all, 60s, 250ms);
  for (const auto& [name, value] : expected) {
    ASSERT_TRUE(seen[name].has_value()) << name << ": " << why[name] << "\nprometheus log:\n"
                                        << prometheus.log() << "\n/metrics served:\n"
                                        << to_prometheus(process_metrics());
    EXPECT_EQ(*seen[name], value) << name << " (" << queries.at(name) << ")";
  }
}

#else  // no cpp-httplib: nothing can serve /metrics

TEST(PrometheusScrape, AScrapeShowsWhatTheLocksDid) {
  if (prerequisites_required("ZKLOCK_INTEROP_REQUIRED")) FAIL() << ZKLOCK_SCRAPE_MISSING;
  GTEST_SKIP() << ZKLOCK_SCRAPE_MISSING;
}

#endif

}  // namespace
}  // namespace zklock::testing
