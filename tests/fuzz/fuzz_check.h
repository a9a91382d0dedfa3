// tests/fuzz/fuzz_check.h: how a fuzz target reports a wrong result - the property, the input
// (escaped, so that it can be pasted into a unit test) and an abort, which libFuzzer records as a
// crash with the input saved beside it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace zklock::fuzz {

/// `input` with every byte outside printable ASCII (and '"', '\') as a \xNN escape.
inline std::string escaped(std::string_view input) {
  std::string out;
  for (const char ch : input) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

/// Aborts with `property` and the input unless `holds`.
inline void check(bool holds, const char* property, std::string_view input) {
  if (holds) return;
  std::fprintf(stderr, "fuzz: property violated: %s\nfuzz: input (%zu bytes): \"%s\"\n", property,
               input.size(), escaped(input).c_str());
  std::abort();
}

}  // namespace zklock::fuzz
