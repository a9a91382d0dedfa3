// basic_lock: take a lock, work a little, release it. Run several at once on one path and watch
// them take turns, each with a larger fencing token than the one before.
//
//   zklock-example-basic-lock --connect 127.0.0.1:2181 --path /demo/lock --name worker-1 --hold-ms 300
#include <zklock/zklock.h>

#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>

#include "example_args.h"

namespace args = zklock::examples;  // the examples' argument helpers

int main(int argc, char** argv) {
  const std::string name = args::arg(argc, argv, "--name", "worker");
  const std::string path = args::arg(argc, argv, "--path", "/demo/lock");
  const int hold_ms = std::stoi(args::arg(argc, argv, "--hold-ms", "300"));
  try {
    zklock::SessionOptions options;
    options.connect = args::connect(argc, argv);
    options.session_timeout = std::chrono::seconds(10);
    zklock::Session session(options);

    zklock::MutexOptions mutex_options;
    mutex_options.description = name;
    zklock::Mutex mutex(session, path, mutex_options);

    std::lock_guard<zklock::Mutex> hold(mutex);  // blocks until it is our turn
    const zklock::Acquisition acquired = *mutex.acquisition();
    std::cout << name << " acquired " << path << ": fencing token " << acquired.token()
              << ", sequence " << acquired.sequence << std::endl;
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));  // the "work"
    std::cout << name << " releasing" << std::endl;
    return 0;
  } catch (const zklock::Error& e) {
    std::cerr << name << ": " << e.what() << std::endl;
    return 1;
  }
}
