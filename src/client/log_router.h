// Routes the C client's log lines to each Session's own LogSink (internal).
//
// The C client's log callback carries no context pointer, and its level is process-wide. zklock
// hands each handle a callback of its own from a fixed set of trampolines (one per slot), sets the
// process level to ERROR, or to INFO while a live Session asks for kDebug (never WARN below that,
// never DEBUG: see log_router.cpp), and filters per Session by the level written in each line.
#pragma once

#include <cstdint>
#include <string_view>

#include "zklock/log.h"

namespace zklock::detail {

using CLogCallback = void (*)(const char* message);

class LogSlot {
 public:
  /// Takes a free slot for `sink` (stderr when empty) at `level`. With no slot free, the callback
  /// returned by callback() writes to stderr.
  LogSlot(LogSink sink, LogLevel level);
  /// Frees the slot. Call only after the handle that used callback() is closed.
  ~LogSlot();
  LogSlot(const LogSlot&) = delete;
  LogSlot& operator=(const LogSlot&) = delete;

  CLogCallback callback() const noexcept;

  /// Writes a line in zklock's own words to this slot's sink (stderr when none), if `level` is
  /// within the slot's level.
  void log(LogLevel level, std::string_view line) const;

  /// How many failed TLS handshakes ("error in ssl connect") the C client logged on this slot:
  /// a server that does not speak TLS, one whose certificate our CA does not sign, one that
  /// refused our certificate - and every handshake zklock broke itself (client/tls.h).
  std::uint64_t tls_handshake_failures() const noexcept;

 private:
  int slot_ = -1;
};

}  // namespace zklock::detail
