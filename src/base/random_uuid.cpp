#include "base/random_uuid.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <system_error>

namespace zklock::detail {
namespace {

void fill_random(unsigned char* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::getrandom(out + done, size - done, 0);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      // No getrandom (very old kernels): std::random_device reads the same source.
      std::random_device device;
      for (; done < size; ++done) out[done] = static_cast<unsigned char>(device());
    }
  }
}

}  // namespace

std::string random_uuid() {
  std::array<unsigned char, 16> b{};
  fill_random(b.data(), b.size());
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // variant 10
  std::array<char, 37> text{};
  std::snprintf(text.data(), text.size(),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return text.data();
}

}  // namespace zklock::detail
