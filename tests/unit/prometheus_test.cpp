// The figures' value types and their Prometheus text (no server): histogram buckets by Prometheus'
// "le" rule, merging, label escaping, and the text's families as a scraper parses them.
#include "zklock/prometheus.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "metrics/histogram.h"

namespace zklock::detail {
namespace {

TEST(PrometheusTest, ABucketHoldsValuesUpToAndIncludingItsBound) {
  AtomicHistogram h({0.001, 0.01}, 1e9);
  h.observe(1'000'000);   // exactly 1 ms: le="0.001"
  h.observe(1'000'001);   // just above: le="0.01"
  h.observe(20'000'000);  // above every bound: +Inf only
  const Histogram s = h.snapshot();
  ASSERT_EQ(s.counts.size(), 3u);
  EXPECT_EQ(s.counts[0], 1u);
  EXPECT_EQ(s.counts[1], 1u);
  EXPECT_EQ(s.counts[2], 1u);
  EXPECT_EQ(s.count, 3u);
  EXPECT_DOUBLE_EQ(s.sum, 0.022000001);
}

TEST(PrometheusTest, ObservationsFromManyThreadsAreAllCounted) {
  AtomicHistogram h(wait_bounds(), 1e9);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h] {
      for (int i = 0; i < 10'000; ++i) h.observe(static_cast<std::uint64_t>(i) * 1000);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(h.snapshot().count, 40'000u);
}

TEST(PrometheusTest, SnapshotsMergeBySummingEveryFigure) {
  MetricsSnapshot a;
  a.locks[{Recipe::kMutex, ""}].acquisitions[0] = 2;
  a.sessions = 1;
  a.confirmation_lag_seconds = 0.5;
  a.requests["create"] = 3;
  MetricsSnapshot b = a;
  b.locks[{Recipe::kSemaphore, "/s"}].acquisitions[1] = 1;
  b.confirmation_lag_seconds = 1.0;
  a.merge(b);
  EXPECT_EQ(a.acquisitions(Recipe::kMutex, AcquireOutcome::kAcquired), 4u);
  EXPECT_EQ(a.acquisitions(Recipe::kSemaphore, AcquireOutcome::kTimedOut), 1u);
  EXPECT_EQ(a.sessions, 2u);
  EXPECT_EQ(a.requests["create"], 6u);
  EXPECT_DOUBLE_EQ(a.confirmation_lag_seconds, 1.0);  // a lag is a maximum, not a sum
}

// Every line of the text is a comment (# HELP / # TYPE) or "name{labels} value" with the
// value a number, and every sample's family was declared before it.
TEST(PrometheusTest, TheTextIsWellFormedWithCumulativeBucketsAndEscapedLabels) {
  MetricsSnapshot s;
  LockFigures& f = s.locks[{Recipe::kMutex, "/odd\"path\\x"}];
  f.acquisitions[0] = 7;
  AtomicHistogram h(wait_bounds(), 1e9);
  h.observe(2'000'000);
  h.observe(2'000'000'000);
  f.wait = h.snapshot();
  s.requests["create"] = 9;
  const std::string text = to_prometheus(s);
  EXPECT_NE(text.find("zklock_lock_acquisitions_total{recipe=\"mutex\",path=\"/odd\\\"path\\\\x\","
                      "outcome=\"acquired\"} 7\n"),
            std::string::npos)
      << text;
  // Cumulative: the 2 ms wait is in every bucket from le=0.0025 up, the 2 s one from le=2.5.
  const std::string prefix =
      "zklock_lock_wait_seconds_bucket{recipe=\"mutex\",path=\"/odd\\\"path\\\\x\",le=";
  EXPECT_NE(text.find(prefix + "\"0.001\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find(prefix + "\"0.0025\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find(prefix + "\"1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find(prefix + "\"2.5\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find(prefix + "\"+Inf\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("zklock_requests_total{op=\"create\"} 9\n"), std::string::npos);

  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> declared;
  int samples = 0;
  while (std::getline(lines, line)) {
    ASSERT_FALSE(line.empty());
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram") << line;
      declared.push_back(name);
      continue;
    }
    if (line[0] == '#') continue;
    ++samples;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    ASSERT_FALSE(declared.empty()) << line;
    const std::string& family = declared.back();
    EXPECT_EQ(name.rfind(family, 0), 0u) << line << " is not of the family " << family;
    const std::string value = line.substr(line.rfind(' ') + 1);
    std::size_t used = 0;
    EXPECT_NO_THROW((void)std::stod(value, &used)) << line;
    EXPECT_EQ(used, value.size()) << line;
  }
  EXPECT_GT(samples, 50);
}

}  // namespace
}  // namespace zklock::detail
