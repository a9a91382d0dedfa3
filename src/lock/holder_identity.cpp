#include "lock/holder_identity.h"

#include <unistd.h>

#include <array>
#include <cstdio>

namespace zklock::detail {

std::string json_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (const char ch : text) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          std::array<char, 8> escaped{};
          std::snprintf(escaped.data(), escaped.size(), R"(\u%04x)",
                        static_cast<unsigned char>(ch));
          out += escaped.data();
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string holder_identity(const std::string& description, bool revocable) {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  std::string json = R"({"lib":"zklock","host":")" + json_escape(host.data()) + R"(","pid":)" +
                     std::to_string(getpid()) + R"(,"revocable":)" + (revocable ? "true" : "false");
  if (!description.empty()) json += R"(,"description":")" + json_escape(description) + "\"";
  json += "}";
  return json;
}

}  // namespace zklock::detail
