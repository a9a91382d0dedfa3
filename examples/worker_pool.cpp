// worker_pool: a pool of workers that run at most N jobs at once across every process sharing one
// semaphore path. Each worker thread takes a lease for each job and gives it back when the job is
// done. Run several processes at once on one path: together they never run more than --slots jobs.
//
//   zklock-example-worker-pool --connect 127.0.0.1:2181 --path /demo/pool --slots 2
//       --workers 2 --jobs 4 --job-ms 150 --name pool-1        (one command line)
//
// Besides what it says for people, it prints one line as each job starts and ends:
//   start <steady clock ns> <name>/job-<k>
//   end <steady clock ns> <name>/job-<k>
// The steady clock is the machine's monotonic clock, the same in every process: merging the lines
// of several processes and counting starts minus ends shows how many jobs ran at once
// (scripts/demo.sh does, and fails if it ever exceeds --slots).
#include <zklock/zklock.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "example_args.h"

namespace args = zklock::examples;  // the examples' argument helpers

namespace {

std::mutex output_mutex;

void say(const std::string& line) {
  std::lock_guard<std::mutex> lock(output_mutex);
  std::cout << line << std::endl;
}

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = args::arg(argc, argv, "--name", "pool");
  const std::string path = args::arg(argc, argv, "--path", "/demo/pool");
  const int slots = std::stoi(args::arg(argc, argv, "--slots", "2"));
  const int workers = std::stoi(args::arg(argc, argv, "--workers", "2"));
  const int jobs = std::stoi(args::arg(argc, argv, "--jobs", "4"));
  const int job_ms = std::stoi(args::arg(argc, argv, "--job-ms", "150"));
  try {
    zklock::SessionOptions options;
    options.connect = args::connect(argc, argv);
    zklock::Session session(options);

    zklock::SemaphoreOptions semaphore_options;
    semaphore_options.description = name;
    // Every process must be given the same number of slots: it is stored with the path, and a
    // process with another number gets LeaseCountMismatchError.
    zklock::Semaphore semaphore(session, path, slots, semaphore_options);

    std::atomic<int> next_job{0};
    std::atomic<int> done{0};
    std::atomic<int> running_here{0};
    std::atomic<int> most_here{0};
    std::atomic<bool> failed{false};
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w) {
      pool.emplace_back([&] {
        try {
          for (int job = next_job++; job < jobs; job = next_job++) {
            zklock::Lease lease = semaphore.acquire();  // blocks while every slot is taken
            const std::string id = name + "/job-" + std::to_string(job);
            say("start " + std::to_string(now_ns()) + " " + id);
            const int here = ++running_here;
            for (int seen = most_here;
                 here > seen && !most_here.compare_exchange_weak(seen, here);) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(job_ms));  // the job
            if (lease.state() != zklock::LockState::kHeld) {
              // Suspended or Lost: the slot may be someone else's by now.
              say(id + ": the lease is " + std::string(zklock::to_string(lease.state())));
            }
            --running_here;
            say("end " + std::to_string(now_ns()) + " " + id);
            ++done;
          }  // the lease is released here, at the end of each job
        } catch (const zklock::Error& e) {
          say(name + ": " + e.what());
          failed = true;
        }
      });
    }
    for (auto& t : pool) t.join();
    say(name + ": " + std::to_string(done.load()) + " jobs done by " + std::to_string(workers) +
        " workers; at most " + std::to_string(most_here.load()) +
        " of them ran at once in this process (" + std::to_string(slots) + " slots in all)");
    return failed ? 1 : 0;
  } catch (const zklock::Error& e) {
    std::cerr << name << ": " << e.what() << std::endl;
    return 1;
  }
}
