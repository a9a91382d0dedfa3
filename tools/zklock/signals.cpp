#include "signals.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace zklock::cli {

SignalReader::SignalReader() {
  sigset_t read_set;
  sigemptyset(&read_set);
  for (std::size_t i = 0; i < std::size(kTouched); ++i) {
    const int sig = kTouched[i];
    if (sigaction(sig, nullptr, &original_actions_[i]) != 0) {
      throw std::system_error(errno, std::generic_category(), "sigaction");
    }
    if (sig == SIGCHLD) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      sigaction(SIGCHLD, &dfl, nullptr);
      sigaddset(&read_set, sig);
    } else if (original_actions_[i].sa_handler != SIG_IGN) {
      sigaddset(&read_set, sig);
    }
  }
  if (sigprocmask(SIG_BLOCK, &read_set, &original_mask_) != 0) {
    throw std::system_error(errno, std::generic_category(), "sigprocmask");
  }
  fd_ = signalfd(-1, &read_set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "signalfd");
}

SignalReader::~SignalReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<signalfd_siginfo> SignalReader::read_pending() {
  std::vector<signalfd_siginfo> out;
  for (;;) {
    signalfd_siginfo info{};
    const ssize_t n = ::read(fd_, &info, sizeof info);
    if (n == static_cast<ssize_t>(sizeof info)) {
      out.push_back(info);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return out;  // EAGAIN: nothing more pending
  }
}

std::vector<signalfd_siginfo> SignalReader::wait(Wakeup& other, int timeout_ms) {
  pollfd fds[] = {{fd_, POLLIN, 0}, {other.fd(), POLLIN, 0}};
  if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR) {
    throw std::system_error(errno, std::generic_category(), "poll");
  }
  other.drain();
  return read_pending();
}

bool SignalReader::is_termination(int signal) noexcept {
  return signal == SIGINT || signal == SIGTERM || signal == SIGHUP;
}

void SignalReader::restore_in_child() const noexcept {
  for (std::size_t i = 0; i < std::size(kTouched); ++i) {
    sigaction(kTouched[i], &original_actions_[i], nullptr);
  }
  sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
}

}  // namespace zklock::cli
