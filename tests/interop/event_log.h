// tests/interop/event_log.h: the shared event log of the interop suite - every contender, of
// every library, appends "enter NAME <ns>" and "exit NAME <ns>" around its critical section (and
// "VIOLATION NAME <ns>" when it finds someone else inside) - and what the tests read from it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/unique_fd.h"

namespace zklock::testing {

// The log, opened O_APPEND as the peer programs open it: one write(2) per line, so that lines from
// different processes never mix.
class LogWriter {
 public:
  // Throws std::runtime_error when `path` cannot be opened.
  explicit LogWriter(const std::string& path);
  // Appends "<what> <name> <ns>": ns of CLOCK_MONOTONIC, as Java's nanoTime() and Python's
  // monotonic_ns() give it. Throws std::runtime_error when the write fails.
  void append(const std::string& what, const std::string& name);

 private:
  UniqueFd file_;
};

struct Event {
  std::string what;  // enter, exit, VIOLATION
  std::string name;
  long long ns = 0;
};

std::vector<Event> read_events(const std::string& path);

// The first way `events` is not a history of one holder at a time, each contender entering
// exactly as often as `expected_enters` says; "" when it is one.
std::string exclusion_problem(const std::vector<Event>& events,
                              const std::map<std::string, int>& expected_enters);

// The same for a read/write lock: the names in `readers` may be inside together (their count at
// the busiest moment goes to *max_readers), anyone else only alone. "" when `events` is such a
// history. Lines are judged in log order (each is written while its writer holds the lock).
std::string shared_exclusion_problem(const std::vector<Event>& events,
                                     const std::map<std::string, int>& expected_enters,
                                     const std::set<std::string>& readers, int* max_readers);

// The names in the order they entered.
std::vector<std::string> enter_order(const std::vector<Event>& events);

}  // namespace zklock::testing
