#include "holder_identity.h"

#include <unistd.h>

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
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(ch));
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string holder_identity(const std::string& description) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string json = "{\"lib\":\"zklock\",\"host\":\"" + json_escape(host) +
                     "\",\"pid\":" + std::to_string(getpid());
  if (!description.empty()) json += ",\"description\":\"" + json_escape(description) + "\"";
  json += "}";
  return json;
}

}  // namespace zklock::detail
