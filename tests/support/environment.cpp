// tests/support/environment.cpp
#include "support/environment.h"

#include <cstdlib>

namespace zklock::testing {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): nobody setenv()s
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

bool env_flag(const char* name) {
  const std::string value = env_or(name);
  return !value.empty() && value != "0" && value != "false";
}

bool prerequisites_required(const char* override_name) {
  if (!env_or(override_name).empty()) return env_flag(override_name);
  return env_flag("CI");
}

}  // namespace zklock::testing
