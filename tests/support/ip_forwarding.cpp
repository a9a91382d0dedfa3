// tests/support/ip_forwarding.cpp: IPv4 forwarding in the host namespace, shared by every test
// process of the machine (netns.h, IpForwarding): on while any of them needs it, restored to what
// was found by the last one, also when earlier users died without a destructor.
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/files.h"
#include "support/netns.h"
#include "support/netns_state.h"
#include "support/process.h"

namespace zklock::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// ip_forward, shared by the test processes of the machine

constexpr const char* kIpForward = "/proc/sys/net/ipv4/ip_forward";

struct ForwardingState {
  char original = '\0';  // '\0': no state (nobody uses forwarding)
  std::vector<int> users;
};

std::string forwarding_state_path() { return state_dir() + "/ip_forward.state"; }

ForwardingState read_forwarding_state() {
  ForwardingState state;
  std::istringstream lines(read_file(forwarding_state_path()));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("original=", 0) == 0 && line.size() > 9) state.original = line[9];
    if (line.rfind("pid=", 0) == 0) state.users.push_back(std::atoi(line.c_str() + 4));
  }
  return state;
}

void write_forwarding_state(const ForwardingState& state) {
  const std::string path = forwarding_state_path();
  if (state.users.empty()) {
    ::unlink(path.c_str());
    return;
  }
  std::ofstream out(path, std::ios::trunc);
  out << "original=" << state.original << "\n";
  for (int pid : state.users) out << "pid=" << pid << "\n";
  out.close();
  if (!out) throw std::runtime_error("netns: cannot write " + path);
}

void write_ip_forward(char value) {
  std::ofstream out(kIpForward);
  out << value << "\n";
  out.close();
  if (!out) throw std::runtime_error(std::string("netns: cannot write ") + kIpForward);
}

// Drops users that are gone (and `remove`, when not 0); restores the original value once nobody
// is left. Call with the state lock held.
void drop_forwarding_users(ForwardingState& state, int remove) {
  std::vector<int> alive;
  for (int pid : state.users) {
    if (pid != remove && pid_alive(pid)) alive.push_back(pid);
  }
  state.users = alive;
  if (state.users.empty() && state.original != '\0') {
    try {
      write_ip_forward(state.original);
    } catch (const std::exception&) {
      // Nothing better to do in a destructor or a sweep; the next sweep tries again.
      return;
    }
  }
  write_forwarding_state(state);
}

std::mutex g_forwarding_mutex;
int g_forwarding_count = 0;  // IpForwarding objects alive in this process

}  // namespace

void release_ip_forwarding_of_gone_users(int remove) {
  FileLock lock(state_dir() + "/ip_forward.lock", /*wait=*/true);
  ForwardingState state = read_forwarding_state();
  if (!state.users.empty()) drop_forwarding_users(state, remove);
}

// ---------------------------------------------------------------------------------------------
// IpForwarding

IpForwarding::IpForwarding() {
  sweep_once();
  std::lock_guard in_process(g_forwarding_mutex);
  if (g_forwarding_count++ > 0) return;
  try {
    FileLock lock(state_dir() + "/ip_forward.lock", /*wait=*/true);
    ForwardingState state = read_forwarding_state();
    drop_forwarding_users(state, 0);
    if (state.users.empty()) state.original = ip_forward_value();
    if (state.original != '0' && state.original != '1') {
      throw std::runtime_error(std::string("netns: cannot read ") + kIpForward);
    }
    state.users.push_back(static_cast<int>(::getpid()));
    write_forwarding_state(state);  // first: a crash after the switch is then swept
    write_ip_forward('1');
  } catch (...) {
    --g_forwarding_count;
    throw;
  }
}

IpForwarding::~IpForwarding() {
  std::lock_guard in_process(g_forwarding_mutex);
  if (--g_forwarding_count > 0) return;
  try {
    FileLock lock(state_dir() + "/ip_forward.lock", /*wait=*/true);
    ForwardingState state = read_forwarding_state();
    drop_forwarding_users(state, static_cast<int>(::getpid()));
  } catch (...) {
  }
}

char ip_forward_value() {
  const std::string text = read_file(kIpForward);
  return text.empty() ? '?' : text[0];
}

std::vector<int> ip_forward_users() {
  FileLock lock(state_dir() + "/ip_forward.lock", /*wait=*/true);
  return read_forwarding_state().users;
}

}  // namespace zklock::testing
