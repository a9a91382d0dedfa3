// zklock-bench: lock workloads on zklock, printing one JSON line per run (see docs/benchmarks.md).
//
//   zklock-bench --connect HOSTS --mode uncontended|contended|queue|shared|many|async|drain|fleet
//                --clients N --iterations K
//                [--json] [--path P] [--session-timeout-ms T] [--heartbeat-ms H]
//                [--count-requests] [--no-metrics]
//                [--no-cleanup] [--verbose] [--locks L] [--seconds D] [--gate DIR]
//                [--latency-file F]
//
// The output line has the keys of the peer programs (impl, mode, clients, iters, seconds,
// ops_per_s, p50_us, p99_us, overlaps) plus the mode's own figures. Exit status: 0 when the line
// was printed, 1 when the run failed (the reason on stderr), 2 for bad arguments.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "workloads.h"

namespace {

constexpr const char* kUsage =
    "usage: zklock-bench --connect HOSTS\n"
    "                    --mode uncontended|contended|queue|shared|many|async|drain|fleet\n"
    "                    [--clients N] [--iterations K] [--json] [--path P]\n"
    "                    [--session-timeout-ms T] [--heartbeat-ms H] [--count-requests]\n"
    "                    [--no-metrics]\n"
    "                    [--no-cleanup] [--verbose]\n"
    "                    [--locks L] [--seconds D] [--gate DIR] [--latency-file F]  (fleet)\n"
    "  uncontended  one session, K lock+unlock cycles (K default 2000)\n"
    "  contended    N sessions, a thread each, K cycles each on one lock (N 16, K 60)\n"
    "  queue        N waiters queue behind a held lock, which is then released; the queue drains\n"
    "               (N 16); K rounds (default 1), drain_seconds is their median\n"
    "  shared       SharedMutex: a writer releases to N queued readers (a second writer behind\n"
    "               them), who then release to it: who woke, per release (N 8; 4 rounds); then\n"
    "               N sessions take the shared lock K times each, all at once (K 50)\n"
    "  many         one session acquires and holds N distinct locks (N 1000)\n"
    "  async        N waiters on one session queue and drain, as async_lock requests and as\n"
    "               blocking lock() calls on a thread each (N 500)\n"
    "  drain        N asynchronous waiters of one Mutex on one session queue and drain: time\n"
    "               and CPU per waiter, the session's Suspended/Lost and heartbeats (N 10000)\n"
    "  fleet        one process of a fleet: N sessions, a thread each, loop for D seconds (10)\n"
    "               on a lock picked at random among L (20) under --path, shared by every\n"
    "               process given that --path (N 10); --gate DIR: write DIR/ready-<pid> once\n"
    "               connected, start when DIR/go exists; --latency-file F: every wait (us)\n"
    "Prints one JSON line on stdout (--json is the default and only format).\n"
    "--count-requests adds req_<operation>_per_acq: zklock's requests by kind, counted "
    "client-side.\n"
    "--heartbeat-ms sets the sessions' heartbeat interval (SessionOptions::heartbeat_interval;\n"
    "default T/20), to measure what the idle sessions' heartbeats cost the servers.\n"
    "--no-metrics turns the sessions' lock figures off (SessionOptions::metrics), to measure "
    "their cost.\n";

bool parse_int(const char* text, int& out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0 || v > 1000000) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  zklock::bench::BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_inline = false;
    if (arg.rfind("--", 0) == 0) {
      const auto eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline = true;
      }
    }
    auto take = [&](std::string& into) {
      if (has_inline) {
        into = value;
        return true;
      }
      if (i + 1 >= argc) return false;
      into = argv[++i];
      return true;
    };
    std::string v;
    bool ok = true;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--json") {
    } else if (arg == "--verbose") {
      o.verbose = true;
    } else if (arg == "--count-requests") {
      o.count_requests = true;
    } else if (arg == "--no-metrics") {
      o.metrics = false;
    } else if (arg == "--no-cleanup") {
      o.cleanup = false;
    } else if (arg == "--connect") {
      ok = take(o.connect) && !o.connect.empty();
    } else if (arg == "--mode") {
      ok = take(o.mode);
    } else if (arg == "--path") {
      ok = take(o.path) && !o.path.empty() && o.path.front() == '/';
    } else if (arg == "--clients") {
      ok = take(v) && parse_int(v.c_str(), o.clients);
    } else if (arg == "--iterations") {
      ok = take(v) && parse_int(v.c_str(), o.iterations);
    } else if (arg == "--locks") {
      ok = take(v) && parse_int(v.c_str(), o.locks);
    } else if (arg == "--seconds") {
      ok = take(v) && parse_int(v.c_str(), o.seconds);
    } else if (arg == "--gate") {
      ok = take(o.gate_dir) && !o.gate_dir.empty();
    } else if (arg == "--latency-file") {
      ok = take(o.latency_file) && !o.latency_file.empty();
    } else if (arg == "--heartbeat-ms") {
      ok = take(v) && parse_int(v.c_str(), o.heartbeat_ms);
    } else if (arg == "--session-timeout-ms") {
      ok = take(v) && parse_int(v.c_str(), o.session_timeout_ms);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "zklock-bench: bad argument '%s'\n%s", argv[i], kUsage);
      return 2;
    }
  }
  zklock::bench::JsonLine out;
  try {
    if (o.mode == "uncontended") {
      zklock::bench::run_uncontended(o, out);
    } else if (o.mode == "contended") {
      zklock::bench::run_contended(o, out);
    } else if (o.mode == "queue") {
      zklock::bench::run_queue(o, out);
    } else if (o.mode == "shared") {
      zklock::bench::run_shared(o, out);
    } else if (o.mode == "async") {
      zklock::bench::run_async(o, out);
    } else if (o.mode == "many") {
      zklock::bench::run_many(o, out);
    } else if (o.mode == "drain") {
      zklock::bench::run_drain(o, out);
    } else if (o.mode == "fleet") {
      zklock::bench::run_fleet(o, out);
    } else {
      std::fprintf(stderr, "zklock-bench: unknown mode '%s'\n%s", o.mode.c_str(), kUsage);
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zklock-bench: %s run failed: %s\n", o.mode.c_str(), e.what());
    return 1;
  }
  std::printf("%s\n", out.text().c_str());
  std::fflush(stdout);
  return 0;
}
