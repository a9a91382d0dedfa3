// tests/cli/duration_test.cpp: durations on zklock's command line (tools/zklock/duration.h) -
// what is accepted, exactly; what is refused, with a message saying why; how they are printed;
// how `zklock status --watch` shows an age.
#include "duration.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <variant>

namespace zklock::cli {
namespace {

using std::chrono::milliseconds;

// The parsed duration; fails the test (and returns -1 ms) when `text` was refused.
milliseconds accepted(const std::string& text) {
  const auto parsed = parse_duration(text);
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    ADD_FAILURE() << "'" << text << "' refused: " << *error;
    return milliseconds(-1);
  }
  return std::get<milliseconds>(parsed);
}

// The refusal message; fails the test (and returns "") when `text` was accepted.
std::string refused(const std::string& text) {
  const auto parsed = parse_duration(text);
  if (const auto* error = std::get_if<std::string>(&parsed)) return *error;
  ADD_FAILURE() << "'" << text << "' accepted as " << std::get<milliseconds>(parsed).count()
                << " ms";
  return "";
}

TEST(DurationTest, AcceptsEachUnit) {
  EXPECT_EQ(accepted("500ms"), milliseconds(500));
  EXPECT_EQ(accepted("10s"), milliseconds(10'000));
  EXPECT_EQ(accepted("3m"), milliseconds(180'000));
  EXPECT_EQ(accepted("2h"), milliseconds(7'200'000));
  EXPECT_EQ(accepted("0s"), milliseconds(0));
  EXPECT_EQ(accepted("007s"), milliseconds(7000));
}

TEST(DurationTest, AcceptsDecimalsThatAreWholeMilliseconds) {
  EXPECT_EQ(accepted("1.5m"), milliseconds(90'000));
  EXPECT_EQ(accepted("0.001s"), milliseconds(1));
  EXPECT_EQ(accepted("2.25h"), milliseconds(8'100'000));
  EXPECT_EQ(accepted("1.000ms"), milliseconds(1));
  EXPECT_NE(refused("0.0001s").find("finer than a millisecond"), std::string::npos);
  EXPECT_NE(refused("1.5ms").find("finer than a millisecond"), std::string::npos);
}

TEST(DurationTest, RefusesAMissingOrUnknownUnit) {
  EXPECT_NE(refused("5").find("missing unit"), std::string::npos);
  EXPECT_NE(refused("1.5d").find("unknown unit 'd'"), std::string::npos);
  EXPECT_NE(refused("5MS").find("unknown unit 'MS'"), std::string::npos) << "units are lower case";
  EXPECT_NE(refused("5 parsecs").find("invalid duration"), std::string::npos);
  EXPECT_NE(refused("").find("missing unit"), std::string::npos);
}

TEST(DurationTest, RefusesSignsSpacesExponentsAndHalfNumbers) {
  for (const char* text :
       {"-1s", "+1s", " 1s", "1 s", "1s ", "1e3ms", ".5s", "1.s", "1..5s", "s", "0x10s", "1,5s"}) {
    SCOPED_TRACE(text);
    EXPECT_NE(refused(text).find("invalid duration '" + std::string(text) + "'"),
              std::string::npos);
  }
}

TEST(DurationTest, RefusesMoreThanTheMaximum) {
  EXPECT_EQ(accepted("100000h"), kMaxDuration);
  EXPECT_NE(refused("100001h").find("too large (at most 100000h)"), std::string::npos);
  EXPECT_NE(refused("9999999999999999s").find("too large or too precise"), std::string::npos);
}

TEST(DurationTest, FormatsInTheLargestExactUnit) {
  EXPECT_EQ(format_duration(milliseconds(0)), "0s");
  EXPECT_EQ(format_duration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(format_duration(milliseconds(10'000)), "10s");
  EXPECT_EQ(format_duration(milliseconds(120'000)), "2m");
  EXPECT_EQ(format_duration(std::chrono::hours(1)), "1h");
  EXPECT_EQ(format_duration(milliseconds(90'000)), "90s");
}

TEST(DurationTest, FormattedDurationsParseBack) {
  for (const milliseconds d : {milliseconds(1), milliseconds(999), milliseconds(61'000),
                               milliseconds(3'600'000), milliseconds(5'400'000)}) {
    EXPECT_EQ(accepted(format_duration(d)), d) << format_duration(d);
  }
}

TEST(DurationTest, AgesAreTruncatedInTheLargestUsefulUnits) {
  EXPECT_EQ(format_age(milliseconds(0)), "0.0s");
  EXPECT_EQ(format_age(milliseconds(99)), "0.0s");
  EXPECT_EQ(format_age(milliseconds(12'399)), "12.3s");
  EXPECT_EQ(format_age(milliseconds(59'999)), "59.9s");
  EXPECT_EQ(format_age(milliseconds(60'000)), "1m00s");
  EXPECT_EQ(format_age(milliseconds(245'900)), "4m05s");
  EXPECT_EQ(format_age(milliseconds(3'599'999)), "59m59s");
  EXPECT_EQ(format_age(std::chrono::hours(1)), "1h00m");
  EXPECT_EQ(format_age(std::chrono::hours(2) + std::chrono::minutes(3)), "2h03m");
  EXPECT_EQ(format_age(std::chrono::hours(24) - milliseconds(1)), "23h59m");
  EXPECT_EQ(format_age(std::chrono::hours(76)), "3d04h");
  EXPECT_EQ(format_age(kMaxDuration), "4166d16h");
  EXPECT_EQ(format_age(milliseconds(-5000)), "0.0s") << "a clock ahead of ours";
}

}  // namespace
}  // namespace zklock::cli
