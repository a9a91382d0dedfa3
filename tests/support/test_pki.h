// tests/support/test_pki.h: the certificates of the tests that speak TLS to ZooKeeper (the TLS
// suite, the wire suites run over TLS, the kernel-fault scenarios' TLS clients), made fresh by
// make_pki.sh in a temporary directory: nothing secret lives in the repository.
#pragma once

#include <string>
#include <utility>

#include "support/zk_server.h"

namespace zklock::testing {

// A client's certificate files, as zklock::TlsOptions and `zklock --tls-*` take them.
struct ClientCertificate {
  std::string ca_file;       // the CA that signs the servers
  std::string cert_file;     // the client's certificate
  std::string key_file;      // its private key
  std::string key_password;  // "" when the key is not encrypted
};

// make_pki.sh's output in a directory of its own, removed with the object (kept with
// ZKLOCK_KEEP_TEST_DIRS). Not copyable.
class TestPki {
 public:
  // Runs make_pki.sh (openssl, keytool). Throws std::runtime_error when it fails.
  TestPki();
  // The certificates another process made in `dir` (left there when this object goes).
  explicit TestPki(std::string dir) : dir_(std::move(dir)), owned_(false) {}
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  const std::string& dir() const { return dir_; }
  // A server's TLS settings: its keystore (CN=localhost, SAN 127.0.0.1; the C client does not
  // check names, so servers on other addresses use it too) and the truststore of the client CA.
  ServerTls server_tls(const std::string& client_auth = "need") const;
  // Client `name`'s files: holder (key encrypted with "holderpw"), intruder, expired.
  ClientCertificate client(const std::string& name) const;
  // The x509 identity a server with the X509AuthenticationProvider gives client `name` (the RFC
  // 2253 subject of its certificate).
  static std::string identity(const std::string& name) { return "CN=" + name + ",O=zklock-test"; }

 private:
  std::string dir_;
  bool owned_ = true;
};

// The process's certificates, made on first use (thread-safe) and kept until it exits - or, in a
// child process of a test, its parent's (ZKLOCK_TEST_PKI_DIR, zk_server.h tls_child_environment).
TestPki& test_pki();

}  // namespace zklock::testing
