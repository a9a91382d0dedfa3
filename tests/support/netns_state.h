// tests/support/netns_state.h: what netns.cpp and ip_forwarding.cpp share - the machine-wide
// state directory the test processes coordinate through (/run/zklock-netns: address blocks and
// ip_forward users, each under an flock) and the sweep of what dead processes left. Internal to
// the support library.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>

namespace zklock::testing {

inline constexpr const char* kStateDir = "/run/zklock-netns";

inline std::string errno_text(const std::string& what, int error) {
  return what + ": " + std::generic_category().message(error);
}

inline std::string state_dir() {
  ::mkdir(kStateDir, 0755);  // EEXIST is fine; any other failure shows at the open() that follows
  return kStateDir;
}

// An flock'd file, unlocked and closed by the destructor.
class FileLock {
 public:
  FileLock(const std::string& path, bool wait) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error(errno_text("cannot open " + path, errno));
    int rc;
    do {
      rc = ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }
  // Keeps the lock until the process exits.
  void leak() { fd_ = -1; }

 private:
  int fd_ = -1;
};

// Removes leftovers of processes that are gone (netns.cpp), once per process, before it creates
// anything.
void sweep_once();

// Gives back ip_forward held by processes that are gone, and by `remove` when not 0
// (ip_forwarding.cpp); restores the value found first once nobody holds it.
void release_ip_forwarding_of_gone_users(int remove);

}  // namespace zklock::testing
