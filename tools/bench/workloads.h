// tools/bench/workloads.h: zklock-bench's workloads. Each fills one JSON line and returns 0,
// or throws (std::exception) when the run could not be completed.
#pragma once

#include <string>

#include "bench_util.h"

namespace zklock::bench {

struct BenchOptions {
  std::string connect = "127.0.0.1:2181";
  std::string mode = "uncontended";
  int clients = 0;     // 0: the mode's default
  int iterations = 0;  // 0: the mode's default
  std::string path;    // empty: /bench/zklock-<pid>-<random>
  int session_timeout_ms = 10000;
  int heartbeat_ms = 0;  // --heartbeat-ms: SessionOptions::heartbeat_interval (0: zklock's, T/20)
  bool verbose = false;  // let the ZooKeeper client's warnings through to stderr
  bool cleanup = true;   // remove the znodes the run created
  bool count_requests = false;  // count zklock's requests by operation (through a FaultHook)
  bool metrics = true;          // --no-metrics: SessionOptions::metrics off (the figures' cost)
  // The fleet mode's (fleet_workload.cpp):
  int locks = 0;             // --locks: lock paths shared by the fleet (0: the mode's default)
  int seconds = 0;           // --seconds: how long the sessions loop (0: the mode's default)
  std::string gate_dir;      // --gate: ready-<pid> written there, then wait for <dir>/go
  std::string latency_file;  // --latency-file: every wait, in microseconds, one per line
};

// uncontended: one session, `iterations` lock()+unlock() cycles on one lock.
void run_uncontended(const BenchOptions& o, JsonLine& out);
// contended: `clients` sessions, a thread each, `iterations` cycles each on one lock.
void run_contended(const BenchOptions& o, JsonLine& out);
// queue: `clients` waiters queue behind a lock held by the main thread, which then releases it;
// each waiter acquires once and releases, and the queue drains. `iterations` rounds (default 1)
// with the same sessions; drain_seconds is the median round.
void run_queue(const BenchOptions& o, JsonLine& out);
// shared: a SharedMutex; who a writer's release and a reader group's releases wake (`clients`
// readers between two writers), then `clients` readers taking the shared lock `iterations` times
// each at once (shared_workload.cpp).
void run_shared(const BenchOptions& o, JsonLine& out);
// many: one session acquires `clients` distinct locks and holds them all at once.
void run_many(const BenchOptions& o, JsonLine& out);
// async: `clients` waiters (default 500) on one session queue on one lock and drain, first as
// asynchronous requests, then as blocking lock() calls on a thread each; acquisitions per second,
// threads and resident memory per waiting acquisition of each form.
void run_async(const BenchOptions& o, JsonLine& out);
// drain: `clients` asynchronous waiters (default 10000) of one Mutex on one session queue behind
// a hold and drain; time and CPU per waiter, the session's state changes and heartbeats meanwhile
// (drain_workload.cpp).
void run_drain(const BenchOptions& o, JsonLine& out);
// fleet: one process of a fleet. `clients` sessions (default 10), a thread each, loop for
// `seconds` (default 10) taking and releasing a lock picked at random, each time, among `locks`
// (default 20) paths under --path, which every process of the fleet is given
// (fleet_workload.cpp; scripts/bench_fleet.sh runs the fleet).
void run_fleet(const BenchOptions& o, JsonLine& out);

}  // namespace zklock::bench
