// Resolving the connect string's hosts into the numeric addresses the C client is given.
#include "client/host_resolver.h"

#include <gtest/gtest.h>

namespace zklock::detail {
namespace {

TEST(HostResolverTest, NumericHostsAreKeptAsTheyAre) {
  EXPECT_TRUE(all_numeric("127.0.0.1:2181,10.0.0.2:2182"));
  EXPECT_TRUE(all_numeric("::1:2181,[::1]:2182"));
  EXPECT_FALSE(all_numeric("127.0.0.1:2181,zk2:2181"));
  const ResolvedHosts r = resolve_hosts("127.0.0.1:2181,10.0.0.2:2182");
  EXPECT_EQ(r.addresses, "127.0.0.1:2181,10.0.0.2:2182");
  EXPECT_TRUE(r.unresolved.empty());
}

TEST(HostResolverTest, NamesBecomeAddressesAndDuplicatesGo) {
  const ResolvedHosts r = resolve_hosts("localhost:2181,127.0.0.1:2181");
  // localhost is 127.0.0.1 (and ::1 where the machine has IPv6): listed once each.
  EXPECT_EQ(r.addresses.find("127.0.0.1:2181"), r.addresses.rfind("127.0.0.1:2181")) << r.addresses;
  EXPECT_NE(r.addresses.find("127.0.0.1:2181"), std::string::npos) << r.addresses;
  EXPECT_TRUE(r.unresolved.empty());
}

TEST(HostResolverTest, Ipv6AddressesLoseTheirBrackets) {
  const ResolvedHosts r = resolve_hosts("[::1]:2181");
  if (r.addresses.empty()) GTEST_SKIP() << "no IPv6 on this machine (AI_ADDRCONFIG)";
  EXPECT_EQ(r.addresses, "::1:2181");
}

TEST(HostResolverTest, HostsThatDoNotResolveAreReportedAndTheRestKept) {
  const ResolvedHosts r = resolve_hosts("no-such-host.invalid:2181,127.0.0.1:2182");
  EXPECT_EQ(r.addresses, "127.0.0.1:2182");
  ASSERT_EQ(r.unresolved.size(), 1u);
  EXPECT_EQ(r.unresolved.front(), "no-such-host.invalid:2181");
}

}  // namespace
}  // namespace zklock::detail
