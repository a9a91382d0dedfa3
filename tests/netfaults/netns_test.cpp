// tests/netfaults/netns_test.cpp: the kernel-fault support itself (tests/support/netns.h, the
// namespaced servers of zk_server.h / zk_ensemble.h, NetnsEnsemble): a cut really blocks TCP both
// ways and silently, a heal restores it, one peer can be cut alone, servers in namespaces serve
// clients in other namespaces, a quorum cut silences a follower while its clients still reach it,
// a namespace's hosts file resolves its names for the programs run inside it only, nothing of ours
// is left behind (hosts files included) (also after a throw, also of a dead earlier run), and a
// machine without namespaces skips these tests - or fails them when ZKLOCK_REQUIRE_NETNS=1.
#include "support/netns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "linked_netns.h"
#include "netns_ensemble.h"
#include "require_netns.h"
#include "support/four_letter_words.h"
#include "support/process.h"
#include "support/wait.h"
#include "support/zk_server.h"

namespace zklock::testing::netfaults {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

// ---- Plain TCP, to see what the kernel does (no ZooKeeper in between).

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

sockaddr_in address_of(const std::string& ip, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) throw std::runtime_error("bad ip");
  return addr;
}

// A listening socket on ip:<any port>, created by the calling thread (so in its namespace).
Fd listen_on(const std::string& ip, int& port) {
  Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr = address_of(ip, 0);
  socklen_t len = sizeof addr;
  if (s.fd < 0 || ::bind(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(s.fd, 16) != 0 ||
      ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("cannot listen on " + ip + ": " + std::strerror(errno));
  }
  port = ntohs(addr.sin_port);
  return s;
}

// A non-blocking TCP socket, created by the calling thread (so in its namespace).
Fd new_socket() { return Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)); }

// Starts a connect on `s`. Returns 0 (connected or in progress) or errno when it failed at once.
int start_connect(const Fd& s, const std::string& ip, int port) {
  sockaddr_in addr = address_of(ip, port);
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return 0;
  return errno == EINPROGRESS ? 0 : errno;
}

bool poll_for(const Fd& s, short events, milliseconds timeout) {
  pollfd p{s.fd, events, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0 && (p.revents & events) != 0;
}

int socket_error(const Fd& s) {
  int error = 0;
  socklen_t len = sizeof error;
  ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &error, &len);
  return error;
}

// True when a connect started on `s` completed without error within `timeout`.
bool connected_within(const Fd& s, milliseconds timeout) {
  return poll_for(s, POLLOUT, timeout) && socket_error(s) == 0;
}

Fd accept_within(const Fd& listener, milliseconds timeout) {
  if (!poll_for(listener, POLLIN, timeout)) return Fd();
  return Fd(::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
}

// The bytes that arrive on `s` within `timeout` ("" when none).
std::string receive_within(const Fd& s, milliseconds timeout) {
  if (!poll_for(s, POLLIN, timeout)) return {};
  char buffer[64];
  const ssize_t n = ::recv(s.fd, buffer, sizeof buffer, MSG_DONTWAIT);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

bool send_text(const Fd& s, const std::string& text) {
  return ::send(s.fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

// ---- What of ours exists (names carry our pid).

std::vector<std::string> names_with_prefix(const std::string& text, const std::string& prefix) {
  std::vector<std::string> found;
  for (std::size_t at = text.find(prefix); at != std::string::npos;
       at = text.find(prefix, at + 1)) {
    const std::size_t end = text.find_first_of(" :@\n", at);
    found.push_back(text.substr(at, end - at));
  }
  return found;
}

std::vector<std::string> our_objects(const std::string& prefix) {
  std::vector<std::string> found;
  for (const auto& command : std::vector<std::vector<std::string>>{
           {"ip", "netns", "list"}, {"ip", "-o", "link", "show"}, {"tc", "qdisc", "show"}}) {
    for (auto& name : names_with_prefix(run_net_tool(command).output, prefix)) {
      found.push_back(command[1] + ": " + name);
    }
  }
  // Hosts files of namespaces (NetNamespace::set_hosts).
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/etc/netns", ignored)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) found.push_back("/etc/netns: " + name);
  }
  return found;
}

// What `argv` prints (stdout and stderr), and its wait status.
std::pair<int, std::string> output_of(const std::vector<std::string>& argv) {
  const std::string log = "/tmp/zklock-netns-test-" + std::to_string(::getpid()) + ".out";
  SpawnOptions options;
  options.log_path = log;
  ChildProcess child(argv, options);
  const auto status = child.wait_exit(30s);
  std::string text = tail_file(log, 1 << 16);
  ::unlink(log.c_str());
  return {status ? *status : -1, text};
}

std::string self_exe() {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

// ---------------------------------------------------------------------------------------------

TEST(NetnsSupport, CutBlocksTcpBothWaysSilentlyAndHealRestoresIt) {
  ZKLOCK_REQUIRE_NETNS();
  NetNamespace ns;
  VethLink link(nullptr, ns);
  const std::string host_ip = link.left().address;
  const std::string ns_ip = link.right().address;

  int host_port = 0, ns_port = 0;
  Fd host_listener = listen_on(host_ip, host_port);
  Fd ns_listener, from_ns;
  ns.run_inside([&] {
    ns_listener = listen_on(ns_ip, ns_port);
    from_ns = new_socket();
  });

  // Before the cut: both directions connect, and bytes flow.
  Fd to_ns = new_socket();
  ASSERT_EQ(start_connect(to_ns, ns_ip, ns_port), 0);
  ASSERT_TRUE(connected_within(to_ns, 5s)) << "host -> namespace does not connect before the cut";
  Fd to_ns_peer = accept_within(ns_listener, 5s);
  ASSERT_GE(to_ns_peer.fd, 0);
  ASSERT_EQ(start_connect(from_ns, host_ip, host_port), 0);
  ASSERT_TRUE(connected_within(from_ns, 5s)) << "namespace -> host does not connect before the cut";
  Fd from_ns_peer = accept_within(host_listener, 5s);
  ASSERT_GE(from_ns_peer.fd, 0);
  ASSERT_TRUE(send_text(to_ns, "a"));
  EXPECT_EQ(receive_within(to_ns_peer, 5s), "a");

  link.cut();
  EXPECT_TRUE(link.is_cut());
  // New connections, both ways: no answer, and no error either (a SYN into silence).
  Fd to_ns_late = new_socket();
  Fd from_ns_late;
  ns.run_inside([&] { from_ns_late = new_socket(); });
  ASSERT_EQ(start_connect(to_ns_late, ns_ip, ns_port), 0);
  ASSERT_EQ(start_connect(from_ns_late, host_ip, host_port), 0);
  EXPECT_FALSE(poll_for(to_ns_late, POLLOUT, 1500ms))
      << "host -> namespace connected through a cut";
  EXPECT_FALSE(poll_for(from_ns_late, POLLOUT, 100ms))
      << "namespace -> host connected through a cut";
  EXPECT_EQ(socket_error(to_ns_late), 0) << "a cut must be silent, not refused";
  EXPECT_EQ(socket_error(from_ns_late), 0);
  // Established connections, both ways: the sender is told the bytes went out; they do not arrive.
  EXPECT_TRUE(send_text(to_ns, "b"));
  EXPECT_TRUE(send_text(from_ns, "c"));
  EXPECT_EQ(receive_within(to_ns_peer, 1500ms), "") << "bytes crossed a cut (host -> namespace)";
  EXPECT_EQ(receive_within(from_ns_peer, 100ms), "") << "bytes crossed a cut (namespace -> host)";
  EXPECT_EQ(socket_error(to_ns), 0);
  EXPECT_EQ(socket_error(from_ns), 0);

  link.heal();
  EXPECT_FALSE(link.is_cut());
  // TCP retransmits what it kept (its backoff decides when), the SYNs get through, and new
  // connections work at once.
  EXPECT_EQ(receive_within(to_ns_peer, 10s), "b") << "host -> namespace bytes lost after the heal";
  EXPECT_EQ(receive_within(from_ns_peer, 10s), "c")
      << "namespace -> host bytes lost after the heal";
  EXPECT_TRUE(connected_within(to_ns_late, 10s)) << "the connect pending across the heal failed";
  EXPECT_TRUE(connected_within(from_ns_late, 10s));
  Fd fresh = new_socket();
  ASSERT_EQ(start_connect(fresh, ns_ip, ns_port), 0);
  EXPECT_TRUE(connected_within(fresh, 2s)) << "a new connection after the heal failed";
}

TEST(NetnsSupport, BlackholeRouteCutsOnePeerOnlyAndLoudly) {
  ZKLOCK_REQUIRE_NETNS();
  IpForwarding forwarding;
  EXPECT_EQ(ip_forward_value(), '1');
  LinkedNamespace a, b;
  a.reach({"default"});
  b.reach({"default"});
  int b_port = 0, host_port = 0;
  Fd b_listener;
  b.netns().run_inside([&] { b_listener = listen_on(b.address(), b_port); });
  Fd host_listener = listen_on(a.link().left().address, host_port);

  // Through the host, a reaches b.
  Fd first;
  a.netns().run_inside([&] { first = new_socket(); });
  ASSERT_EQ(start_connect(first, b.address(), b_port), 0);
  ASSERT_TRUE(connected_within(first, 5s)) << "namespaces do not reach each other via the host";

  {
    auto cut = Route::blackhole(a.netns(), b.address() + "/32");
    Fd to_b, to_host;
    a.netns().run_inside([&] {
      to_b = new_socket();
      to_host = new_socket();
    });
    // Cut from b, and told so at once: a blackhole route is not silent for the local sender.
    const int error = start_connect(to_b, b.address(), b_port);
    EXPECT_NE(error, 0) << "a connect through a blackhole route did not fail at once";
    // Everything else still works.
    ASSERT_EQ(start_connect(to_host, a.link().left().address, host_port), 0);
    EXPECT_TRUE(connected_within(to_host, 5s)) << "a blackhole route for b cut a from the host";
  }
  Fd again;
  a.netns().run_inside([&] { again = new_socket(); });
  ASSERT_EQ(start_connect(again, b.address(), b_port), 0);
  EXPECT_TRUE(connected_within(again, 5s)) << "b unreachable after the blackhole route was removed";
}

TEST(NetnsSupport, RemovesEverythingItCreatedAlsoWhenATestThrows) {
  ZKLOCK_REQUIRE_NETNS();
  const std::string prefix = netns_name_prefix();
  // What ip_forward was before any test process touched it: knowable only when no other test
  // process uses forwarding right now (ctest -j runs several).
  const char forwarding_before = ip_forward_value();
  const bool others_forwarding = !ip_forward_users().empty();
  const int self = static_cast<int>(::getpid());
  std::vector<std::string> created;
  auto build_everything = [&] {
    IpForwarding forwarding;
    NetNamespace left, right;
    VethLink host_link(nullptr, left);
    VethLink between(&left, right);
    auto route = Route::via(right, "default", between.left().address);
    auto blackhole = Route::blackhole(left, "10.213.255.254/32");
    left.set_hosts({{"10.213.255.253", prefix + "-probe"}});
    host_link.cut();
    between.cut();
    created = {left.name(), right.name(), host_link.left().interface};
    EXPECT_EQ(ip_forward_value(), '1');
    const auto users = ip_forward_users();
    EXPECT_NE(std::find(users.begin(), users.end(), self), users.end());
    EXPECT_FALSE(our_objects(prefix).empty());
    throw std::runtime_error("the test failed here");
  };
  EXPECT_THROW(build_everything(), std::runtime_error);
  ASSERT_EQ(created.size(), 3U);
  // Gone at once: namespaces by name, the host end of the link (and with it the pair and its
  // qdisc) deleted explicitly.
  EXPECT_EQ(our_objects(prefix), std::vector<std::string>{});
  // We no longer hold ip_forward; it is back to what it was unless another test process uses it
  // (or used it when we began: then the value it restores is not ours to know).
  const auto users = ip_forward_users();
  EXPECT_EQ(std::find(users.begin(), users.end(), self), users.end());
  if (!users.empty()) {
    EXPECT_EQ(ip_forward_value(), '1');
  } else if (!others_forwarding) {
    EXPECT_EQ(ip_forward_value(), forwarding_before);
  }
}

TEST(NetnsSupport, SweepsTheLeftoversOfADeadRun) {
  ZKLOCK_REQUIRE_NETNS();
  // A pid that is certainly gone: a child that has exited and been reaped.
  pid_t dead = -1;
  {
    ChildProcess child({"true"});
    ASSERT_TRUE(child.wait_exit(10s).has_value());
    dead = child.pid();
  }
  ASSERT_FALSE(pid_alive(dead));
  const std::string prefix = "zkl" + std::to_string(dead);
  // What a run killed by a timeout leaves: a namespace and a host interface with its name.
  run_net_tool_or_throw({"ip", "netns", "add", prefix + "n0"});
  run_net_tool_or_throw(
      {"ip", "link", "add", prefix + "a0", "type", "veth", "peer", "name", prefix + "b0"});
  std::filesystem::create_directories("/etc/netns/" + prefix + "n0");
  std::ofstream("/etc/netns/" + prefix + "n0/hosts") << "10.213.255.253 probe\n";
  const auto left = our_objects(prefix);
  ASSERT_NE(std::find(left.begin(), left.end(), "/etc/netns: " + prefix + "n0"), left.end());

  // Gone after our sweep (another test process sweeping at the same time may get there first).
  sweep_netns_leftovers();
  EXPECT_EQ(our_objects(prefix), std::vector<std::string>{});
  // Our own live objects are never swept.
  NetNamespace mine;
  sweep_netns_leftovers();
  EXPECT_FALSE(our_objects(netns_name_prefix()).empty()) << "the sweep removed a live namespace";
}

TEST(NetnsSupport, AHostsFileNamesAddressesInsideItsNamespaceOnly) {
  ZKLOCK_REQUIRE_NETNS();
  const std::string name = netns_name_prefix() + "-probe";
  std::string path;
  {
    NetNamespace ns;
    ns.set_hosts({{"10.213.255.253", name}});
    path = ns.hosts_path();
    const auto [status, inside] = output_of(ns.command({"getent", "hosts", name}));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << inside;
    EXPECT_NE(inside.find("10.213.255.253"), std::string::npos) << inside;
    const auto [host_status, outside] = output_of({"getent", "hosts", name});
    EXPECT_FALSE(WIFEXITED(host_status) && WEXITSTATUS(host_status) == 0)
        << "the host resolves a namespace's name: " << outside;
    // Replaced, not appended to.
    ns.set_hosts({{"10.213.255.252", name}});
    const auto [again, replaced] = output_of(ns.command({"getent", "hosts", name}));
    EXPECT_NE(replaced.find("10.213.255.252"), std::string::npos) << replaced;
    EXPECT_EQ(replaced.find("10.213.255.253"), std::string::npos) << replaced;
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "the namespace's hosts file outlived it";
}

TEST(NetnsSupport, SkipsWithTheReasonOrFailsWhenNamespacesAreRequired) {
  // Runs one test of this binary as a child process on a machine that pretends to have no
  // namespaces (the same code path as a real refusal), first as on a developer machine, then as
  // in CI.
  const std::string exe = self_exe();
  ASSERT_FALSE(exe.empty());
  const std::string reason = "pretend-no-namespaces-for-this-test";
  auto run = [&](const std::string& required, std::string& output) {
    const std::string log = "/tmp/zklock-netns-skip-" + std::to_string(::getpid()) + ".log";
    ::unlink(log.c_str());
    SpawnOptions options;
    options.log_path = log;
    options.extra_env = {"ZKLOCK_NETNS_PRETEND_UNAVAILABLE=" + reason,
                         "ZKLOCK_REQUIRE_NETNS=" + required};
    ChildProcess child(
        {exe, "--gtest_filter=NetnsSupport.CutBlocksTcpBothWaysSilentlyAndHealRestoresIt"},
        options);
    const auto status = child.wait_exit(60s);
    output = tail_file(log, 20000);
    ::unlink(log.c_str());
    return status;
  };
  std::string output;
  auto status = run("0", output);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << output;
  EXPECT_NE(output.find("[  SKIPPED ]"), std::string::npos) << output;
  EXPECT_NE(output.find(reason), std::string::npos) << output;

  status = run("1", output);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1) << output;
  EXPECT_NE(output.find("[  FAILED  ]"), std::string::npos) << output;
  EXPECT_NE(output.find("ZKLOCK_REQUIRE_NETNS=1"), std::string::npos) << output;
  EXPECT_NE(output.find(reason), std::string::npos) << output;
}

TEST(NetnsSupport, StandaloneServerInANamespaceServesOtherNamespacesUntilItsLinkIsCut) {
  ZKLOCK_REQUIRE_NETNS();
  IpForwarding forwarding;
  LinkedNamespace server_ns, client_ns;
  server_ns.reach({"default"});
  client_ns.reach({server_ns.address() + "/32"});
  auto server = ZkServer::start_in_netns(server_ns.netns(), server_ns.address());
  EXPECT_EQ(server->connect_string(), server_ns.address() + ":" + std::to_string(server->port()));
  EXPECT_EQ(server->four_letter("ruok"), "imok") << "from the host";
  auto ruok_from_client = [&] {
    std::string reply;
    client_ns.netns().run_inside(
        [&] { reply = four_letter_word(server_ns.address(), server->port(), "ruok", 1000ms); });
    return reply;
  };
  EXPECT_EQ(ruok_from_client(), "imok") << "from another namespace, through the host";
  // The server listens on its namespace's address only: not on the host's loopback.
  EXPECT_EQ(four_letter_word(server->port(), "ruok", 500ms), "");

  server_ns.link().cut();
  EXPECT_EQ(ruok_from_client(), "") << "answered through a cut link";
  server_ns.link().heal();
  EXPECT_TRUE(wait_until([&] { return ruok_from_client() == "imok"; }, 10s));
}

TEST(NetnsSupport, QuorumCutSilencesAFollowerWhileItsClientsStillReachIt) {
  ZKLOCK_REQUIRE_NETNS();
  // Fast timing (a follower gives up after syncLimit x tickTime = 1 s), to test the topology.
  NetnsEnsemble::Options options;
  options.server = {200, 1000, 60000, false, {}};
  options.sync_limit = 5;
  auto ensemble = NetnsEnsemble::start(options);
  const int leader = ensemble->leader();
  ASSERT_GE(leader, 0);
  const int follower = (leader + 1) % ensemble->size();
  ASSERT_TRUE(ensemble->wait_rejoined(follower, 30s)) << "not every follower synced at start";

  ensemble->cut_quorum(follower);
  // The follower drops out of the quorum (it stops serving) while its client address still
  // answers; the other two keep the quorum and the leader.
  EXPECT_TRUE(wait_until(
      [&] {
        const std::string srvr = ensemble->servers().four_letter(follower, "srvr", 1000ms);
        return srvr.find("not currently serving") != std::string::npos;
      },
      20s))
      << "the follower kept serving, or its client address became unreachable: "
      << ensemble->servers().four_letter(follower, "srvr", 1000ms);
  EXPECT_EQ(ensemble->servers().mode(leader), "leader");
  ensemble->heal_quorum(follower);
  EXPECT_TRUE(ensemble->wait_rejoined(follower, 60s))
      << "the follower did not rejoin after the heal";
  EXPECT_EQ(ensemble->leader(), leader);
}

}  // namespace
}  // namespace zklock::testing::netfaults
