// tests/support/four_letter_words.cpp
#include "support/four_letter_words.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "support/socket_io.h"
#include "support/unique_fd.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// One exchange with one resolved address: connect (non-blocking, so that a frozen or filtered
// server costs no more than the deadline), send the word, read until the server closes.
std::optional<std::string> exchange(const addrinfo& address, std::string_view word,
                                    Clock::time_point deadline) {
  const UniqueFd sock(::socket(
      address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, address.ai_protocol));
  if (!sock.valid()) return std::nullopt;
  if (::connect(sock.get(), address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return std::nullopt;
    if (!wait_for_io(sock.get(), POLLOUT, deadline)) return std::nullopt;
    int error = 0;
    socklen_t len = sizeof error;
    if (::getsockopt(sock.get(), SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
      return std::nullopt;
    }
  }

  std::string_view pending = word;
  while (!pending.empty()) {
    const ssize_t n = ::send(sock.get(), pending.data(), pending.size(), MSG_NOSIGNAL);
    if (n > 0) {
      pending.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for_io(sock.get(), POLLOUT, deadline)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }

  // The server answers and closes: read until EOF. A frozen server accepts the connection (the
  // kernel does that) but never answers, hence the deadline.
  std::string reply;
  std::array<char, 8192> buffer{};
  for (;;) {
    const ssize_t n = ::recv(sock.get(), buffer.data(), buffer.size(), 0);
    if (n > 0) {
      reply.append(buffer.data(), static_cast<std::size_t>(n));
    } else if (n == 0) {
      return reply;
    } else if (errno == EAGAIN || errno == EINTR) {
      if (!wait_for_io(sock.get(), POLLIN, deadline)) return std::nullopt;
    } else {
      // ECONNRESET: the server closed without reading everything we sent. It did answer.
      return errno == ECONNRESET && !reply.empty() ? std::optional<std::string>(reply)
                                                   : std::nullopt;
    }
  }
}

// Splits into lines without the trailing '\n' (and a '\r' if any).
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<std::string> try_four_letter_word(const std::string& host, int port,
                                                std::string_view word,
                                                std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses) != 0) {
    return std::nullopt;
  }
  std::optional<std::string> reply;
  for (const addrinfo* address = addresses; address != nullptr && !reply;
       address = address->ai_next) {
    reply = exchange(*address, word, deadline);
  }
  ::freeaddrinfo(addresses);
  return reply;
}

std::optional<std::string> try_four_letter_word(int port, std::string_view word,
                                                std::chrono::milliseconds timeout) {
  return try_four_letter_word("127.0.0.1", port, word, timeout);
}

std::string four_letter_word(int port, std::string_view word, std::chrono::milliseconds timeout) {
  return try_four_letter_word(port, word, timeout).value_or(std::string());
}

std::string four_letter_word(const std::string& host, int port, std::string_view word,
                             std::chrono::milliseconds timeout) {
  return try_four_letter_word(host, port, word, timeout).value_or(std::string());
}

std::map<std::string, std::string> parse_mntr(std::string_view text) {
  std::map<std::string, std::string> values;
  for (std::string_view line : split_lines(text)) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos || tab == 0) continue;
    values[std::string(line.substr(0, tab))] = std::string(line.substr(tab + 1));
  }
  return values;
}

std::string parse_mode(std::string_view text) {
  for (std::string_view line : split_lines(text)) {
    if (starts_with(line, "Mode: ")) return std::string(trim(line.substr(6)));
  }
  return {};
}

std::optional<int64_t> parse_session_id(std::string_view text) {
  text = trim(text);
  if (!starts_with(text, "0x") || text.size() < 3 || text.size() > 18) return std::nullopt;
  uint64_t value = 0;
  for (char c : text.substr(2)) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    value = (value << 4) | static_cast<uint64_t>(digit);
  }
  return static_cast<int64_t>(value);  // two's complement, as Java's long and clientid_t
}

std::string format_session_id(int64_t session_id) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(static_cast<uint64_t>(session_id)));
  return text;
}

WatchesBySession parse_wchc(std::string_view text) {
  WatchesBySession result;
  std::optional<int64_t> session;
  for (std::string_view line : split_lines(text)) {
    if (starts_with(line, "\t")) {
      const std::string_view path = line.substr(1);  // paths may contain spaces: no trim
      if (session && starts_with(path, "/")) result[*session].emplace_back(path);
    } else {
      session = parse_session_id(line);
      if (session) result[*session];  // a session line with no path lines still appears
    }
  }
  return result;
}

WatchesByPath parse_wchp(std::string_view text) {
  WatchesByPath result;
  std::optional<std::string> path;
  for (std::string_view line : split_lines(text)) {
    if (starts_with(line, "\t")) {
      const auto session = parse_session_id(line);
      if (path && session) result[*path].push_back(*session);
    } else if (starts_with(line, "/")) {
      path = std::string(line);
      result[*path];
    } else {
      path.reset();
    }
  }
  return result;
}

EphemeralsBySession parse_dump_ephemerals(std::string_view text) {
  EphemeralsBySession result;
  bool in_section = false;
  std::optional<int64_t> session;
  for (std::string_view line : split_lines(text)) {
    if (!in_section) {
      in_section = starts_with(line, "Sessions with Ephemerals");
      continue;
    }
    if (starts_with(line, "\t")) {
      const std::string_view path = line.substr(1);  // paths may contain spaces: no trim
      if (session && starts_with(path, "/")) result[*session].emplace_back(path);
    } else if (!line.empty() && line.back() == ':' &&
               (session = parse_session_id(line.substr(0, line.size() - 1)))) {
      result[*session];
    } else {
      break;  // "Connections dump:" or anything else ends the section
    }
  }
  return result;
}

std::optional<int64_t> mntr_value(int port, const std::string& key) {
  const auto reply = try_four_letter_word(port, "mntr");
  if (!reply) return std::nullopt;
  const auto values = parse_mntr(*reply);
  const auto it = values.find(key);
  if (it == values.end() || it->second.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(value);
}

int64_t watch_count(int port) { return mntr_value(port, "zk_watch_count").value_or(-1); }

std::vector<std::string> watched_paths(int port) {
  std::vector<std::string> paths;
  for (const auto& [path, sessions] : parse_wchp(four_letter_word(port, "wchp"))) {
    if (!sessions.empty()) paths.push_back(path);
  }
  return paths;  // std::map keys: already sorted
}

std::vector<std::string> ephemeral_paths(int port) {
  std::set<std::string> paths;
  for (const auto& [session, owned] : parse_dump_ephemerals(four_letter_word(port, "dump"))) {
    paths.insert(owned.begin(), owned.end());
  }
  return {paths.begin(), paths.end()};
}

}  // namespace zklock::testing
