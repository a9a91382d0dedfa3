// Wakeup: lets any thread (zklock's event thread, a helper thread) wake the supervising loop,
// which polls its descriptor next to the signalfd.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace zklock::cli {

class Wakeup {
 public:
  Wakeup() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  ~Wakeup() { ::close(fd_); }
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  int fd() const noexcept { return fd_; }

  /// Makes fd() readable. Thread-safe, never blocks.
  void notify() noexcept {
    const std::uint64_t one = 1;
    ssize_t ignored = ::write(fd_, &one, sizeof one);
    (void)ignored;  // only fails when the counter is saturated: it is readable then anyway
  }

  /// Clears what notify() set.
  void drain() noexcept {
    std::uint64_t count = 0;
    ssize_t ignored = ::read(fd_, &count, sizeof count);
    (void)ignored;  // EAGAIN: nothing to clear
  }

 private:
  int fd_;
};

}  // namespace zklock::cli
