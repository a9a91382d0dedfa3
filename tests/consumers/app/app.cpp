// The consumer program of tests/consumers: an application that uses zklock as any other would,
// built against an installed zklock (find_package, pkg-config), an added one (add_subdirectory) or
// a fetched one (FetchContent) by consumer_test.cpp.
//
//   app HOST:PORT LOCK_PATH
//
// Prints the version it was compiled against, shows that a typed error thrown inside the library
// is caught as its own type here (RTTI across a shared library's boundary), then takes the lock
// at LOCK_PATH on the server, prints its fencing token and releases it. Exit 0 only if all of
// that worked.
#include <zklock/zklock.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: app HOST:PORT LOCK_PATH\n";
    return 64;
  }
  std::cout << "compiled against zklock " << ZKLOCK_VERSION_STRING << std::endl;
  try {
    zklock::SessionOptions no_port;
    no_port.connect = "127.0.0.1";
    zklock::Session session(no_port);
    std::cerr << "a connect string without a port was accepted" << std::endl;
    return 1;
  } catch (const zklock::InvalidArgumentError& e) {
    std::cout << "typed error: " << e.code().category().name() << " " << e.code().value()
              << std::endl;
  }
  try {
    zklock::SessionOptions options;
    options.connect = argv[1];
    zklock::Session session(options);
    zklock::Mutex mutex(session, argv[2]);
    {
      zklock::Guard guard(mutex);
      std::cout << "held " << argv[2] << " with token " << guard.fencing_token() << std::endl;
    }
    std::cout << "released: " << mutex.state() << std::endl;
    return mutex.state() == zklock::LockState::kNotHeld ? 0 : 1;
  } catch (const zklock::Error& e) {
    std::cerr << "zklock error: " << e.what() << std::endl;
    return 1;
  }
}
