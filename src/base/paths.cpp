#include "base/paths.h"

#include <charconv>

#include "zklock/errors.h"

namespace zklock::detail {

std::string znode_path_problem(std::string_view path) {
  if (path.empty()) return "path is empty";
  if (path.front() != '/') return "path must be absolute (start with '/')";
  if (path.size() == 1) return {};
  if (path.back() == '/') return "path must not end with '/'";
  std::size_t start = 1;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, end - start);
    if (segment.empty()) return R"(path must not contain an empty segment ("//"))";
    if (segment == "." || segment == "..") {
      return R"(path must not contain "." or ".." segments)";
    }
    for (const char ch : segment) {
      const auto c = static_cast<unsigned char>(ch);
      // ZooKeeper refuses U+0000-U+001F and U+007F (and more, in UTF-8 ranges it checks itself).
      if (c < 0x20 || c == 0x7f) return "path must not contain control characters (NUL included)";
    }
    start = end + 1;
  }
  return {};
}

void validate_node_path(std::string_view path, std::string_view what) {
  const std::string problem = znode_path_problem(path);
  if (!problem.empty()) {
    throw InvalidArgumentError(std::string(what) + " \"" + std::string(path) + "\": " + problem);
  }
}

void validate_lock_path(std::string_view path) {
  validate_node_path(path, "lock path");
  if (path == "/") throw InvalidArgumentError("lock path \"/\": the root cannot be a lock path");
  if (path == "/zookeeper" || path.substr(0, 11) == "/zookeeper/") {
    throw InvalidArgumentError("lock path \"" + std::string(path) +
                               "\": /zookeeper is reserved for the server");
  }
}

void validate_connect_string(std::string_view connect) {
  auto fail = [&](const std::string& why) {
    throw InvalidArgumentError("connect string \"" + std::string(connect) + "\": " + why);
  };
  if (connect.empty()) fail("empty (expected host:port[,host:port...][/chroot])");
  std::string_view hosts = connect;
  if (const auto slash = connect.find('/'); slash != std::string_view::npos) {
    hosts = connect.substr(0, slash);
    const std::string_view chroot = connect.substr(slash);
    const std::string problem = znode_path_problem(chroot);
    if (!problem.empty()) fail("chroot \"" + std::string(chroot) + "\": " + problem);
    if (chroot == "/") fail("chroot \"/\" is not allowed (omit it)");
  }
  if (hosts.empty()) fail("no host before the chroot");
  std::size_t start = 0;
  while (start <= hosts.size()) {
    const std::size_t end = std::min(hosts.find(',', start), hosts.size());
    const std::string_view entry = hosts.substr(start, end - start);
    if (entry.empty()) fail("empty host entry");
    const auto colon = entry.rfind(':');
    if (colon == std::string_view::npos) fail("\"" + std::string(entry) + "\" has no :port");
    const std::string_view host = entry.substr(0, colon);
    const std::string_view port = entry.substr(colon + 1);
    if (host.empty()) fail("\"" + std::string(entry) + "\" has no host");
    for (const char c : host) {
      if (c == ' ' || static_cast<unsigned char>(c) < 0x21) fail("host contains whitespace");
    }
    int value = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || p != port.data() + port.size() || value < 1 ||
        value > 65535) {
      fail("port \"" + std::string(port) + "\" is not a number in 1..65535");
    }
    start = end + 1;
  }
}

std::string parent_path(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == 0 || slash == std::string_view::npos) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace zklock::detail
