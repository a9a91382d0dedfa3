// tests/support/test_pki.cpp
#include "support/test_pki.h"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>

namespace zklock::testing {

TestPki::TestPki() : dir_(make_temp_dir("zklock-pki-")) {
  const std::string command = std::string("bash ") + ZKLOCK_TEST_PKI_SCRIPT + " " + dir_;
  if (std::system(command.c_str()) != 0) {  // NOLINT(concurrency-mt-unsafe): test set-up
    throw std::runtime_error("tests/support/make_pki.sh failed in " + dir_);
  }
}

TestPki::~TestPki() {
  if (owned_ && !keep_test_dirs()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

ServerTls TestPki::server_tls(const std::string& client_auth) const {
  return ServerTls{dir_ + "/server.p12", dir_ + "/trust.p12", "changeit", client_auth};
}

ClientCertificate TestPki::client(const std::string& name) const {
  return ClientCertificate{dir_ + "/ca.pem", dir_ + "/" + name + ".pem", dir_ + "/" + name + ".key",
                           name == "holder" ? "holderpw" : ""};
}

TestPki& test_pki() {
  static std::mutex mutex;
  static std::unique_ptr<TestPki> pki;
  std::lock_guard lock(mutex);
  if (!pki) {
    const char* parents = std::getenv("ZKLOCK_TEST_PKI_DIR");  // NOLINT(concurrency-mt-unsafe)
    pki = parents != nullptr && *parents != '\0' ? std::make_unique<TestPki>(parents)
                                                 : std::make_unique<TestPki>();
  }
  return *pki;
}

}  // namespace zklock::testing
