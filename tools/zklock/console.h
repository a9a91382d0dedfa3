// Console: zklock's own messages on stderr, filtered by --quiet / --verbose.
#pragma once

#include <string>

namespace zklock::cli {

enum class Verbosity {
  kQuiet,    // nothing but usage errors
  kNormal,   // errors and warnings (lock lost, timeout, failures)
  kVerbose,  // also progress: connected, queue position, acquired, state changes, released
};

/// Thread-safe: zklock's event thread reports queue positions while the main thread runs.
/// Each message is one line "zklock: <text>", written with a single write(2) so lines from
/// several threads (or processes sharing the terminal) do not interleave.
class Console {
 public:
  explicit Console(Verbosity verbosity = Verbosity::kNormal) : verbosity_(verbosity) {}

  Verbosity verbosity() const noexcept { return verbosity_; }
  bool verbose() const noexcept { return verbosity_ == Verbosity::kVerbose; }

  /// Failures and warnings: shown unless --quiet.
  void error(const std::string& text) const;
  /// Progress: shown with --verbose only.
  void note(const std::string& text) const;

 private:
  static void write_line(const std::string& text);
  Verbosity verbosity_;
};

}  // namespace zklock::cli
