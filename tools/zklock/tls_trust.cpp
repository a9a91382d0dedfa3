#include "tls_trust.h"

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace zklock::cli {

std::vector<InheritedVariable> trust_only_the_tls_ca(const std::string& ca_file) {
  const std::vector<std::pair<const char*, std::string>> settings = {{"SSL_CERT_FILE", ca_file},
                                                                     {"SSL_CERT_DIR", "/dev/null"}};
  std::vector<InheritedVariable> as_given;
  for (const auto& [name, value] : settings) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): one thread yet (see the header)
    const char* before = std::getenv(name);
    as_given.push_back(
        {name, before == nullptr ? std::nullopt : std::optional<std::string>(before)});
    // NOLINTNEXTLINE(concurrency-mt-unsafe): one thread yet
    if (::setenv(name, value.c_str(), 1) != 0) {
      throw std::system_error(errno, std::generic_category(), std::string("setenv ") + name);
    }
  }
  return as_given;
}

}  // namespace zklock::cli
