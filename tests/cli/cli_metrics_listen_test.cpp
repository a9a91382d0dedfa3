// tests/cli/cli_metrics_listen_test.cpp: `--metrics-listen` of `zklock hold` and `zklock exec` -
// the real binary serving its figures at /metrics while it waits for and holds the lock, fetched
// with cpp-httplib's client; and addresses it cannot have, which are usage errors that leave
// nothing on the server.
//
// Synchronisation: the line `hold` prints once it holds, the nodes on the server, the gate the
// command under `exec` reads, and /metrics itself, fetched until it shows what is awaited (each
// with a deadline); what it shows at the deadline is then what the assertions judge.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "cli_process.h"
#include "support/files.h"
#include "support/socket_io.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/mutex.h"
#include "zklock/prometheus.h"

namespace zklock::testing {
namespace {

class CliMetricsListen : public CliTest {};

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Scrape {
  int status = 0;
  std::string content_type;
  std::string body;
};

// GET http://127.0.0.1:`port`/metrics; nullopt when nothing answers there.
std::optional<Scrape> fetch_metrics(int port) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(std::chrono::seconds(2));
  client.set_read_timeout(std::chrono::seconds(5));
  const httplib::Result result = client.Get("/metrics");
  if (!result) return std::nullopt;
  return Scrape{result->status, result->get_header_value("Content-Type"), result->body};
}

// The value of the sample of metric `name` whose labels include all of `labels`, in Prometheus'
// text format; nullopt when there is none. Label values here are paths and words, never escaped,
// so `key="value"` (with both quotes) names one label exactly.
std::optional<double> sample_value(const std::string& exposition, const std::string& name,
                                   const Labels& labels) {
  for (const std::string& line : lines_of(exposition)) {
    if (line.rfind(name + "{", 0) != 0) continue;
    const auto close = line.find("} ");
    if (close == std::string::npos) continue;
    const std::string label_text = line.substr(name.size(), close - name.size() + 1);
    bool all = true;
    for (const auto& [key, value] : labels) {
      const std::string wanted = key + "=\"" + value + "\"";
      all = all && (label_text.find("{" + wanted) != std::string::npos ||
                    label_text.find("," + wanted) != std::string::npos);
    }
    if (all) return std::stod(line.substr(close + 2));
  }
  return std::nullopt;
}

Labels mutex_on(const std::string& path, const char* outcome) {
  return {{"recipe", "mutex"}, {"path", path}, {"outcome", outcome}};
}

// Fetches /metrics until `done` holds for what it serves, up to kEventTimeout. Returns the last
// scrape (nullopt if nothing ever answered).
template <class Done>
std::optional<Scrape> scrape_until(int port, Done done) {
  std::optional<Scrape> last;
  wait_until(
      [&] {
        if (auto scrape = fetch_metrics(port)) last = std::move(scrape);
        return last && done(*last);
      },
      kEventTimeout, std::chrono::milliseconds(50));
  return last;
}

TEST_F(CliMetricsListen, HoldServesItsFiguresWhileItHolds) {
  const int port = pick_free_port();
  Cli holder(dir_, cli_args("hold", server_.connect,
                            {"--metrics-listen", "127.0.0.1:" + std::to_string(port), path_}));
  holder.wait_for_line();  // it holds the lock
  const auto acquired = [&](const Scrape& s) {
    return sample_value(s.body, "zklock_lock_acquisitions_total", mutex_on(path_, "acquired")) ==
           1.0;
  };
  const std::optional<Scrape> scrape = scrape_until(port, acquired);
  ASSERT_TRUE(scrape.has_value()) << "nothing served /metrics on port " << port << "\n"
                                  << holder.output();
  EXPECT_EQ(scrape->status, 200);
  EXPECT_EQ(scrape->content_type, kPrometheusContentType);
  EXPECT_EQ(
      sample_value(scrape->body, "zklock_lock_acquisitions_total", mutex_on(path_, "acquired")),
      1.0)
      << scrape->body;
  EXPECT_EQ(
      sample_value(scrape->body, "zklock_lock_acquisitions_total", mutex_on(path_, "timed_out"))
          .value_or(0),
      0.0)
      << scrape->body;
  // The lock path is named (SessionOptions::metrics_paths): nothing is counted under "".
  EXPECT_EQ(sample_value(scrape->body, "zklock_lock_acquisitions_total", mutex_on("", "acquired"))
                .value_or(0),
            0.0)
      << scrape->body;

  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  EXPECT_TRUE(lock_children(session_, path_).empty()) << "hold exited without releasing";
}

TEST_F(CliMetricsListen, ExecServesFromTheWaitToTheCommandsEnd) {
  Mutex ours(session_, path_);
  ours.lock();  // exec queues behind us: its wait is in the figures too
  Gate gate(dir_.file("gate"));
  // Port 0: a free one, which --verbose reports.
  Cli exec(dir_, cli_args("exec", server_.connect,
                          {"-v", "--metrics-listen", "127.0.0.1:0", path_, "--", "sh", "-c",
                           "read _ < \"$1\"", "sh", gate.path()}));
  const std::regex served("serving metrics at http://127\\.0\\.0\\.1:([0-9]+)/metrics");
  std::smatch match;
  std::string output;
  ASSERT_TRUE(wait_until(
      [&] {
        output = exec.output();
        return std::regex_search(output, match, served);
      },
      kEventTimeout))
      << output;
  const int port = std::stoi(match[1].str());
  ASSERT_TRUE(wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout))
      << "exec never queued\n"
      << exec.output();

  const std::optional<Scrape> waiting = fetch_metrics(port);
  ASSERT_TRUE(waiting.has_value()) << "nothing served /metrics while exec waited\n"
                                   << exec.output();
  EXPECT_EQ(
      sample_value(waiting->body, "zklock_lock_acquisitions_total", mutex_on(path_, "acquired"))
          .value_or(0),
      0.0)
      << waiting->body;

  ours.unlock();
  const auto acquired = [&](const Scrape& s) {
    return sample_value(s.body, "zklock_lock_acquisitions_total", mutex_on(path_, "acquired")) ==
           1.0;
  };
  const std::optional<Scrape> running = scrape_until(port, acquired);
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(
      sample_value(running->body, "zklock_lock_acquisitions_total", mutex_on(path_, "acquired")),
      1.0)
      << running->body;
  // It queued behind our node: one contended acquisition, one wait measured.
  EXPECT_EQ(sample_value(running->body, "zklock_lock_contended_total",
                         {{"recipe", "mutex"}, {"path", path_}}),
            1.0)
      << running->body;
  EXPECT_EQ(sample_value(running->body, "zklock_lock_wait_seconds_count",
                         {{"recipe", "mutex"}, {"path", path_}}),
            1.0)
      << running->body;

  gate.open();  // the command ends
  EXPECT_EQ(exec.wait(), 0) << exec.output();
}

TEST_F(CliMetricsListen, AnAddressItCannotHaveIsAUsageErrorAndLeavesNothingBehind) {
  for (const std::string bad : {"nonsense", "127.0.0.1:", "127.0.0.1:65536", "::1:9464"}) {
    const CliResult result =
        run_cli(dir_, cli_args("hold", server_.connect, {"--metrics-listen", bad, path_}));
    EXPECT_EQ(result.exit_code, 64) << bad << "\n" << result.output;
    EXPECT_NE(result.output.find("HOST:PORT"), std::string::npos) << bad << "\n" << result.output;
  }
  // A port that is taken: found once the session is open, before anything is queued.
  int taken = 0;
  const UniqueFd listening = listen_loopback(&taken);
  ASSERT_TRUE(listening.valid());
  const CliResult result = run_cli(
      dir_,
      cli_args("exec", server_.connect,
               {"--metrics-listen", "127.0.0.1:" + std::to_string(taken), path_, "--", "true"}));
  EXPECT_EQ(result.exit_code, 64) << result.output;
  EXPECT_NE(result.output.find("cannot listen"), std::string::npos) << result.output;
  EXPECT_TRUE(lock_children(session_, path_).empty());
}

}  // namespace
}  // namespace zklock::testing
