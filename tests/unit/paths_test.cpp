// tests/unit/paths_test.cpp: validation of znode paths, lock paths and connect strings
// (src/base/paths.h, white-box), without a server: what is accepted, and that everything else is an
// InvalidArgumentError - "nothing was sent" - whose message names the input and the problem.
#include "base/paths.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "zklock/errors.h"

namespace zklock::detail {
namespace {

// The message of the InvalidArgumentError `call` throws; fails the test when it throws nothing.
template <typename Call>
std::string refusal(Call call) {
  try {
    call();
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(e.errc(), Errc::invalid_argument);
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ZnodePathTest, AcceptsAbsolutePathsOfNonEmptySegments) {
  for (const char* path : {"/", "/a", "/locks/backup", "/a/b-c_d.e", "/a/..b", "/a/.b.",
                           "/\xc3\xa9t\xc3\xa9", "/with space", "/a/b/c/d/e/f"}) {
    EXPECT_EQ(znode_path_problem(path), "") << path;
  }
}

TEST(ZnodePathTest, SaysWhatIsWrongWithABadPath) {
  EXPECT_EQ(znode_path_problem(""), "path is empty");
  EXPECT_TRUE(contains(znode_path_problem("a/b"), "absolute"));
  EXPECT_TRUE(contains(znode_path_problem("/a/"), "must not end with '/'"));
  EXPECT_TRUE(contains(znode_path_problem("/a//b"), "empty segment"));
  EXPECT_TRUE(contains(znode_path_problem("//"), "end with '/'"));
  EXPECT_TRUE(contains(znode_path_problem("/a/./b"), "\".\" or \"..\""));
  EXPECT_TRUE(contains(znode_path_problem("/a/.."), "\".\" or \"..\""));
}

TEST(ZnodePathTest, RefusesControlCharactersNulIncluded) {
  EXPECT_TRUE(contains(znode_path_problem(std::string_view("/a\0b", 4)), "control characters"));
  EXPECT_TRUE(contains(znode_path_problem("/a\x01"), "control characters"));
  EXPECT_TRUE(contains(znode_path_problem("/tab\there"), "control characters"));
  EXPECT_TRUE(contains(znode_path_problem("/del\x7f"), "control characters"));
}

TEST(LockPathTest, RefusesTheRootAndTheServersOwnTree) {
  EXPECT_TRUE(contains(refusal([] { validate_lock_path("/"); }), "the root cannot be a lock path"));
  EXPECT_TRUE(contains(refusal([] { validate_lock_path("/zookeeper"); }), "reserved"));
  EXPECT_TRUE(contains(refusal([] { validate_lock_path("/zookeeper/quota"); }), "reserved"));
  EXPECT_NO_THROW(validate_lock_path("/zookeeperish"));
  EXPECT_NO_THROW(validate_lock_path("/locks/zookeeper"));
}

TEST(LockPathTest, ABadPathIsNamedInTheError) {
  const std::string message = refusal([] { validate_lock_path("locks/x"); });
  EXPECT_TRUE(contains(message, "lock path \"locks/x\"")) << message;
  EXPECT_TRUE(contains(message, "absolute")) << message;
}

TEST(NodePathTest, NamesWhatThePathIsFor) {
  const std::string message = refusal([] { validate_node_path("/a//b", "counter node"); });
  EXPECT_TRUE(contains(message, "counter node \"/a//b\"")) << message;
  EXPECT_NO_THROW(validate_node_path("/", "parent"));
}

TEST(ConnectStringTest, AcceptsHostsPortsAndAChroot) {
  for (const char* connect : {"127.0.0.1:2181", "zk1:2181,zk2:2182,zk3:2183", "h:1", "h:65535",
                              "zk.example.com:2181/app/locks", "[::1]:2181", "a:1,b:2/chroot"}) {
    EXPECT_NO_THROW(validate_connect_string(connect)) << connect;
  }
}

TEST(ConnectStringTest, RefusesBadHostEntries) {
  EXPECT_TRUE(contains(refusal([] { validate_connect_string(""); }), "empty"));
  EXPECT_TRUE(contains(refusal([] { validate_connect_string("zk1"); }), "has no :port"));
  EXPECT_TRUE(contains(refusal([] { validate_connect_string(":2181"); }), "has no host"));
  EXPECT_TRUE(contains(refusal([] { validate_connect_string("a:1,,b:2"); }), "empty host entry"));
  EXPECT_TRUE(contains(refusal([] { validate_connect_string("a:1,"); }), "empty host entry"));
  EXPECT_TRUE(contains(refusal([] { validate_connect_string("bad host:1"); }), "whitespace"));
}

TEST(ConnectStringTest, RefusesPortsOutside1To65535) {
  for (const char* connect : {"h:0", "h:65536", "h:", "h:12x", "h:-1", "h:99999999999"}) {
    const std::string message = refusal([&] { validate_connect_string(connect); });
    EXPECT_TRUE(contains(message, "is not a number in 1..65535")) << connect << ": " << message;
    EXPECT_TRUE(contains(message, std::string("connect string \"") + connect + "\"")) << message;
  }
}

TEST(ConnectStringTest, RefusesABadChroot) {
  EXPECT_TRUE(contains(refusal([] { validate_connect_string("h:1/"); }), "is not allowed"));
  EXPECT_TRUE(contains(refusal([] { validate_connect_string("h:1/a/"); }), "chroot \"/a/\""));
  EXPECT_TRUE(contains(refusal([] { validate_connect_string("h:1/a//b"); }), "empty segment"));
  EXPECT_TRUE(contains(refusal([] { validate_connect_string("/app"); }), "no host"));
}

TEST(ParentPathTest, IsThePathWithoutItsLastSegment) {
  EXPECT_EQ(parent_path("/a"), "/");
  EXPECT_EQ(parent_path("/a/b"), "/a");
  EXPECT_EQ(parent_path("/a/b/c"), "/a/b");
}

}  // namespace
}  // namespace zklock::detail
