// guard_token: zklock::Guard, the RAII hold that also gives the fencing token and tells whether
// the lock is still surely held. A resource should accept a write only with a token at least as
// new as the newest it has seen (see docs/fencing.md and the fenced examples).
#include <zklock/zklock.h>

#include <iostream>

#include "example_args.h"

namespace args = zklock::examples;  // the examples' argument helpers

int main(int argc, char** argv) {
  try {
    zklock::SessionOptions options;
    options.connect = args::connect(argc, argv);
    zklock::Session session(options);
    zklock::Mutex mutex(session, args::arg(argc, argv, "--path", "/demo/guard"));

    zklock::Guard guard(mutex, std::chrono::seconds(30));  // timed: may end up not holding
    if (!guard) {
      std::cerr << "gave up after 30 s" << std::endl;
      return 75;
    }
    const zklock::FencingToken token = guard.fencing_token();
    std::cout << "holding " << guard.acquisition().node_path << "\n"
              << "  fencing token (czxid): " << token << "\n"
              << "  sequence number:       " << token.sequence() << "\n"
              << "  state:                 " << guard.state() << std::endl;
    // Before each irreversible step: is the lock still surely ours?
    if (!guard.valid()) {
      std::cerr << "lock is " << guard.state() << ": not writing" << std::endl;
      return 76;
    }
    std::cout << "write(data, token=" << token.to_string() << ")" << std::endl;
    return 0;
  } catch (const zklock::Error& e) {
    std::cerr << e.what() << std::endl;
    return 1;
  }
}
