// tests/support/unique_fd.h: UniqueFd, the one owner of a file descriptor in the tests.
//
// Sockets, pipes and files the tests open are closed on every path out of the scope that opened
// them, also when an ASSERT returns early or an exception passes through.
#pragma once

#include <unistd.h>

#include <utility>

namespace zklock::testing {

// Owns one descriptor (or none: -1). Movable, not copyable; closes what it owns when destroyed or
// reset. close() is never retried: on Linux the descriptor is released even when it fails.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }

  // Closes the descriptor owned so far (if any) and takes `fd` instead.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

  // Gives the descriptor up without closing it.
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

}  // namespace zklock::testing
