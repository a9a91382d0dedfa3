#include "lock/holder_identity.h"

#include <unistd.h>

#include <array>
#include <charconv>
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

std::string holder_identity(const std::string& description, bool revocable,
                            std::optional<std::int64_t> held_since_ms) {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  std::string json = R"({"lib":"zklock","host":")" + json_escape(host.data()) + R"(","pid":)" +
                     std::to_string(getpid()) + R"(,"revocable":)" + (revocable ? "true" : "false");
  if (held_since_ms) json += R"(,"held_since":)" + std::to_string(*held_since_ms);
  if (!description.empty()) json += R"(,"description":")" + json_escape(description) + "\"";
  json += "}";
  return json;
}

namespace {

// Appends code point `cp` as UTF-8.
void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::optional<unsigned> hex4(std::string_view digits) {
  if (digits.size() < 4) return std::nullopt;
  unsigned value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const char c = digits[i];
    value <<= 4;
    if (c >= '0' && c <= '9') {
      value |= static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      value |= static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      value |= static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
  }
  return value;
}

}  // namespace

bool is_holder_identity(std::string_view data) noexcept {
  constexpr std::string_view kOurs = R"({"lib":"zklock")";
  return data.substr(0, kOurs.size()) == kOurs;
}

std::optional<std::string> identity_string_field(std::string_view json, std::string_view key) {
  if (!is_holder_identity(json)) return std::nullopt;
  // Our objects are flat and written by holder_identity(): a member's name is found as
  // ,"key":" - never inside a string value, where every quote is escaped.
  const std::string marker = ",\"" + std::string(key) + "\":\"";
  const auto at = json.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string out;
  for (std::size_t i = at + marker.size(); i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i == json.size()) return std::nullopt;
    switch (json[i]) {
      case '"':
      case '\\':
      case '/':
        out += json[i];
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        const auto cp = hex4(json.substr(i + 1));
        if (!cp) return std::nullopt;
        append_utf8(out, *cp);
        i += 4;
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;  // no closing quote
}

std::optional<std::int64_t> identity_integer_field(std::string_view json, std::string_view key) {
  if (!is_holder_identity(json)) return std::nullopt;
  // As identity_string_field: ,"key": cannot stand inside a string value of ours.
  const std::string marker = ",\"" + std::string(key) + "\":";
  const auto at = json.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  const char* first = json.data() + at + marker.size();
  const char* last = json.data() + json.size();
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(first, last, value);
  if (error != std::errc() || end == last || (*end != ',' && *end != '}')) return std::nullopt;
  return value;
}

}  // namespace zklock::detail
