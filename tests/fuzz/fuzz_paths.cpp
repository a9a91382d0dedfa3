// Fuzz target: the validators of znode paths, lock paths and connect strings (src/base/paths.h),
// which see whatever an application passes in. Each is checked against a plain reference written
// from the rules in paths.h (differential fuzzing): they must agree on every input, reject only
// with InvalidArgumentError, and never crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/paths.h"
#include "fuzz_check.h"
#include "zklock/errors.h"

namespace {

using zklock::fuzz::check;

// A valid absolute znode path: "/" or "/seg[/seg...]" with non-empty segments other than "." and
// "..", no byte below 0x20 and no 0x7f.
bool reference_path_ok(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  if (path == "/") return true;
  std::string_view rest = path.substr(1);
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    if (segment.empty() || segment == "." || segment == "..") return false;
    for (const char ch : segment) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7f) return false;
    }
    if (slash == std::string_view::npos) return true;
    rest = rest.substr(slash + 1);
  }
}

// A port: decimal digits only, 1..65535 (leading zeros allowed).
bool reference_port_ok(std::string_view port) {
  if (port.empty()) return false;
  long value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
    if (value > 65535) return false;
  }
  return value >= 1;
}

// "host:port[,host:port...][/chroot]": hosts without whitespace or control bytes (split at the
// last ':', so IPv6 literals keep theirs), the chroot a valid path other than "/".
bool reference_connect_ok(std::string_view connect) {
  std::string_view hosts = connect;
  if (const std::size_t slash = connect.find('/'); slash != std::string_view::npos) {
    const std::string_view chroot = connect.substr(slash);
    if (!reference_path_ok(chroot) || chroot == "/") return false;
    hosts = connect.substr(0, slash);
  }
  if (hosts.empty()) return false;
  while (true) {
    const std::size_t comma = hosts.find(',');
    const std::string_view entry = hosts.substr(0, comma);
    const std::size_t colon = entry.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    for (const char c : entry.substr(0, colon)) {
      if (static_cast<unsigned char>(c) < 0x21) return false;
    }
    if (!reference_port_ok(entry.substr(colon + 1))) return false;
    if (comma == std::string_view::npos) return true;
    hosts = hosts.substr(comma + 1);
  }
}

// True when `fn` returns; false when it throws InvalidArgumentError. Anything else escapes and
// ends the run (a crash for libFuzzer).
template <typename Fn>
bool accepted(Fn fn) {
  try {
    fn();
    return true;
  } catch (const zklock::InvalidArgumentError&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace zklock::detail;

  const bool path_ok = reference_path_ok(input);
  check(znode_path_problem(input).empty() == path_ok,
        "znode_path_problem reports a problem exactly when the path is invalid", input);
  check(accepted([&] { validate_node_path(input, "path"); }) == path_ok,
        "validate_node_path accepts exactly the valid paths", input);

  const bool reserved = input == "/zookeeper" || input.substr(0, 11) == "/zookeeper/";
  check(accepted([&] { validate_lock_path(input); }) == (path_ok && input != "/" && !reserved),
        "validate_lock_path accepts valid paths other than / and /zookeeper[/...]", input);

  if (path_ok && input != "/") {
    const std::string parent = parent_path(input);
    check(reference_path_ok(parent) && input.substr(0, parent.size()) == parent &&
              (parent == "/" || input[parent.size()] == '/'),
          "parent_path of a valid path is a valid path and its prefix", input);
  }

  check(accepted([&] { validate_connect_string(input); }) == reference_connect_ok(input),
        "validate_connect_string accepts exactly host:port[,host:port...][/chroot]", input);
  return 0;
}
