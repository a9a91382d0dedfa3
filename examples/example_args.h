// Tiny argument reading shared by the examples (the CLI uses CLI11; examples stay dependency-free).
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

namespace zklock::examples {

/// Returns the value after `--name` in argv, or `fallback`.
inline std::string arg(int argc, char** argv, const char* name, std::string fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return fallback;
}

/// The connect string: --connect, else $ZKLOCK_CONNECT, else 127.0.0.1:2181.
inline std::string connect(int argc, char** argv) {
  const char* env = std::getenv("ZKLOCK_CONNECT");
  return arg(argc, argv, "--connect", env ? env : "127.0.0.1:2181");
}

}  // namespace zklock::examples
