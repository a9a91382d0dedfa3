// tests/netfaults/client_config.cpp
#include "client_config.h"

#include "support/environment.h"

namespace zklock::testing::netfaults {

const char* to_string(ClientConfig config) {
  switch (config) {
    case ClientConfig::kPlain:
      return "plain";
    case ClientConfig::kChroot:
      return "chroot";
    case ClientConfig::kHostNames:
      return "hostnames";
    case ClientConfig::kAllListed:
      return "all-listed";
    case ClientConfig::kObserver:
      return "observer";
    case ClientConfig::kTls:
      return "tls";
  }
  return "?";
}

ClientTarget target_for(ClientConfig config, const NetnsEnsemble& ensemble, int node) {
  switch (config) {
    case ClientConfig::kPlain:
    case ClientConfig::kObserver:
      return {ensemble.connect_string(node), ""};
    case ClientConfig::kChroot:
      return {ensemble.connect_string(node) + kChroot, kChroot};
    case ClientConfig::kHostNames:
      return {ensemble.named_connect_string(node), ""};
    case ClientConfig::kAllListed: {
      std::string connect = ensemble.voters_connect_string();
      if (ensemble.is_observer(node)) connect += "," + ensemble.connect_string(node);
      return {connect, ""};
    }
    case ClientConfig::kTls:
      return {ensemble.tls_connect_string(node), "", tls_client()};
  }
  return {ensemble.connect_string(node), ""};
}

ClientCertificate tls_client() { return test_pki().client("holder"); }

bool tls_runs() {
  const std::string value = env_or("ZKLOCK_NETFAULTS_TLS");
  return !value.empty() && value != "0";
}

}  // namespace zklock::testing::netfaults
