// examples/fenced/example_options.h: command-line options shared by the two fencing examples, and
// the pause between acquiring the lock and writing that the stale-holder demonstration needs.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

namespace zklock::examples {

// Exit codes (the tests rely on them).
constexpr int kExitOk = 0;
constexpr int kExitError = 1;    // ZooKeeper, SQLite or other failure
constexpr int kExitUsage = 2;    // bad command line
constexpr int kExitRefused = 3;  // the resource refused our write: we were a stale holder

struct CommonOptions {
  std::string connect = "127.0.0.1:2181";
  std::string path;      // lock path
  long iterations = 10;  // increments, one lock hold each
  long session_timeout_ms = 10'000;
  long pause_before_write_ms = 0;
  std::string hold_until;  // wait for this file to exist before writing
};

// One line to stdout, flushed at once: the tests read these lines from a log file while the
// process runs (and freeze it once it prints "waiting for <file>").
inline void say(const std::string& line) { std::cout << line << std::endl; }

// Parses "--name value" and "--name=value". `extra` holds the example's own options with their
// defaults (filled in on return). Throws std::invalid_argument with a message for bad input.
inline CommonOptions parse_options(int argc, char** argv,
                                   std::map<std::string, std::string>& extra) {
  CommonOptions o;
  auto number = [](const std::string& name, const std::string& text, long min) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v < min) {
      throw std::invalid_argument("--" + name + ": expected an integer >= " + std::to_string(min) +
                                  ", got \"" + text + "\"");
    }
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument \"" + arg + "\"");
    std::string name = arg.substr(2);
    std::string value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else {
      if (i + 1 >= argc) throw std::invalid_argument("--" + name + " needs a value");
      value = argv[++i];
    }
    if (name == "connect")
      o.connect = value;
    else if (name == "path")
      o.path = value;
    else if (name == "iterations")
      o.iterations = number(name, value, 0);
    else if (name == "session-timeout")
      o.session_timeout_ms = number(name, value, 1);
    else if (name == "pause-before-write-ms")
      o.pause_before_write_ms = number(name, value, 0);
    else if (name == "hold-until")
      o.hold_until = value;
    else if (extra.count(name))
      extra[name] = value;
    else
      throw std::invalid_argument("unknown option --" + name);
  }
  return o;
}

// The moment between "I hold the lock" and "I write": where a real holder can be paused by a GC,
// swapping, a VM migration or SIGSTOP without noticing. --pause-before-write-ms sleeps here (press
// Ctrl-Z in it to try the story by hand); --hold-until waits here until a file exists, which lets
// a test freeze the process at exactly this point and decide when it goes on.
inline void pause_before_write(const CommonOptions& o) {
  if (o.pause_before_write_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.pause_before_write_ms));
  }
  if (!o.hold_until.empty()) {
    // Tests freeze the process once they see this line: from here on it only polls for the file.
    say("waiting for " + o.hold_until);
    while (access(o.hold_until.c_str(), F_OK) != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

// True when the command line asks for help (then the example prints its usage and exits 0).
inline bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

inline const char* common_usage() {
  return "  --connect HOSTS              ZooKeeper connect string (default 127.0.0.1:2181)\n"
         "  --iterations N               increments to make, one lock hold each (default 10)\n"
         "  --session-timeout MS         requested session timeout (default 10000)\n"
         "  --pause-before-write-ms MS   sleep between acquiring and writing (try Ctrl-Z in it)\n"
         "  --hold-until FILE            after acquiring, wait until FILE exists, then write\n"
         "exit status: 0 done, 1 error, 2 bad usage, 3 write refused: we were a stale holder\n";
}

/// The examples' main(): --help, option parsing (a usage error exits 2 with the usage text),
/// `path` defaulted, then `run`, whose exceptions exit 1 with a message.
inline int example_main(
    int argc, char** argv, const std::string& program, const std::string& default_path,
    std::map<std::string, std::string> extra, const std::string& extra_usage,
    const std::function<int(CommonOptions&, std::map<std::string, std::string>&)>& run) {
  const std::string usage = "usage: " + program + " [options]\n" + extra_usage +
                            "  --path PATH                  lock path (default " + default_path +
                            ")\n" + common_usage();
  if (wants_help(argc, argv)) {
    std::cout << usage;
    return kExitOk;
  }
  CommonOptions o;
  try {
    o = parse_options(argc, argv, extra);
    if (o.path.empty()) o.path = default_path;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n" << usage;
    return kExitUsage;
  }
  try {
    return run(o, extra);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << std::endl;
    return kExitError;
  }
}

}  // namespace zklock::examples
