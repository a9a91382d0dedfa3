#include "log_router.h"

#include <zookeeper/zookeeper.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <utility>

namespace zklock::detail {
namespace {

constexpr int kSlots = 64;

struct Slot {
  bool used = false;
  LogSink sink;
  LogLevel level = LogLevel::kWarn;
};

struct Router {
  std::shared_mutex mutex;
  std::array<Slot, kSlots> slots;
};

Router& router() {
  static Router* r = new Router();  // never destroyed: C client threads may log during exit
  return *r;
}

LogLevel level_of(std::string_view line) {
  if (line.find("ZOO_ERROR@") != std::string_view::npos) return LogLevel::kError;
  if (line.find("ZOO_WARN@") != std::string_view::npos) return LogLevel::kWarn;
  return LogLevel::kInfo;
}

void write_stderr(LogLevel, std::string_view line) {
  std::fprintf(stderr, "zklock: %.*s\n", static_cast<int>(line.size()), line.data());
}

void deliver(int slot, const char* message) {
  std::string_view line(message ? message : "");
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const LogLevel level = level_of(line);
  LogSink sink;
  {
    std::shared_lock lock(router().mutex);
    const Slot& s = router().slots[slot];
    if (!s.used || static_cast<int>(level) > static_cast<int>(s.level)) return;
    sink = s.sink;
  }
  if (sink) {
    sink(level, line);
  } else {
    write_stderr(level, line);
  }
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

void fallback(const char* message) {
  std::string_view line(message ? message : "");
  if (level_of(line) != LogLevel::kInfo) write_stderr(level_of(line), line);
}

// Process-wide C client level: the most verbose any live slot wants (ERROR..INFO, never DEBUG).
void update_process_level_locked() {
  int most = static_cast<int>(LogLevel::kWarn);
  bool any = false;
  for (const Slot& s : router().slots) {
    if (!s.used) continue;
    most = any ? std::max(most, static_cast<int>(s.level)) : static_cast<int>(s.level);
    any = true;
  }
  const ZooLogLevel c_level = most >= static_cast<int>(LogLevel::kInfo)  ? ZOO_LOG_LEVEL_INFO
                              : most >= static_cast<int>(LogLevel::kWarn) ? ZOO_LOG_LEVEL_WARN
                                                                          : ZOO_LOG_LEVEL_ERROR;
  zoo_set_debug_level(c_level);
}

}  // namespace

LogSlot::LogSlot(LogSink sink, LogLevel level) : slot_(-1) {
  std::unique_lock lock(router().mutex);
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = router().slots[i];
    if (!s.used) {
      s.used = true;
      s.sink = std::move(sink);
      s.level = level;
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

void LogSlot::log(LogLevel level, std::string_view line) const {
  LogSink sink;
  LogLevel slot_level = LogLevel::kWarn;
  if (slot_ >= 0) {
    std::shared_lock lock(router().mutex);
    sink = router().slots[slot_].sink;
    slot_level = router().slots[slot_].level;
  }
  if (static_cast<int>(level) > static_cast<int>(slot_level)) return;
  if (sink) {
    sink(level, line);
  } else {
    write_stderr(level, line);
  }
}

CLogCallback LogSlot::callback() const noexcept {
  return slot_ >= 0 ? kTrampolines[slot_] : &fallback;
}

}  // namespace zklock::detail
