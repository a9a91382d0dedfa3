// tests/support/temp_dir.h: TempDir, the scratch directory of one test (logs, sockets, FIFOs,
// databases, the files child processes leave as evidence).
#pragma once

#include <string>

namespace zklock::testing {

// A new empty directory "$TMPDIR/<prefix>XXXXXX" (make_temp_dir, zk_server.h), removed with
// everything in it when the TempDir goes - unless the test running it has failed (its files are
// then the evidence: the path is printed) or ZKLOCK_KEEP_TEST_DIRS asks to keep them.
// Not copyable or movable.
class TempDir {
 public:
  // Throws std::runtime_error when the directory cannot be created.
  explicit TempDir(const std::string& prefix = "zklock-test-");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace zklock::testing
