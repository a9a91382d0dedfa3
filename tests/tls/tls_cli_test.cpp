// The zklock CLI over TLS: --tls-ca, --tls-cert and --tls-key reach a TLS-serving server and
// `zklock status` says the connection is TLS; only the --tls-ca file vouches for the server,
// whatever OpenSSL's default CA store holds (the 3.8 C client loads that store too); and the
// command `zklock exec` runs sees the invoker's OpenSSL variables, not the ones zklock set for
// itself to that end (tools/zklock/tls_trust.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_process.h"
#include "support/cli_tls.h"
#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "test_env.h"
#include "tls_fixture.h"

namespace zklock::testing {
namespace {

constexpr int kExitUnavailable = 69;  // tools/zklock/exit_codes.h

// --tls-ca `ca_file` and client `name`'s certificate and key.
std::vector<std::string> tls_flags(const std::string& name, const std::string& ca_file) {
  ClientCertificate certificate = test_pki().client(name);
  certificate.ca_file = ca_file;
  return cli_tls_options(certificate);
}

// The key's password, as the environment variable the CLI reads (never on a command line).
std::vector<std::string> key_password_env(const std::string& name) {
  return cli_tls_environment(test_pki().client(name));
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(TlsCliTest, StatusReachesATlsServerAndSaysTheConnectionIsTls) {
  TlsServer& server = tls_server();
  const TempDir dir;
  const std::string ca = test_pki().client("holder").ca_file;
  const CliResult r = run_cli(dir,
                              cli_args("status", server.server().tls_connect_string(),
                                       joined(tls_flags("holder", ca), {unique_path("tls-cli")})),
                              key_password_env("holder"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("; connection: TLS"), std::string::npos) << r.output;
}

// OpenSSL's default store is made to hold the CA that signs the server (SSL_CERT_FILE, as a
// system store holds the public CAs), and --tls-ca names another CA: the server must be refused.
TEST(TlsCliTest, OnlyTheTlsCaVouchesForTheServerNotOpenSslsDefaultStore) {
  TlsServer& server = tls_server();
  const TempDir dir;
  const std::string signing_ca = test_pki().client("holder").ca_file;
  const CliResult r =
      run_cli(dir,
              cli_args("status", server.server().tls_connect_string(),
                       joined(tls_flags("holder", server.pki() + "/other-ca.pem"),
                              {"--connect-timeout", "3s", unique_path("tls-cli")})),
              joined({"SSL_CERT_FILE=" + signing_ca, "SSL_CERT_DIR=" + server.pki()},
                     key_password_env("holder")));
  EXPECT_EQ(r.exit_code, kExitUnavailable) << r.output;
  EXPECT_NE(r.output.find("(TLS)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("connection: TLS"), std::string::npos) << r.output;
}

// The command inherits the invoker's environment: SSL_CERT_FILE as the invoker set it, and
// SSL_CERT_DIR not at all - though zklock set both for itself (and connected with its own CA).
TEST(TlsCliTest, TheCommandSeesTheInvokersOpenSslVariablesNotZklocks) {
  TlsServer& server = tls_server();
  const TempDir dir;
  const std::string ca = test_pki().client("holder").ca_file;
  std::vector<std::string> argv = {"env", "-u", "SSL_CERT_DIR", "SSL_CERT_FILE=/invoker/ca.pem"};
  for (const std::string& e : key_password_env("holder")) argv.push_back(e);
  argv.push_back(kCli);
  argv = joined(
      argv, cli_args("exec", server.server().tls_connect_string(),
                     joined(tls_flags("holder", ca),
                            {unique_path("tls-cli"), "--", "sh", "-c",
                             R"(echo "file=${SSL_CERT_FILE-unset} dir=${SSL_CERT_DIR-unset}")"})));
  SpawnOptions options;
  options.log_path = dir.file("exec.log");
  ChildProcess exec(argv, options);
  const auto status = exec.wait_exit(kProcessTimeout);
  const std::string output = read_file(options.log_path);
  ASSERT_TRUE(status.has_value()) << "zklock exec did not end; output:\n" << output;
  EXPECT_EQ(exit_code_of(*status), 0) << output;
  EXPECT_NE(output.find("file=/invoker/ca.pem dir=unset"), std::string::npos) << output;
}

}  // namespace
}  // namespace zklock::testing
