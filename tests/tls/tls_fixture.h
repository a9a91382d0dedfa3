// tests/tls: one TLS-serving ZooKeeper server per test process, with the process's certificates
// (support/test_pki.h).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "support/test_pki.h"
#include "support/zk_server.h"
#include "zklock/session_options.h"

namespace zklock::testing {

// TlsOptions of client `name`'s certificate (test_pki.h).
inline TlsOptions tls_options(const ClientCertificate& c) {
  TlsOptions tls;
  tls.ca_file = c.ca_file;
  tls.cert_file = c.cert_file;
  tls.key_file = c.key_file;
  tls.key_password = c.key_password;
  return tls;
}

class TlsServer {
 public:
  // Starts a server with a TLS port (ssl.clientAuth=`client_auth`).
  explicit TlsServer(const std::string& client_auth = "need") {
    ServerOptions options;
    options.tls = test_pki().server_tls(client_auth);
    server_ = ZkServer::start(options);
  }

  ZkServer& server() { return *server_; }
  const std::string& pki() const { return test_pki().dir(); }

  // SessionOptions for the TLS port with client `name`'s certificate (holder, intruder, expired;
  // make_pki.sh), verified by the suite's CA.
  SessionOptions options(const std::string& name, std::chrono::milliseconds connect_timeout =
                                                      std::chrono::seconds(10)) const {
    SessionOptions o;
    o.connect = server_->tls_connect_string();
    o.session_timeout = std::chrono::seconds(4);
    o.connect_timeout = connect_timeout;
    o.tls = tls_options(test_pki().client(name));
    return o;
  }

  // The x509 identity the server gives client `name` (the RFC 2253 subject of its certificate).
  static std::string identity(const std::string& name) { return TestPki::identity(name); }

 private:
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
