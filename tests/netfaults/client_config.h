// tests/netfaults/client_config.h: the ways production clients connect, as a dimension of the
// kernel-fault scenarios (issue 20). Each contender of a scenario is attached to one server node,
// and its connect string says so in one of these configurations:
//  * plain       "ADDRESS:PORT" of that node (what the scenarios ran with first);
//  * chroot      "ADDRESS:PORT/zklock-nf": every path is under the chroot /zklock-nf, which must
//                exist beforehand (ensure_chroot: the C client prepends it to every path and does
//                not create it, and zklock creates only the missing parents of a lock path below
//                it); zklock still reads /zookeeper/config (the C client's getconfig ignores the
//                chroot), and until it has, it takes the route through an ensemble;
//  * hostnames   "NAME:PORT", NAME resolved by the client's namespace's own hosts file
//                (NetnsEnsemble::hosts_entries, NetNamespace::set_hosts): zklock resolves it
//                itself (src/client/host_resolver) and hands the C client numeric addresses,
//                again every minute and while it reconnects;
//  * all-listed  every voter's "ADDRESS:PORT", although the client's namespace routes reach only
//                its own node: a connect() to any other server fails at once (ENETUNREACH, no
//                route), and the C client moves on to the next address of its (shuffled) list -
//                so every answer still comes from the one node, as in the plain case, but through
//                the C client's multi-server logic (host rotation, the T/60 pause after "tried
//                all servers", zoo_set_servers with three hosts);
//  * observer    "ADDRESS:PORT" of an observer (plain otherwise);
//  * tls         "ADDRESS:SECUREPORT" of that node (the ensemble or server serves TLS:
//                ServerOptions::tls) with the "holder" client certificate of test_pki() (issue 25):
//                the C client's SSL connection, and zklock's forced reconnect (a shutdown of the
//                socket while it is silent, a connect still in SYN_SENT too) racing its SSL state.
//                Every TLS contender of a lock uses the same certificate: zklock's default node ACL
//                under a client certificate is x509 for its subject (world read, so that the
//                scenarios' plain monitor sessions still see the queues). Only built when the C
//                client has TLS (Session::tls_available()), and run in the TLS runs of the
//                scenarios alone (tls_runs()).
// Waiters use the configuration of their holder, pointed at their own node (the same chroot: the
// same lock).
#pragma once

#include <optional>
#include <string>

#include "netns_ensemble.h"
#include "support/test_pki.h"

namespace zklock::testing::netfaults {

enum class ClientConfig { kPlain, kChroot, kHostNames, kAllListed, kObserver, kTls };
const char* to_string(ClientConfig config);

// The chroot of the chroot configuration.
inline constexpr const char* kChroot = "/zklock-nf";

// Where one contender connects.
struct ClientTarget {
  std::string connect;  // connect string, with the chroot when there is one
  std::string chroot;   // "" or kChroot: the lock path on the server is chroot + path
  // kTls: the client certificate it connects with (TLS); none: plain TCP.
  std::optional<ClientCertificate> tls = std::nullopt;
  // The lock path `path` (as the client names it) as the server names it.
  std::string server_path(const std::string& path) const { return chroot + path; }
};

// The connect string of a client attached to `node` of `ensemble` in `config`. kAllListed lists
// every voter (and `node` too when it is an observer); kTls needs an ensemble that serves TLS.
ClientTarget target_for(ClientConfig config, const NetnsEnsemble& ensemble, int node);

// The certificate every TLS contender connects with: test_pki()'s "holder" (one identity for all
// contenders of a lock, see kTls).
ClientCertificate tls_client();

// ZKLOCK_NETFAULTS_TLS=1 (tests/netfaults/tests.cmake: the `_over_tls` ctest entries of a build
// whose C client has TLS): the scenarios run their TLS pairs only, on servers that serve TLS, and
// leave out what TLS does not need (the other configurations, their ensembles). Unset, "" or "0":
// the plain runs, as they always were.
bool tls_runs();

}  // namespace zklock::testing::netfaults
