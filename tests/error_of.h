// tests/error_of.h: what a call failed with, as a value a test can compare.
#pragma once

#include "zklock/errors.h"

namespace zklock::testing {

/// Returns: Errc::ok when `fn()` returns, or the code of the zklock::Error it throws (any other
///   exception goes on to the test, which fails).
template <class Fn>
Errc error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.errc();
  }
  return Errc::ok;
}

}  // namespace zklock::testing
