#include "console.h"

#include <unistd.h>

#include <cerrno>

namespace zklock::cli {

void Console::error(const std::string& text) const {
  if (verbosity_ != Verbosity::kQuiet) write_line(text);
}

void Console::note(const std::string& text) const {
  if (verbosity_ == Verbosity::kVerbose) write_line(text);
}

void Console::write_line(const std::string& text) {
  const std::string line = "zklock: " + text + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stderr closed: nothing better to do with a message
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace zklock::cli
