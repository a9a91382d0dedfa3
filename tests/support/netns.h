// tests/support/netns.h: network faults made by the kernel - network namespaces, veth links
// between them, silent two-way cuts (tc's blackhole qdisc) and routes - for tests that need real
// TCP behaviour under partitions (docs/reliability.md, "Faults made by the kernel").
//
// Why not a proxy: a proxy that drops bytes keeps both sockets open and loses bytes inside a TCP
// stream, which no network does. Behind a blackholed link the kernel's TCP sees silence, keeps
// its byte stream and backs off its retransmissions and SYNs, exactly as on a real network.
//
// Guarantees about what is created:
//  * Every object is RAII and removes what it created, by name, in its destructor - also when the
//    test fails or throws. Removal errors are ignored (the object may already be gone).
//  * A namespace's own hosts file (NetNamespace::set_hosts) is /etc/netns/<name>/hosts, which
//    `ip netns exec` bind-mounts over /etc/hosts for the programs it runs; the destructor removes
//    /etc/netns/<name>, and the sweep removes those of processes that are gone.
//  * Names are "zkl<pid><kind><n>" (at most 15 characters, the kernel's limit for interface
//    names): two test processes never collide. The first object a process creates (or the first
//    netns_unavailable_reason()) sweeps the leftovers of processes that are gone (a test process
//    killed by a timeout runs no destructor): their namespaces, host interfaces and ip_forward.
//  * Addresses come from 10.213.0.0/16 and nowhere else: each process holds one /22 block (an
//    flock under /run/zklock-netns for its lifetime, the search starting at pid % 64), each link
//    one /30 of it (.1 its left end, .2 its right end). Only namespaces and interfaces this code
//    created are ever touched; routes are only added inside our namespaces. What stays is the
//    directory /run/zklock-netns with its (unlocked, empty) lock files.
//
// Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN), iproute2 (`ip`, `tc`) and a kernel with network
// namespaces, veth and the blackhole qdisc; netns_unavailable_reason() says what is missing.
// netem is not needed (this kernel has none): no delays, no percentage loss - cuts only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zklock::testing {

// Why network namespaces cannot be used here, or std::nullopt when they can: not root, `ip` or
// `tc` not found, or the kernel refused a probe namespace, veth pair or blackhole qdisc (the
// tool's own message is quoted). Probed once per process; thread-safe.
// ZKLOCK_NETNS_PRETEND_UNAVAILABLE=<reason> makes it return <reason> (to test the skip itself).
std::optional<std::string> netns_unavailable_reason();

// True when the environment says ZKLOCK_REQUIRE_NETNS=1 (CI sets it): a test that cannot make
// namespaces must then fail with the reason instead of skipping.
bool netns_required();

// "zkl<pid>": the prefix of every namespace and interface name this process creates.
std::string netns_name_prefix();

// Removes the namespaces, host interfaces and /etc/netns/ directories (hosts files) named
// "zkl<pid>..." whose process is gone, and gives back ip_forward held by processes that are gone
// (IpForwarding). Returns the names removed.
// Runs by itself before this process creates its first object; public for tests.
std::vector<std::string> sweep_netns_leftovers();

// The outcome of one `ip` or `tc` command.
struct NetToolResult {
  int status = -1;     // wait status (see <sys/wait.h>)
  std::string output;  // stdout and stderr together
  bool ok() const;     // exited with 0
};

// Runs `argv` (argv[0] "ip", "tc" or "nsenter", looked up in PATH, /usr/sbin and /sbin) and
// waits for it, at most `limit`. Throws std::runtime_error when the tool is missing or hangs.
NetToolResult run_net_tool(std::vector<std::string> argv,
                           std::chrono::seconds limit = std::chrono::seconds(30));
// The same, and throws std::runtime_error quoting the command and its output when it fails.
std::string run_net_tool_or_throw(std::vector<std::string> argv);

// One network namespace with `lo` up. Not copyable or movable.
class NetNamespace {
 public:
  // Creates "zkl<pid>n<k>". Throws std::runtime_error (with `ip`'s message) on failure.
  NetNamespace();
  // Deletes it by name. Processes still inside keep it alive, nameless, until they exit.
  ~NetNamespace();
  NetNamespace(const NetNamespace&) = delete;
  NetNamespace& operator=(const NetNamespace&) = delete;

  const std::string& name() const { return name_; }

  // `argv` run inside this namespace: {"nsenter", "--net=/run/netns/<name>", "--", argv...}, or
  // after set_hosts() {"ip", "netns", "exec", name, argv...} (which mounts the hosts file, in a
  // mount namespace of the program's own). Both exec the program itself, so a ChildProcess of
  // this command has the program's pid.
  std::vector<std::string> command(const std::vector<std::string>& argv) const;

  // Runs `fn` on a thread of its own that has entered this namespace: sockets `fn` opens belong
  // to the namespace, also when other threads use them afterwards. Rethrows what `fn` throws.
  // (run_inside does not see the namespace's hosts file: only command() after set_hosts does.)
  void run_inside(const std::function<void()>& fn) const;

  // Writes /etc/netns/<name>/hosts: "localhost" and each (address, host name) of `entries`, so
  // that programs started with command() resolve those names (getaddrinfo reads /etc/hosts, over
  // which `ip netns exec` bind-mounts this file). Replaces an earlier set_hosts(). Removed by the
  // destructor. Throws std::runtime_error when the file cannot be written.
  void set_hosts(const std::vector<std::pair<std::string, std::string>>& entries);
  // "/etc/netns/<name>/hosts" (it exists only after set_hosts()).
  std::string hosts_path() const;

 private:
  std::string name_;
  bool hosts_written_ = false;
};

// One end of a link.
struct LinkEnd {
  const NetNamespace* netns = nullptr;  // nullptr: the host (the test process's own namespace)
  std::string interface;
  std::string address;  // IPv4, in the link's /30
};

// A veth pair between `left` (nullptr: the host) and `right`, both ends up and addressed (left
// .1, right .2 of a /30 of this process's block). Not copyable or movable. Both namespaces must
// outlive the link.
class VethLink {
 public:
  // Throws std::runtime_error on failure (nothing is left behind).
  VethLink(const NetNamespace* left, const NetNamespace& right);
  ~VethLink();  // deletes the pair (deleting one end deletes both) and frees the /30
  VethLink(const VethLink&) = delete;
  VethLink& operator=(const VethLink&) = delete;

  const LinkEnd& left() const { return left_; }
  const LinkEnd& right() const { return right_; }

  // Silent two-way partition: a blackhole root qdisc on both ends. Everything either end sends
  // (data, ACKs, SYNs, ARP) is dropped while the sender is told it went out: no error, no RST,
  // TCP keeps retransmitting with its backoff. Idempotent.
  void cut();
  // Removes both qdiscs: packets flow again (TCP resumes at its next retransmission). Idempotent.
  void heal();
  bool is_cut() const { return cut_; }

 private:
  LinkEnd left_;
  LinkEnd right_;
  int slot_ = -1;
  bool cut_ = false;
};

// A route inside one of our namespaces, removed by the destructor. Not copyable or movable.
class Route {
 public:
  // `destination` ("10.213.4.6/32", "default") via `gateway`, an address on a link of `netns`.
  static std::unique_ptr<Route> via(const NetNamespace& netns, std::string destination,
                                    std::string gateway);
  // `ip route add blackhole destination`: cuts one peer only. Unlike a blackhole qdisc this is
  // not silent for local senders: their packets to `destination` fail at once (EINVAL), so a
  // process in `netns` notices faster than on a real partition.
  static std::unique_ptr<Route> blackhole(const NetNamespace& netns, std::string destination);
  ~Route();
  Route(const Route&) = delete;
  Route& operator=(const Route&) = delete;

  const std::string& destination() const { return destination_; }

 private:
  Route(const NetNamespace& netns, std::string destination, std::vector<std::string> spec);
  std::string netns_;
  std::string destination_;
  std::vector<std::string> spec_;  // what follows "ip -n NS route add"
};

// IPv4 forwarding in the host namespace, on while any IpForwarding of any test process lives, so
// that namespaces linked to the host reach each other through it. The value found before the
// first user is restored when the last one is gone; the users (pids) and that value are kept in
// /run/zklock-netns/ip_forward.state under an flock, so concurrent test processes share it and a
// process that died while holding it is dropped by the next sweep. Not copyable or movable.
class IpForwarding {
 public:
  IpForwarding();  // throws std::runtime_error when forwarding cannot be switched on
  ~IpForwarding();
  IpForwarding(const IpForwarding&) = delete;
  IpForwarding& operator=(const IpForwarding&) = delete;
};

// The current value of /proc/sys/net/ipv4/ip_forward ('0' or '1'; '?' when unreadable).
char ip_forward_value();

// The pids currently registered as users of ip_forward (IpForwarding), from the state file.
std::vector<int> ip_forward_users();

}  // namespace zklock::testing
