// The CLI trusts the --tls-ca file, and only it, to vouch for the servers.
//
// The 3.8 C client verifies a server's chain against its CA file *and* OpenSSL's default CA store
// (SSL_CTX_set_default_verify_paths at every connect), so a server with a certificate from any CA
// the system trusts would pass, and it checks no host name (docs/security.md). OpenSSL finds that
// store through $SSL_CERT_FILE and $SSL_CERT_DIR, read at each connect: pointed at the --tls-ca
// file and at a path that is no directory, the store holds that CA and nothing else. A library
// must not change its process's environment; the CLI is the process, so it does.
#pragma once

#include <string>
#include <vector>

#include "command.h"

namespace zklock::cli {

/// Effects: sets SSL_CERT_FILE to `ca_file` and SSL_CERT_DIR to /dev/null (not a directory: no
///   certificate is looked up in it). Must run while the process has one thread (setenv).
/// Returns: the two variables as the invoker set them, so that a command zklock runs inherits
///   them unchanged (Inheritance::environment).
std::vector<InheritedVariable> trust_only_the_tls_ca(const std::string& ca_file);

}  // namespace zklock::cli
