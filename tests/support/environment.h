// tests/support/environment.h: what the environment tells a test (only read: no test sets a
// variable), and the one rule for prerequisites that may be missing on a developer's machine
// (Java, the Curator jars, kazoo) but never on CI.
#pragma once

#include <string>

namespace zklock::testing {

// The value of environment variable `name`; `fallback` when it is unset or empty.
std::string env_or(const char* name, const std::string& fallback = {});

// True when `name` is set to something other than "", "0" or "false".
bool env_flag(const char* name);

// Whether a missing prerequisite must fail the test instead of skipping it: `override_name`
// decides when it is set (ZKLOCK_INTEROP_REQUIRED=0 allows skipping, =1 forbids it); otherwise a
// CI machine (CI set, as CI services do) requires everything, since CI installs every prerequisite
// and a skip there would hide a broken setup behind a green run.
bool prerequisites_required(const char* override_name);

}  // namespace zklock::testing
