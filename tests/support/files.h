// tests/support/files.h: reading the files tests look at (logs, /proc entries, outputs of child
// processes), as text.
#pragma once

#include <string>
#include <vector>

namespace zklock::testing {

// The whole file at `path`, byte for byte; "" when it does not exist or cannot be read (a log a
// child process has not created yet reads as empty).
std::string read_file(const std::string& path);

// `text` split into lines, without their '\n'; a last line without one is included.
std::vector<std::string> lines_of(const std::string& text);

// True when one of the lines of `text` is exactly `line`.
bool has_line(const std::string& text, const std::string& line);

// Replaces the file at `path` with `text`. Throws std::runtime_error when it cannot.
void write_file(const std::string& path, const std::string& text);

}  // namespace zklock::testing
