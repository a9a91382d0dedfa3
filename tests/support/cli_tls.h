// tests/support/cli_tls.h: the zklock CLI's TLS settings for a test that runs it over TLS - the
// files as options, the key's password through $ZKLOCK_TLS_KEY_PASSWORD (what the CLI's help
// advises: a command line is readable by every user of the machine).
#pragma once

#include <string>
#include <vector>

#include "support/test_pki.h"

namespace zklock::testing {

// --tls-ca, --tls-cert and --tls-key of certificate `tls`.
inline std::vector<std::string> cli_tls_options(const ClientCertificate& tls) {
  return {"--tls-ca", tls.ca_file, "--tls-cert", tls.cert_file, "--tls-key", tls.key_file};
}

// "ZKLOCK_TLS_KEY_PASSWORD=..." when the key has a password; nothing otherwise.
inline std::vector<std::string> cli_tls_environment(const ClientCertificate& tls) {
  if (tls.key_password.empty()) return {};
  return {"ZKLOCK_TLS_KEY_PASSWORD=" + tls.key_password};
}

}  // namespace zklock::testing
