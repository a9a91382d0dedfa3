// tests/tls: one TLS-serving ZooKeeper server per test process, and the certificates the tests
// use (make_pki.sh, made fresh in a temporary directory the first time they are asked for).
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "support/zk_server.h"
#include "zklock/session_options.h"

namespace zklock::testing {

class TlsServer {
 public:
  // Makes the certificates and starts a server with a TLS port (ssl.clientAuth=`client_auth`).
  explicit TlsServer(const std::string& client_auth = "need") : pki_(make_temp_dir("zklock-pki-")) {
    const std::string command = std::string("bash ") + ZKLOCK_TEST_TLS_PKI_SCRIPT + " " + pki_;
    if (std::system(command.c_str()) != 0) {  // NOLINT(concurrency-mt-unsafe): test set-up
      throw std::runtime_error("tests/tls/make_pki.sh failed in " + pki_);
    }
    ServerOptions options;
    options.tls = ServerTls{pki_ + "/server.p12", pki_ + "/trust.p12", "changeit", client_auth};
    server_ = ZkServer::start(options);
  }
  ~TlsServer() {
    server_.reset();
    if (!keep_test_dirs()) {
      std::error_code ignored;
      std::filesystem::remove_all(pki_, ignored);
    }
  }
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  ZkServer& server() { return *server_; }
  const std::string& pki() const { return pki_; }

  // SessionOptions for the TLS port with client `name`'s certificate (holder, intruder, expired;
  // make_pki.sh), verified by the suite's CA.
  SessionOptions options(const std::string& name, std::chrono::milliseconds connect_timeout =
                                                      std::chrono::seconds(10)) const {
    SessionOptions o;
    o.connect = server_->tls_connect_string();
    o.session_timeout = std::chrono::seconds(4);
    o.connect_timeout = connect_timeout;
    TlsOptions tls;
    tls.ca_file = pki_ + "/ca.pem";
    tls.cert_file = pki_ + "/" + name + ".pem";
    tls.key_file = pki_ + "/" + name + ".key";
    if (name == "holder") tls.key_password = "holderpw";
    o.tls = tls;
    return o;
  }

  // The x509 identity the server gives client `name` (the RFC 2253 subject of its certificate).
  static std::string identity(const std::string& name) { return "CN=" + name + ",O=zklock-test"; }

 private:
  std::string pki_;
  std::unique_ptr<ZkServer> server_;
};

// The process's TLS server (ssl.clientAuth=need), started on first use, kept until exit.
inline TlsServer& tls_server() {
  static std::mutex mutex;
  static std::unique_ptr<TlsServer> server;
  std::lock_guard lock(mutex);
  if (!server) server = std::make_unique<TlsServer>();
  return *server;
}

}  // namespace zklock::testing
