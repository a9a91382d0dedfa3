// No secret on the wire: the loopback traffic of a session that authenticates with digest
// credentials, captured with tcpdump. Over TLS the password never appears in the capture; over
// plain TCP it does - which shows that the capture sees the session's bytes, and that the first
// assertion could fail. Needs root (a capture on lo) and Debian's tcpdump.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "support/environment.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "test_env.h"
#include "tls_fixture.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

// The bytes of every packet to or from `port` on lo while `session_work` runs.
template <class Fn>
std::string capture(const std::string& dir, int port, Fn&& session_work) {
  const std::string pcap = dir + "/capture-" + std::to_string(port) + ".pcap";
  const std::string log = pcap + ".log";
  SpawnOptions spawn;
  spawn.log_path = log;
  // -U: each packet is written as it comes; -s 0: whole packets; -Z root: no privilege drop (the
  // file is in a directory only root may write).
  ChildProcess tcpdump({"tcpdump", "-i", "lo", "-n", "--immediate-mode", "-U", "-s", "0", "-Z",
                        "root", "-w", pcap, "tcp", "port", std::to_string(port)},
                       spawn);
  EXPECT_TRUE(
      wait_until([&] { return read_all(log).find("listening on lo") != std::string::npos; }, 10s))
      << read_all(log);
  session_work();
  // Every packet of the work was on the wire before session_work() returned (the session closed
  // its connection). tcpdump drops what it has not yet written when it is stopped: wait until
  // it has written packets and the file stops growing (checked 300 ms apart).
  std::uintmax_t last = 0;
  EXPECT_TRUE(wait_until(
      [&] {
        std::error_code ignored;
        const std::uintmax_t now = std::filesystem::file_size(pcap, ignored);
        const bool settled = now > 24 && now == last;  // 24: the file header alone
        last = now;
        return settled;
      },
      10s, 300ms));
  tcpdump.stop(std::chrono::seconds(5));
  return read_all(pcap);
}

std::string random_password() {
  std::random_device rd;
  return "pw-" + std::to_string(rd()) + "-" + std::to_string(rd()) + "-not-on-the-wire";
}

class TlsCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() == 0) return;
    // CI runs as root: a skip there would hide the one test that shows the secret is hidden.
    if (prerequisites_required("ZKLOCK_REQUIRE_NETNS")) FAIL() << "capturing on lo needs root";
    GTEST_SKIP() << "capturing on lo needs root";
  }
};

TEST_F(TlsCaptureTest, DigestCredentialsOverTlsNeverAppearOnTheWireAndDoInPlainText) {
  TlsServer& server = tls_server();
  TempDir dir("zklock-capture-");
  // Under the root (open): /zklock-test belongs to the TLS identity that created it first.
  const std::string path = "/" + unique_name("tls-capture");
  const std::string password = random_password();

  auto work = [&](SessionOptions o) {
    o.credentials = DigestCredentials{"capture-user", password};
    o.node_acl = open_acl();  // the test's paths stay usable by either session
    Session s(o);
    Mutex m(s, path);
    m.lock();
    m.unlock();
  };
  const std::string over_tls =
      capture(dir.path(), server.server().secure_port(), [&] { work(server.options("holder")); });
  const std::string in_plain = capture(dir.path(), server.server().port(), [&] {
    work(options_for(server.server().connect_string()));
  });

  Session cleanup(options_for(server.server().connect_string()));
  EXPECT_TRUE(cleanup.remove(path));  // the lock path, left empty and open by the two sessions

  // The capture saw the TLS session: its handshake and requests (certificates alone are >1 KB).
  EXPECT_GT(over_tls.size(), 2000u);
  EXPECT_EQ(over_tls.find(password), std::string::npos) << "the password crossed the wire";
  EXPECT_EQ(over_tls.find("capture-user"), std::string::npos);
  EXPECT_EQ(over_tls.find(path), std::string::npos) << "the lock path crossed the wire";
  // The same in plain text: the password is there to be read.
  EXPECT_NE(in_plain.find("capture-user:" + password), std::string::npos);
}

}  // namespace
}  // namespace zklock::testing
