// Consumer tests: a project that is not zklock builds tests/consumers/app/app.cpp against zklock
// the four ways README's "Use it from CMake" shows, and the program takes and releases a lock on a
// real server. Each ctest entry runs one test of this binary (tests/consumers/tests.cmake):
//
//   ConsumerSetup.InstallThisBuild   cmake --install <this build> --prefix P      (fixture)
//   ConsumerSetup.InstallOtherKind   configure/build/install zklock shared if this build is static,
//                                    static if it is shared                        (fixture)
//   Consumer.FindPackage{Static,Shared}  find_package(zklock) with CMAKE_PREFIX_PATH=P
//   Consumer.PkgConfig{Static,Shared}    c++ app.cpp $(pkg-config --cflags --libs zklock)
//   Consumer.AddSubdirectory             add_subdirectory(<zklock source>)
//   Consumer.FetchContent                FetchContent_Declare(zklock SOURCE_DIR <zklock source>)
//   Consumer.TlsDetectedOnlyWhenTheClientHasIt   configure against Debian's C client and a TLS one
//
// Everything happens under ZKLOCK_CONSUMER_WORK_DIR (in the build tree); each test starts from an
// empty directory of its own, so a rerun never sees a previous run's files.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/zk_server.h"
#include "zklock/version.h"

namespace zklock::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Generous limits for a loaded 2-core machine; a passing test never waits for them.
constexpr auto kConfigureLimit = 180s;
constexpr auto kBuildLimit = 600s;
constexpr auto kRunLimit = 60s;

const fs::path kWork = ZKLOCK_CONSUMER_WORK_DIR;
const fs::path kConsumers = ZKLOCK_CONSUMER_SOURCE_DIR;  // tests/consumers
const std::string kLibDir = ZKLOCK_CONSUMER_LIBDIR;      // CMAKE_INSTALL_LIBDIR, e.g. "lib"
constexpr bool kThisBuildShared = ZKLOCK_CONSUMER_THIS_BUILD_SHARED;

// The prefix holding an installed zklock of the given kind (see the two fixtures).
fs::path installed_prefix(bool shared) {
  return kWork / (shared == kThisBuildShared ? "this-build" : "other-kind") / "prefix";
}

// A fresh, empty directory for one test.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = kWork / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct RunResult {
  bool ok = false;     // exited with status 0 within the limit
  std::string output;  // stdout and stderr
};

// Runs argv with its output in `log`; ok when it exits 0 within `limit` (killed otherwise).
RunResult run(const std::vector<std::string>& argv, const fs::path& log,
              std::chrono::milliseconds limit, std::vector<std::string> env = {}) {
  SpawnOptions spawn;
  spawn.log_path = log.string();
  spawn.extra_env = std::move(env);
  fs::remove(log);
  ChildProcess child(argv, spawn);
  const auto status = child.wait_exit(limit);
  RunResult result;
  if (!status) child.kill();
  result.ok = status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
  std::string how = status ? describe_wait_status(*status) : std::string("timed out, killed");
  result.output = read_file(log);
  if (!result.ok) result.output += "\n[" + argv.front() + ": " + how + "]";
  return result;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& a : argv) text += (text.empty() ? "" : " ") + a;
  return text;
}

// Succeeds when argv exits 0 within `limit`; else fails with its command line and output.
::testing::AssertionResult succeeds(const std::vector<std::string>& argv, const fs::path& log,
                                    std::chrono::milliseconds limit,
                                    std::vector<std::string> env = {}) {
  const RunResult result = run(argv, log, limit, std::move(env));
  if (result.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << joined(argv) << " failed:\n" << result.output;
}

// Configures and builds the CMake project `source` in `build`: no build type (no optimisation)
// and a unity build - the quickest build of the library from source (a third of the time: what is
// tested is how it links and runs; the project's own build compiles each file alone). That the
// library builds as one unit is thereby tested too.
::testing::AssertionResult configure_and_build(const fs::path& source, const fs::path& build,
                                               const std::vector<std::string>& defines) {
  std::vector<std::string> configure = {
      ZKLOCK_CONSUMER_CMAKE,   "-S",
      source.string(),         "-B",
      build.string(),          "-DCMAKE_CXX_COMPILER=" ZKLOCK_CONSUMER_CXX,
      "-DCMAKE_UNITY_BUILD=ON"};
  configure.insert(configure.end(), defines.begin(), defines.end());
  auto configured = succeeds(configure, build.parent_path() / "configure.log", kConfigureLimit);
  if (!configured) return configured;
  return succeeds({ZKLOCK_CONSUMER_CMAKE, "--build", build.string(), "-j2"},
                  build.parent_path() / "build.log", kBuildLimit);
}

// Installs the CMake build `build` into `prefix`.
::testing::AssertionResult installs(const fs::path& build, const fs::path& prefix) {
  return succeeds({ZKLOCK_CONSUMER_CMAKE, "--install", build.string(), "--prefix", prefix.string()},
                  prefix.parent_path() / "install.log", kBuildLimit);
}

// Runs the consumer program against the shared server; it must take and release a lock.
void expect_app_locks(const fs::path& app, std::vector<std::string> env = {}) {
  ASSERT_TRUE(fs::exists(app)) << app;
  const std::string path =
      "/zklock-consumer/" + app.parent_path().parent_path().filename().string();
  const RunResult result = run({app.string(), shared_server().connect, path},
                               app.parent_path() / "app.log", kRunLimit, std::move(env));
  ASSERT_TRUE(result.ok) << result.output;
  EXPECT_NE(result.output.find("compiled against zklock " ZKLOCK_VERSION_STRING), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("typed error: zklock"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("held " + path + " with token "), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("released: NotHeld"), std::string::npos) << result.output;
}

// The shared libraries `binary` records as needed (readelf -d).
std::string needed_libraries(const fs::path& binary) {
  // The log named by the whole path: the static and the shared consumers' binaries are both
  // "app", and their tests may run at once (CI: one read the other's log).
  std::string name = binary.string();
  std::replace(name.begin(), name.end(), '/', '_');
  const RunResult result =
      run({"readelf", "-d", binary.string()}, kWork / ("readelf" + name + ".log"), kRunLimit);
  std::string needed;
  std::istringstream lines(result.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("(NEEDED)") != std::string::npos || line.find("(SONAME)") != std::string::npos) {
      needed += line + "\n";
    }
  }
  return needed;
}

const std::string kSoname = "libzklock.so." + std::to_string(ZKLOCK_VERSION_MAJOR);

// What a static or shared install must contain.
void expect_installed_tree(const fs::path& prefix, bool shared) {
  const fs::path lib = prefix / kLibDir;
  for (const fs::path& file :
       {prefix / "include/zklock/zklock.h", prefix / "include/zklock/version.h",
        lib / "cmake/zklock/zklockConfig.cmake", lib / "cmake/zklock/zklockConfigVersion.cmake",
        lib / "cmake/zklock/zklockTargets.cmake", lib / "cmake/zklock/FindZooKeeper.cmake",
        lib / "pkgconfig/zklock.pc"}) {
    EXPECT_TRUE(fs::exists(file)) << file;
  }
  EXPECT_FALSE(fs::exists(prefix / "include/zookeeper")) << "the C client's headers are not ours";
  if (!shared) {
    EXPECT_TRUE(fs::exists(lib / "libzklock.a"));
    EXPECT_FALSE(fs::exists(lib / "libzklock.so"));
    return;
  }
  // libzklock.so -> libzklock.so.MAJOR -> libzklock.so.MAJOR.MINOR.PATCH, SONAME from the major.
  EXPECT_FALSE(fs::exists(lib / "libzklock.a"));
  ASSERT_TRUE(fs::is_symlink(lib / "libzklock.so"));
  EXPECT_EQ(fs::read_symlink(lib / "libzklock.so").string(), kSoname);
  ASSERT_TRUE(fs::is_symlink(lib / kSoname));
  EXPECT_EQ(fs::read_symlink(lib / kSoname).string(), "libzklock.so." ZKLOCK_VERSION_STRING);
  EXPECT_NE(needed_libraries(lib / kSoname).find("[" + kSoname + "]"), std::string::npos)
      << needed_libraries(lib / kSoname);
}

// ---------------------------------------------------------------------------------------------
// Fixtures (ctest FIXTURES_SETUP): the installed trees the other tests build against.

TEST(ConsumerSetup, InstallThisBuild) {
  const fs::path prefix = installed_prefix(kThisBuildShared);
  fresh_dir(prefix.parent_path().filename().string());
  ASSERT_TRUE(installs(ZKLOCK_CONSUMER_BINARY_DIR, prefix));
  expect_installed_tree(prefix, kThisBuildShared);
#ifdef ZKLOCK_CONSUMER_EXPECT_CLI
  EXPECT_TRUE(fs::exists(prefix / "bin/zklock"));
#endif
}

TEST(ConsumerSetup, InstallOtherKind) {
  const bool shared = !kThisBuildShared;
  const fs::path prefix = installed_prefix(shared);
  const fs::path dir = fresh_dir(prefix.parent_path().filename().string());
  // CMAKE_BUILD_TYPE=None: no optimisation flags, the quickest build of the library.
  ASSERT_TRUE(configure_and_build(
      ZKLOCK_CONSUMER_PROJECT_SOURCE_DIR, dir / "build",
      {std::string("-DBUILD_SHARED_LIBS=") + (shared ? "ON" : "OFF"), "-DCMAKE_BUILD_TYPE=None",
       "-DZKLOCK_BUILD_TESTS=OFF", "-DZKLOCK_BUILD_EXAMPLES=OFF", "-DZKLOCK_BUILD_TOOLS=OFF",
       "-DCMAKE_INSTALL_LIBDIR=" + kLibDir}));
  ASSERT_TRUE(installs(dir / "build", prefix));
  expect_installed_tree(prefix, shared);
  EXPECT_FALSE(fs::exists(prefix / "bin/zklock")) << "ZKLOCK_BUILD_TOOLS=OFF installs no CLI";
}

// ---------------------------------------------------------------------------------------------
// Consumers.

void find_package_consumer(bool shared) {
  const fs::path dir = fresh_dir(std::string("find-package-") + (shared ? "shared" : "static"));
  ASSERT_TRUE(configure_and_build(kConsumers / "find_package", dir / "build",
                                  {"-DCMAKE_PREFIX_PATH=" + installed_prefix(shared).string()}));
  const fs::path app = dir / "build/app";
  if (shared) {
    // CMake's build RPATH finds the library: no LD_LIBRARY_PATH.
    EXPECT_NE(needed_libraries(app).find("[" + kSoname + "]"), std::string::npos);
  } else {
    EXPECT_EQ(needed_libraries(app).find("libzklock"), std::string::npos);
  }
  expect_app_locks(app);
}

TEST(Consumer, FindPackageStatic) { find_package_consumer(false); }
TEST(Consumer, FindPackageShared) { find_package_consumer(true); }

void pkg_config_consumer(bool shared) {
  const fs::path dir = fresh_dir(std::string("pkg-config-") + (shared ? "shared" : "static"));
  const fs::path prefix = installed_prefix(shared);
  const std::string pc_path = "PKG_CONFIG_PATH=" + (prefix / kLibDir / "pkgconfig").string();
  fs::create_directories(dir / "build");
  const fs::path app = dir / "build/app";
  // The plain command line a Makefile would have.
  const std::string compile = std::string(ZKLOCK_CONSUMER_CXX) + " -std=c++17 " +
                              (kConsumers / "app/app.cpp").string() + " -o " + app.string() +
                              " $(pkg-config --cflags --libs zklock)";
  ASSERT_TRUE(succeeds({"sh", "-ec", compile}, dir / "build.log", kBuildLimit, {pc_path}));
  if (shared) {
    EXPECT_NE(needed_libraries(app).find("[" + kSoname + "]"), std::string::npos);
    expect_app_locks(app, {"LD_LIBRARY_PATH=" + (prefix / kLibDir).string()});
  } else {
    EXPECT_EQ(needed_libraries(app).find("libzklock"), std::string::npos);
    expect_app_locks(app);
  }
}

TEST(Consumer, PkgConfigStatic) { pkg_config_consumer(false); }
TEST(Consumer, PkgConfigShared) { pkg_config_consumer(true); }

// zklock as a subproject: the library and nothing else (no tests, examples, tools or install
// rules of its own).
void subproject_consumer(const std::string& kind) {
  const fs::path dir = fresh_dir(kind);
  ASSERT_TRUE(configure_and_build(kConsumers / kind, dir / "build",
                                  {"-DZKLOCK_SOURCE_DIR=" ZKLOCK_CONSUMER_PROJECT_SOURCE_DIR}));
  const RunResult targets =
      run({ZKLOCK_CONSUMER_CMAKE, "--build", (dir / "build").string(), "--target", "help"},
          dir / "targets.log", kRunLimit);
  ASSERT_TRUE(targets.ok) << targets.output;
  for (const char* unwanted : {"zklock-cli", "zklock-bench", "zklock-example",
                               "zklock_test_support", "session_test", "docs"}) {
    EXPECT_EQ(targets.output.find(unwanted), std::string::npos) << unwanted << "\n"
                                                                << targets.output;
  }
  ASSERT_TRUE(installs(dir / "build", dir / "prefix"));
  EXPECT_FALSE(fs::exists(dir / "prefix")) << "zklock installed files as a subproject";
  expect_app_locks(dir / "build/app");
}

TEST(Consumer, AddSubdirectory) { subproject_consumer("add_subdirectory"); }
TEST(Consumer, FetchContent) { subproject_consumer("fetch_content"); }

// ---------------------------------------------------------------------------------------------
// TLS detection (docs/security.md). Debian's C client has no zookeeper_init_ssl, so the "yes"
// branch is proved against a stand-in: the real headers, an OpenSSL type header and a library
// that exports zookeeper_init_ssl. Configure only; nothing of zklock is compiled.

std::string configure_library(const fs::path& dir, const std::vector<std::string>& defines,
                              ::testing::AssertionResult* ok) {
  std::vector<std::string> configure = {ZKLOCK_CONSUMER_CMAKE,
                                        "-S",
                                        ZKLOCK_CONSUMER_PROJECT_SOURCE_DIR,
                                        "-B",
                                        (dir / "build").string(),
                                        "-DCMAKE_CXX_COMPILER=" ZKLOCK_CONSUMER_CXX,
                                        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
                                        "-DZKLOCK_BUILD_TESTS=OFF",
                                        "-DZKLOCK_BUILD_EXAMPLES=OFF",
                                        "-DZKLOCK_BUILD_TOOLS=OFF"};
  configure.insert(configure.end(), defines.begin(), defines.end());
  fs::create_directories(dir);
  *ok = succeeds(configure, dir / "configure.log", kConfigureLimit);
  return read_file(dir / "configure.log") + read_file(dir / "build/compile_commands.json");
}

TEST(Consumer, TlsDetectedOnlyWhenTheClientHasIt) {
  const fs::path dir = fresh_dir("tls-detection");
  ::testing::AssertionResult ok = ::testing::AssertionSuccess();

  const std::string debian = configure_library(dir / "debian", {}, &ok);
  ASSERT_TRUE(ok);
  EXPECT_NE(debian.find("TLS in the client:  no"), std::string::npos) << debian;
  EXPECT_NE(debian.find("ZKLOCK_HAVE_ZOOKEEPER_SSL=0"), std::string::npos) << debian;
  EXPECT_EQ(debian.find("HAVE_OPENSSL_H"), std::string::npos) << debian;

  const fs::path fake = dir / "tls-client";
  fs::create_directories(fake / "include/openssl");
  fs::copy(ZKLOCK_CONSUMER_ZOOKEEPER_INCLUDE_DIR "/zookeeper", fake / "include/zookeeper");
  std::ofstream(fake / "include/openssl/ossl_typ.h")
      << "typedef struct ssl_st SSL;\ntypedef struct ssl_ctx_st SSL_CTX;\n";
  std::ofstream(fake / "client.cpp") << "extern \"C\" void* zookeeper_init_ssl() { return 0; }\n";
  ASSERT_TRUE(succeeds({ZKLOCK_CONSUMER_CXX, "-shared", "-fPIC", (fake / "client.cpp").string(),
                        "-o", (fake / "libzookeeper_mt.so").string()},
                       fake / "compile.log", kBuildLimit));
  const std::string tls =
      configure_library(dir / "tls",
                        {"-DZooKeeper_INCLUDE_DIR=" + (fake / "include").string(),
                         "-DZooKeeper_LIBRARY=" + (fake / "libzookeeper_mt.so").string()},
                        &ok);
  ASSERT_TRUE(ok);
  EXPECT_NE(tls.find("TLS in the client:  yes"), std::string::npos) << tls;
  EXPECT_NE(tls.find("ZKLOCK_HAVE_ZOOKEEPER_SSL=1"), std::string::npos) << tls;
  EXPECT_NE(tls.find("-DHAVE_OPENSSL_H"), std::string::npos) << tls;
}

}  // namespace
}  // namespace zklock::testing
