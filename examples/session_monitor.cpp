// session_monitor: print every state change of a Session (Connected, Suspended, Lost, a new
// session after Lost, Closed) with the time, for --seconds seconds. Stop or freeze the server
// meanwhile to see a disconnect (Suspended, then Connected, same session id) or a lost session
// (Lost, then Connecting and Connected with a new id).
#include <zklock/session.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "example_args.h"

namespace args = zklock::examples;  // the examples' argument helpers

int main(int argc, char** argv) {
  try {
    zklock::SessionOptions options;
    options.connect = args::connect(argc, argv);
    options.session_timeout =
        std::chrono::milliseconds(std::stoi(args::arg(argc, argv, "--timeout-ms", "6000")));
    zklock::Session session(options);
    const auto start = std::chrono::steady_clock::now();
    auto since = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    std::printf("%7.3fs Connected session 0x%llx, negotiated timeout %lld ms\n", since(),
                static_cast<unsigned long long>(session.session_id()),
                static_cast<long long>(session.negotiated_timeout().count()));
    session.add_listener([&](const zklock::SessionEvent& e) {
      std::printf("%7.3fs %s -> %s (generation %u, session 0x%llx)\n", since(),
                  std::string(zklock::to_string(e.previous)).c_str(),
                  std::string(zklock::to_string(e.state)).c_str(), e.generation,
                  static_cast<unsigned long long>(e.session_id));
      std::fflush(stdout);
    });
    std::this_thread::sleep_for(
        std::chrono::seconds(std::stoi(args::arg(argc, argv, "--seconds", "2"))));
    return 0;
  } catch (const zklock::Error& e) {
    std::cerr << e.what() << std::endl;
    return 1;
  }
}
