// tests/interop/event_log.cpp
#include "event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "support/files.h"

namespace zklock::testing {

LogWriter::LogWriter(const std::string& path)
    : file_(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) {
  if (!file_.valid()) throw std::runtime_error(path + ": " + std::strerror(errno));
}

void LogWriter::append(const std::string& what, const std::string& name) {
  // steady_clock is CLOCK_MONOTONIC, as are Java's nanoTime() and Python's monotonic_ns().
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  const std::string line = what + " " + name + " " + std::to_string(ns) + "\n";
  if (::write(file_.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    throw std::runtime_error("log write failed: " + std::string(std::strerror(errno)));
  }
}

std::vector<Event> read_events(const std::string& path) {
  std::vector<Event> events;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    Event e;
    std::istringstream fields(line);
    fields >> e.what >> e.name >> e.ns;
    events.push_back(e);
  }
  return events;
}

// The first way `events` is not a history of one holder at a time, each contender entering
// exactly as often as `expected_enters` says; "" when it is one.
std::string exclusion_problem(const std::vector<Event>& events,
                              const std::map<std::string, int>& expected_enters) {
  std::map<std::string, int> enters;
  long long last_ns = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const std::string at = "line " + std::to_string(i + 1) + " (" + e.what + " " + e.name + "): ";
    if (e.what == "VIOLATION") return at + "two holders at once";
    const bool want_enter = i % 2 == 0;
    if (e.what != (want_enter ? "enter" : "exit"))
      return at + "expected " + (want_enter ? "an enter" : "an exit") + " (overlapping holders)";
    if (!want_enter && e.name != events[i - 1].name)
      return at + "exit of someone who did not enter";
    if (expected_enters.count(e.name) == 0) return at + "unknown contender";
    // Each timestamp is taken inside the lock, before the write, on one machine-wide clock.
    if (e.ns < last_ns) return at + "time went backwards: holders overlapped";
    last_ns = e.ns;
    if (want_enter) ++enters[e.name];
  }
  if (events.size() % 2 != 0) return "the last holder never exited";
  for (const auto& [name, count] : expected_enters) {
    if (enters[name] != count)
      return name + " entered " + std::to_string(enters[name]) + " times, expected " +
             std::to_string(count);
  }
  return "";
}

std::string shared_exclusion_problem(const std::vector<Event>& events,
                                     const std::map<std::string, int>& expected_enters,
                                     const std::set<std::string>& readers, int* max_readers) {
  std::map<std::string, int> enters;
  std::set<std::string> inside;
  bool writer_inside = false;
  *max_readers = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const std::string at = "line " + std::to_string(i + 1) + " (" + e.what + " " + e.name + "): ";
    if (expected_enters.count(e.name) == 0) return at + "unknown contender";
    const bool reader = readers.count(e.name) != 0;
    if (e.what == "VIOLATION") return at + "a holder found someone inside who must not be";
    if (e.what == "enter") {
      if (inside.count(e.name) != 0) return at + "entered twice";
      if (writer_inside) return at + "entered beside a writer";
      if (!reader && !inside.empty()) return at + "a writer entered beside others";
      inside.insert(e.name);
      writer_inside = !reader;
      if (reader) *max_readers = std::max(*max_readers, static_cast<int>(inside.size()));
      ++enters[e.name];
    } else if (e.what == "exit") {
      if (inside.erase(e.name) == 0) return at + "exit of someone who was not inside";
      writer_inside = false;
    } else {
      return at + "unknown event";
    }
  }
  if (!inside.empty()) return *inside.begin() + " never exited";
  for (const auto& [name, count] : expected_enters) {
    if (enters[name] != count)
      return name + " entered " + std::to_string(enters[name]) + " times, expected " +
             std::to_string(count);
  }
  return "";
}

std::vector<std::string> enter_order(const std::vector<Event>& events) {
  std::vector<std::string> names;
  for (const Event& e : events) {
    if (e.what == "enter") names.push_back(e.name);
  }
  return names;
}

}  // namespace zklock::testing
