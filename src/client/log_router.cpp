#include "client/log_router.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <utility>

#include "client/client_log_filter.h"

namespace zklock::detail {
namespace {

constexpr int kSlots = 64;

// What one Session's lines go through. Shared with deliver() so that a line being written when the
// Session ends does not write into a freed slot.
struct SlotState {
  SlotState(LogSink s, LogLevel l) : sink(std::move(s)), level(l) {}
  const LogSink sink;
  const LogLevel level;
  std::mutex filter_mutex;
  ClientLogFilter filter;
  std::atomic<std::uint64_t> tls_handshake_failures{0};
};

struct Slot {
  std::shared_ptr<SlotState> state;  // null: free
};

struct Router {
  std::shared_mutex mutex;
  std::array<Slot, kSlots> slots;
};

Router& router() {
  static auto* r = new Router();  // never destroyed: C client threads may log during exit
  return *r;
}

void write_stderr(LogLevel, std::string_view line) {
  std::fprintf(stderr, "zklock: %.*s\n", static_cast<int>(line.size()), line.data());
}

void write(const LogSink& sink, LogLevel level, std::string_view line) {
  if (sink) {
    sink(level, line);
  } else {
    write_stderr(level, line);
  }
}

void deliver(int slot, const char* message) {
  std::string_view line(message ? message : "");
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  std::shared_ptr<SlotState> state;
  {
    std::shared_lock lock(router().mutex);
    state = router().slots[slot].state;
  }
  if (!state) return;
  if (line.find("error in ssl connect") != std::string_view::npos) {
    state->tls_handshake_failures.fetch_add(1);
  }
  ClientLogFilter::Verdict verdict;
  {
    std::lock_guard lock(state->filter_mutex);
    verdict = state->filter.filter(line, state->level, ClientLogFilter::Clock::now());
  }
  if (verdict.show) write(state->sink, verdict.level, verdict.text);
}

template <int N>
void trampoline(const char* message) {
  deliver(N, message);
}

template <std::size_t... I>
constexpr std::array<CLogCallback, sizeof...(I)> make_trampolines(std::index_sequence<I...>) {
  return {&trampoline<static_cast<int>(I)>...};
}

constexpr auto kTrampolines = make_trampolines(std::make_index_sequence<kSlots>());

// No slot was free: the C client's errors and warnings that are not routine go to stderr.
void fallback(const char* message) {
  std::string_view line(message ? message : "");
  const LogLevel level = ClientLogFilter::level_written_in(line);
  if (level != LogLevel::kInfo && !ClientLogFilter::is_routine(line)) write_stderr(level, line);
}

// Process-wide C client level: INFO while a live slot asks for kDebug, ERROR otherwise (never
// DEBUG: ZOOKEEPER-4809). Not WARN below kDebug, because the 3.8 C client's I/O thread formats
// its "Delaying connection after exhaustively trying all servers [%s]" warning from the host-list
// string without a lock, and zoo_set_servers frees that string (ZOOKEEPER-4699, fixed in 3.9.3):
// a forced reconnect or a server-list update between two connection attempts read freed memory.
// The C client evaluates a line's arguments only when its level is on, so below WARN the string
// is never read. Its errors (routine ones included, which the filter shows at kInfo) still come.
ZooLogLevel c_client_level(int most_verbose_slot) {
  return most_verbose_slot >= static_cast<int>(LogLevel::kDebug) ? ZOO_LOG_LEVEL_INFO
                                                                 : ZOO_LOG_LEVEL_ERROR;
}

void update_process_level_locked() {
  int most = static_cast<int>(LogLevel::kError);
  for (const Slot& s : router().slots) {
    if (s.state) most = std::max(most, static_cast<int>(s.state->level));
  }
  zoo_set_debug_level(c_client_level(most));
}

}  // namespace

LogSlot::LogSlot(LogSink sink, LogLevel level) {
  std::unique_lock lock(router().mutex);
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = router().slots[i];
    if (!s.state) {
      s.state = std::make_shared<SlotState>(std::move(sink), level);
      slot_ = i;
      break;
    }
  }
  update_process_level_locked();
}

LogSlot::~LogSlot() {
  if (slot_ < 0) return;
  std::unique_lock lock(router().mutex);
  router().slots[slot_] = Slot{};
  update_process_level_locked();
}

std::uint64_t LogSlot::tls_handshake_failures() const noexcept {
  if (slot_ < 0) return 0;
  std::shared_lock lock(router().mutex);
  const auto& state = router().slots[slot_].state;
  return state ? state->tls_handshake_failures.load() : 0;
}

void LogSlot::log(LogLevel level, std::string_view line) const {
  std::shared_ptr<SlotState> state;
  if (slot_ >= 0) {
    std::shared_lock lock(router().mutex);
    state = router().slots[slot_].state;
  }
  const LogLevel slot_level = state ? state->level : LogLevel::kWarn;
  if (static_cast<int>(level) > static_cast<int>(slot_level)) return;
  write(state ? state->sink : LogSink(), level, line);
}

CLogCallback LogSlot::callback() const noexcept {
  return slot_ >= 0 ? kTrampolines[slot_] : &fallback;
}

}  // namespace zklock::detail
