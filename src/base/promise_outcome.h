// fulfil(): hands an asynchronous acquisition's outcome to the promise behind a future form
// (Mutex::lock_future, Semaphore::acquire_future, ...): the value, or the exception the blocking
// call would throw for the error (internal).
#pragma once

#include <exception>
#include <future>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "zklock/errors.h"

namespace zklock::detail {

/// Effects: fulfils `*promise` with `value`, or with the exception throw_error() makes of `error`
///   and `context`; then lets go of the promise. Letting go at once means the future (the
///   caller's) usually holds the last reference to the shared state and the error inside it, and
///   frees them on the caller's thread. Not always: a caller that has already read and dropped
///   the error leaves the last reference here. Either way is safe (the error's count is atomic);
///   under ThreadSanitizer the second is a false report, suppressed in tests/tsan.supp (libstdc++
///   counts an exception_ptr's references in code TSan does not see).
template <class Value>
void fulfil(std::shared_ptr<std::promise<Value>>& promise, const std::string& context,
            std::error_code error, Value value) {
  const auto fulfilled = std::move(promise);
  if (!error) {
    fulfilled->set_value(std::move(value));
    return;
  }
  try {
    throw_error(static_cast<Errc>(error.value()), context);
  } catch (...) {
    fulfilled->set_exception(std::current_exception());
  }
}

}  // namespace zklock::detail
