// shared_lock: zklock::SharedMutex with std::shared_lock and std::unique_lock. Readers of a shared
// configuration znode hold the read lock together; an update takes the write lock, waits for the
// readers to leave, writes fenced, and downgrades to a read lock to check what it wrote without
// letting another writer in between.
//
// Each contender has its own Session, as separate processes would: one SharedMutex object is one
// contender (threads sharing one object take turns).
#include <zklock/zklock.h>

#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "example_args.h"

namespace args = zklock::examples;  // the examples' argument helpers

namespace {

struct Contender {
  explicit Contender(const zklock::SessionOptions& options, const std::string& path)
      : session(options), lock(session, path) {}
  zklock::Session session;
  zklock::SharedMutex lock;
};

// Counts readers inside the read lock, so the example can show that they are in at once.
class ReadersInside {
 public:
  void enter() {
    const std::lock_guard lock(mutex_);
    ++inside_;
    changed_.notify_all();
  }
  void leave() {
    const std::lock_guard lock(mutex_);
    --inside_;
    changed_.notify_all();
  }
  bool wait_for_count(int n, std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return inside_ == n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int inside_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    zklock::SessionOptions options;
    options.connect = args::connect(argc, argv);
    const std::string path = args::arg(argc, argv, "--path", "/demo/config-lock");
    const std::string config = args::arg(argc, argv, "--config", "/demo/config");
    const int readers = std::stoi(args::arg(argc, argv, "--readers", "3"));

    Contender writer(options, path);
    if (!writer.session.get(config)) {
      writer.session.create(config, "version 0", zklock::CreateMode::kPersistent, true);
    }

    // 1. The readers take the read lock; all of them hold it at once.
    ReadersInside inside;
    std::mutex release_mutex;
    std::condition_variable release_cv;
    bool release = false;
    std::vector<std::thread> threads;
    for (int i = 0; i < readers; ++i) {
      threads.emplace_back([&, i] {
        Contender reader(options, path);
        std::shared_lock lock(reader.lock);  // lock_shared(): no writer is ahead of us
        const auto value = reader.session.get(config);
        std::cout << "reader " << i << " reads '" << (value ? value->data : "") << "' with token "
                  << reader.lock.fencing_token() << std::endl;
        inside.enter();
        std::unique_lock wait(release_mutex);
        release_cv.wait(wait, [&] { return release; });
        inside.leave();
      });  // ~shared_lock: unlock_shared()
    }
    if (!inside.wait_for_count(readers, std::chrono::seconds(30))) {
      std::cerr << "the readers did not all get in: the read lock is not shared" << std::endl;
      return 1;
    }
    std::cout << readers << " readers hold the read lock at once" << std::endl;

    // 2. A writer cannot get in while they hold it.
    if (std::unique_lock<zklock::SharedMutex> early(writer.lock, std::chrono::milliseconds(300));
        early.owns_lock()) {
      std::cerr << "a writer got in beside the readers" << std::endl;
      return 1;
    }
    std::cout << "the writer waits while readers hold the lock" << std::endl;

    // 3. The readers leave; the writer queues, gets in alone and writes, fenced.
    {
      const std::lock_guard lock(release_mutex);
      release = true;
    }
    release_cv.notify_all();
    std::unique_lock exclusive(writer.lock);
    for (auto& t : threads) t.join();
    const zklock::FencingToken token = writer.lock.fencing_token();
    writer.lock.commit_fenced(
        zklock::FencedWrite().set(config, "version 1 (token " + token.to_string() + ")"));
    std::cout << "the writer holds the lock alone and wrote with token " << token << std::endl;

    // 4. Downgrade: keep reading what we wrote, with no writer able to slip in between.
    if (writer.lock.try_downgrade()) {
      exclusive.release();  // the std::unique_lock no longer owns it: the read lock is ours now
      std::shared_lock reading(writer.lock, std::adopt_lock);
      std::cout << "downgraded to a read lock (token " << writer.lock.fencing_token()
                << "); the config reads '" << writer.session.get(config)->data << "'" << std::endl;
    } else {
      std::cout << "a writer queued behind us: not downgraded, still exclusive" << std::endl;
    }
    return 0;
  } catch (const zklock::Error& e) {
    std::cerr << e.what() << std::endl;
    return 1;
  }
}
