// stop_on_lost: a worker that does its work in steps while it holds the lock, pauses starting new
// steps while the lock is Suspended, and stops the moment the lock is Lost - which zklock reports
// before the server can hand the lock to anyone else.
//
//   zklock-example-stop-on-lost --connect HOSTS --path /demo/worker --steps 100 --step-ms 100
#include <zklock/zklock.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "example_args.h"

namespace args = zklock::examples;  // the examples' argument helpers

int main(int argc, char** argv) {
  const int steps = std::stoi(args::arg(argc, argv, "--steps", "50"));
  const auto step = std::chrono::milliseconds(std::stoi(args::arg(argc, argv, "--step-ms", "100")));
  try {
    zklock::SessionOptions options;
    options.connect = args::connect(argc, argv);
    options.session_timeout = std::chrono::seconds(6);
    zklock::Session session(options);

    std::atomic<bool> lost{false};
    zklock::MutexOptions mutex_options;
    mutex_options.on_state_change = [&](zklock::LockState state, const zklock::Acquisition& a) {
      std::cerr << "lock " << a.node_path << " is now " << state << std::endl;
      if (state == zklock::LockState::kLost) lost = true;
    };
    zklock::Mutex mutex(session, args::arg(argc, argv, "--path", "/demo/worker"), mutex_options);
    zklock::Guard guard(mutex);
    std::cout << "working with token " << guard.fencing_token() << std::endl;
    for (int i = 0; i < steps; ++i) {
      // Suspended: do not start a step; wait for Held again or for Lost.
      while (guard.state() == zklock::LockState::kSuspended && !lost) {
        guard.wait_lost_for(std::chrono::milliseconds(50));
      }
      if (lost || guard.state() == zklock::LockState::kLost) {
        std::cout << "lock lost after " << i << " steps: stopping" << std::endl;
        return 76;
      }
      std::this_thread::sleep_for(step);  // one step of real work
    }
    std::cout << "done: " << steps << " steps" << std::endl;
    return 0;
  } catch (const zklock::Error& e) {
    std::cerr << e.what() << std::endl;
    return 1;
  }
}
