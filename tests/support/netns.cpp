// tests/support/netns.cpp: see netns.h for what is created and what is guaranteed about removing
// it.
#include "support/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bitset>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "support/files.h"
#include "support/netns_state.h"
#include "support/process.h"
#include "support/zk_server.h"

namespace zklock::testing {
namespace {

constexpr const char* kEtcNetns = "/etc/netns";  // `ip netns exec` mounts /etc/netns/<ns>/* on /etc
constexpr int kBlocks = 64;                      // /22 blocks in 10.213.0.0/16
constexpr int kSlotsPerBlock = 256;              // /30 links in a /22
constexpr std::size_t kMaxNameLength = 15;       // IFNAMSIZ - 1

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words) {
    if (!text.empty()) text += ' ';
    text += w;
  }
  return text;
}

// The tool's absolute path: PATH first, then the sbin directories a non-login root shell may lack.
std::optional<std::string> find_tool(const std::string& name) {
  const char* path_env = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): no setenv()
  std::string dirs = path_env != nullptr ? path_env : "";
  dirs += ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::istringstream list(dirs);
  for (std::string dir; std::getline(list, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Names and addresses

std::atomic<int> g_next_object{0};

std::string new_name(char kind, int number) {
  std::string name = netns_name_prefix() + kind + std::to_string(number);
  if (name.size() > kMaxNameLength) {
    throw std::runtime_error("netns: too many objects for 15-character names (" + name + ")");
  }
  return name;
}

// This process's /22 block and the /30 slots of it in use.
class AddressBlock {
 public:
  static AddressBlock& instance() {
    static AddressBlock block;
    return block;
  }

  int take_slot() {
    std::lock_guard lock(mutex_);
    for (int i = 0; i < kSlotsPerBlock; ++i) {
      if (!used_[static_cast<std::size_t>(i)]) {
        used_[static_cast<std::size_t>(i)] = true;
        return i;
      }
    }
    throw std::runtime_error("netns: all 256 links of this process's address block are in use");
  }
  void give_back(int slot) {
    std::lock_guard lock(mutex_);
    used_[static_cast<std::size_t>(slot)] = false;
  }
  // End 1 (left) or 2 (right) of `slot`.
  std::string address(int slot, int end) const {
    return "10.213." + std::to_string(block_ * 4 + slot / 64) + "." +
           std::to_string((slot % 64) * 4 + end);
  }

 private:
  AddressBlock() {
    const std::string dir = state_dir();
    for (int i = 0; i < kBlocks; ++i) {
      const int candidate = (static_cast<int>(::getpid()) + i) % kBlocks;
      FileLock lock(dir + "/block-" + std::to_string(candidate) + ".lock", /*wait=*/false);
      if (lock.held()) {
        lock.leak();  // held for the life of the process: the kernel drops it when we die
        block_ = candidate;
        return;
      }
    }
    throw std::runtime_error(
        "netns: all 64 address blocks of 10.213.0.0/16 are held by other "
        "test processes (" +
        dir + "/block-*.lock)");
  }

  int block_ = -1;
  std::mutex mutex_;
  std::bitset<kSlotsPerBlock> used_;
};

// ---------------------------------------------------------------------------------------------
// Sweep

// pid in "zkl<pid><kind><n>", or 0 when `name` is not one of ours.
int owner_pid(const std::string& name) {
  static const std::regex pattern("^zkl([0-9]{1,7})[a-z][0-9]+$");
  std::smatch match;
  if (!std::regex_match(name, match, pattern)) return 0;
  return std::atoi(match[1].str().c_str());
}

std::vector<std::string> our_namespaces_and_host_links() {
  std::vector<std::string> names;
  std::istringstream netns(run_net_tool({"ip", "netns", "list"}).output);
  for (std::string line; std::getline(netns, line);) {
    std::istringstream words(line);
    std::string name;
    if (words >> name && owner_pid(name) != 0) names.push_back(name);
  }
  // "7: zkl123a4@if6: <BROADCAST,...": the name is the second field, up to '@' or ':'.
  std::istringstream links(run_net_tool({"ip", "-o", "link", "show"}).output);
  for (std::string line; std::getline(links, line);) {
    std::istringstream words(line);
    std::string index, name;
    if (!(words >> index >> name)) continue;
    name = name.substr(0, name.find_first_of("@:"));
    if (owner_pid(name) != 0) names.push_back(name);
  }
  return names;
}

// Removes leftovers; `including_self`: names with our own pid too (a dead process with the same
// pid left them: only valid before this process has created anything).
std::vector<std::string> sweep(bool including_self) {
  std::vector<std::string> removed;
  const int self = static_cast<int>(::getpid());
  for (const std::string& name : our_namespaces_and_host_links()) {
    const int pid = owner_pid(name);
    if (pid == self ? !including_self : pid_alive(pid)) continue;
    // Interfaces first: a namespace is named "zkl<pid>n<k>", links "...a<k>" (host end).
    const std::string kind(1, name[name.find_first_not_of("0123456789", 3)]);
    const NetToolResult r = kind == "n" ? run_net_tool({"ip", "netns", "del", name})
                                        : run_net_tool({"ip", "link", "del", name});
    if (r.ok()) removed.push_back(name);
  }
  // Hosts files of namespaces (NetNamespace::set_hosts): /etc/netns/zkl<pid>n<k>.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(kEtcNetns, ignored)) {
    const std::string name = entry.path().filename().string();
    const int pid = owner_pid(name);
    if (pid == 0 || (pid == self ? !including_self : pid_alive(pid))) continue;
    if (std::filesystem::remove_all(entry.path(), ignored) > 0)
      removed.push_back(entry.path().string());
  }
  release_ip_forwarding_of_gone_users(including_self ? self : 0);
  return removed;
}

std::string describe(const NetToolResult& r) {
  std::string output = r.output;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return describe_wait_status(r.status) + (output.empty() ? "" : ": " + output);
}

// `argv` run in namespace `name`. Not `ip -n` / `tc -n`: iproute2 switches namespace the way
// `ip netns exec` does, with a mount namespace of its own (see NetNamespace::command), whose
// teardown at exit queues for an expedited RCU grace period - with dozens of contenders ending at
// once, a heal's `tc` waited there for seconds.
std::vector<std::string> in_netns(const std::string& name, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"nsenter", "--net=/run/netns/" + name, "--"});
  return argv;
}
std::vector<std::string> in_netns(const NetNamespace* netns, std::vector<std::string> argv) {
  return netns != nullptr ? in_netns(netns->name(), std::move(argv)) : argv;
}

}  // namespace

void sweep_once() {
  static std::once_flag once;
  std::call_once(once, [] { sweep(/*including_self=*/true); });
}

// ---------------------------------------------------------------------------------------------

bool NetToolResult::ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

NetToolResult run_net_tool(std::vector<std::string> argv, std::chrono::seconds limit) {
  if (argv.empty()) throw std::invalid_argument("run_net_tool: empty argv");
  const auto tool = find_tool(argv[0]);
  if (!tool) throw std::runtime_error("`" + argv[0] + "` not found (install iproute2, util-linux)");
  argv[0] = *tool;
  std::string output_path = "/tmp/zklock-nettool-XXXXXX";
  const int fd = ::mkstemp(output_path.data());
  if (fd < 0) throw std::runtime_error(errno_text("mkstemp " + output_path, errno));
  // posix_spawn, on the calling thread, rather than a ChildProcess: a cut or a heal must keep its
  // time, and ChildProcess forks every child on one spawner thread, one after another - a copy of
  // the whole test process each, slow for a big (sanitized) one with dozens of contenders
  // starting meanwhile. posix_spawn (clone with CLONE_VFORK) copies nothing. The tools exit by
  // themselves within milliseconds; the timeout below kills one that does not.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fd, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fd);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(fd);
  if (spawned != 0) {
    ::unlink(output_path.c_str());
    throw std::runtime_error(errno_text("cannot run `" + join(argv) + "`", spawned));
  }
  NetToolResult result;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      result.status = status;
      break;
    }
    if (done < 0 && errno != EINTR) {
      ::unlink(output_path.c_str());
      throw std::runtime_error(errno_text("waitpid for `" + join(argv) + "`", errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      ::unlink(output_path.c_str());
      throw std::runtime_error("`" + join(argv) + "` did not finish within " +
                               std::to_string(limit.count()) + " s");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  result.output = read_file(output_path);
  ::unlink(output_path.c_str());
  return result;
}

std::string run_net_tool_or_throw(std::vector<std::string> argv) {
  const NetToolResult r = run_net_tool(argv);
  if (!r.ok()) throw std::runtime_error("`" + join(argv) + "` failed: " + describe(r));
  return r.output;
}

std::string netns_name_prefix() { return "zkl" + std::to_string(::getpid()); }

bool netns_required() {
  const char* value = std::getenv("ZKLOCK_REQUIRE_NETNS");  // NOLINT(concurrency-mt-unsafe)
  return value != nullptr && std::string(value) == "1";
}

std::optional<std::string> netns_unavailable_reason() {
  const char* pretend = std::getenv("ZKLOCK_NETNS_PRETEND_UNAVAILABLE");  // NOLINT
  if (pretend != nullptr && *pretend != '\0') return std::string(pretend);
  static std::once_flag once;
  static std::optional<std::string> reason;
  std::call_once(once, [] {
    if (::geteuid() != 0) {
      reason = "network namespaces need root (CAP_NET_ADMIN); this process runs as uid " +
               std::to_string(::geteuid());
      return;
    }
    for (const char* tool : {"ip", "tc"}) {
      if (!find_tool(tool)) {
        reason = std::string("`") + tool + "` not found (install iproute2)";
        return;
      }
    }
    try {
      // What the tests do, once: a namespace, a veth pair into it, a cut and a heal.
      NetNamespace probe;
      VethLink link(nullptr, probe);
      link.cut();
      link.heal();
    } catch (const std::exception& e) {
      reason = std::string("cannot make network namespaces here: ") + e.what();
    }
  });
  return reason;
}

std::vector<std::string> sweep_netns_leftovers() {
  sweep_once();
  return sweep(/*including_self=*/false);
}

// ---------------------------------------------------------------------------------------------
// NetNamespace

NetNamespace::NetNamespace() {
  sweep_once();
  name_ = new_name('n', g_next_object++);
  run_net_tool_or_throw({"ip", "netns", "add", name_});
  try {
    run_net_tool_or_throw(in_netns(name_, {"ip", "link", "set", "lo", "up"}));
  } catch (...) {
    run_net_tool({"ip", "netns", "del", name_});
    throw;
  }
}

NetNamespace::~NetNamespace() {
  try {
    run_net_tool({"ip", "netns", "del", name_});
  } catch (...) {
  }
  if (hosts_written_) {
    std::error_code ignored;
    std::filesystem::remove_all(std::string(kEtcNetns) + "/" + name_, ignored);
  }
}

std::string NetNamespace::hosts_path() const {
  return std::string(kEtcNetns) + "/" + name_ + "/hosts";
}

void NetNamespace::set_hosts(const std::vector<std::pair<std::string, std::string>>& entries) {
  const std::string dir = std::string(kEtcNetns) + "/" + name_;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw std::runtime_error("netns: cannot create " + dir + ": " + error.message());
  hosts_written_ = true;  // from here on the destructor removes the directory
  // Written aside and renamed: a program starting meanwhile sees the old file or the new one.
  const std::string path = hosts_path();
  {
    std::ofstream out(path + ".new", std::ios::trunc);
    out << "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
    for (const auto& [address, host] : entries) out << address << "\t" << host << "\n";
    out.close();
    if (!out) throw std::runtime_error("netns: cannot write " + path + ".new");
  }
  std::filesystem::rename(path + ".new", path, error);
  if (error) throw std::runtime_error("netns: cannot rename to " + path + ": " + error.message());
}

std::vector<std::string> NetNamespace::command(const std::vector<std::string>& argv) const {
  // `ip netns exec` gives each program a mount namespace of its own (to mount the hosts file and
  // /sys), and the kernel tears it down at the program's exit with an expedited RCU grace period;
  // those are serialized. Eighty contenders ending at once (production_blip_test's rounds) queued
  // them for up to 30 s, and a heal's `tc`, which waits for one under the rtnl lock, waited
  // behind them - as did every getaddrinfo of the contenders, whose netlink dump needs that lock.
  // Without a hosts file only the network namespace is needed: nsenter enters it and execs.
  std::vector<std::string> full =
      hosts_written_
          ? std::vector<std::string>{find_tool("ip").value_or("ip"), "netns", "exec", name_}
          : std::vector<std::string>{find_tool("nsenter").value_or("nsenter"),
                                     "--net=/run/netns/" + name_, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

void NetNamespace::run_inside(const std::function<void()>& fn) const {
  std::exception_ptr error;
  std::thread thread([&] {
    try {
      const std::string path = "/run/netns/" + name_;
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw std::runtime_error(errno_text("cannot open " + path, errno));
      // setns(CLONE_NEWNET) moves this thread only; it ends right after fn().
      const int rc = ::setns(fd, CLONE_NEWNET);
      const int error_number = errno;
      ::close(fd);
      if (rc != 0) throw std::runtime_error(errno_text("setns into " + name_, error_number));
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  thread.join();
  if (error) std::rethrow_exception(error);
}

// ---------------------------------------------------------------------------------------------
// VethLink

VethLink::VethLink(const NetNamespace* left, const NetNamespace& right) {
  sweep_once();
  const int number = g_next_object++;
  left_.netns = left;
  left_.interface = new_name('a', number);
  right_.netns = &right;
  right_.interface = new_name('b', number);
  slot_ = AddressBlock::instance().take_slot();
  left_.address = AddressBlock::instance().address(slot_, 1);
  right_.address = AddressBlock::instance().address(slot_, 2);
  try {
    run_net_tool_or_throw(
        in_netns(left, {"ip", "link", "add", left_.interface, "type", "veth", "peer", "name",
                        right_.interface, "netns", right.name()}));
    for (const LinkEnd* end : {&left_, &right_}) {
      run_net_tool_or_throw(
          in_netns(end->netns, {"ip", "addr", "add", end->address + "/30", "dev", end->interface}));
      run_net_tool_or_throw(in_netns(end->netns, {"ip", "link", "set", end->interface, "up"}));
    }
  } catch (...) {
    run_net_tool(in_netns(left, {"ip", "link", "del", left_.interface}));
    AddressBlock::instance().give_back(slot_);
    throw;
  }
}

VethLink::~VethLink() {
  try {
    run_net_tool(in_netns(left_.netns, {"ip", "link", "del", left_.interface}));
  } catch (...) {
  }
  AddressBlock::instance().give_back(slot_);
}

void VethLink::cut() {
  for (const LinkEnd* end : {&left_, &right_}) {
    run_net_tool_or_throw(in_netns(
        end->netns, {"tc", "qdisc", "replace", "dev", end->interface, "root", "blackhole"}));
  }
  cut_ = true;
}

void VethLink::heal() {
  for (const LinkEnd* end : {&left_, &right_}) {
    // Fails only when there is no root qdisc of ours (never cut): nothing to undo. Waited for
    // long: under load the kernel has held `tc` for over 30 s (an expedited RCU grace period under
    // its network configuration lock, queued behind others), and a late heal is the trial's to
    // judge (a longer outage than asked), not an error.
    run_net_tool(in_netns(end->netns, {"tc", "qdisc", "del", "dev", end->interface, "root"}),
                 std::chrono::seconds(300));
  }
  cut_ = false;
}

// ---------------------------------------------------------------------------------------------
// Route

Route::Route(const NetNamespace& netns, std::string destination, std::vector<std::string> spec)
    : netns_(netns.name()), destination_(std::move(destination)), spec_(std::move(spec)) {
  std::vector<std::string> argv = {"ip", "route", "add"};
  argv.insert(argv.end(), spec_.begin(), spec_.end());
  run_net_tool_or_throw(in_netns(netns_, argv));
}

std::unique_ptr<Route> Route::via(const NetNamespace& netns, std::string destination,
                                  std::string gateway) {
  std::vector<std::string> spec = {destination, "via", std::move(gateway)};
  return std::unique_ptr<Route>(new Route(netns, std::move(destination), std::move(spec)));
}

std::unique_ptr<Route> Route::blackhole(const NetNamespace& netns, std::string destination) {
  std::vector<std::string> spec = {"blackhole", destination};
  return std::unique_ptr<Route>(new Route(netns, std::move(destination), std::move(spec)));
}

Route::~Route() {
  std::vector<std::string> argv = {"ip", "route", "del"};
  argv.insert(argv.end(), spec_.begin(), spec_.end());
  try {
    run_net_tool(in_netns(netns_, argv));
  } catch (...) {
  }
}

}  // namespace zklock::testing
