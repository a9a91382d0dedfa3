#!/usr/bin/python3
"""Peer benchmark: kazoo's Lock recipe, same workload as zklock-bench.

Derived from the shared peer set (shared/peers/kazoo_bench.py): identical workload and keys, plus
handoff_p50_us / handoff_p99_us / handoffs measured exactly as zklock-bench does (the releasing
thread stores the time just before release(); a waiter whose acquire() call started before that
time counts acquire-return minus that time).

usage: kazoo_bench.py HOSTS MODE CLIENTS ITERS
  MODE uncontended: one session, ITERS acquire+release cycles
  MODE contended:   CLIENTS sessions (threads), each ITERS cycles on one lock
  MODE drain:       CLIENTS threads of ONE KazooClient, a Lock each on one path, queue behind the
                    main thread's hold and drain (as zklock-bench's drain mode)
Prints one JSON line: impl, mode, clients, iters, seconds, ops_per_s, p50_us, p99_us, overlaps,
handoff_p50_us, handoff_p99_us, handoffs, cpu_us_per_acq (the process's CPU time over the timed
part, per acquisition); drain: drain_seconds, drain_us_per_waiter, cpu_us_per_waiter_drain,
queue_build_seconds, cpu_us_per_waiter_build.
"""
import json, sys, threading, time, uuid
from kazoo.client import KazooClient

hosts, mode, clients, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def drain(n):
    path = "/bench/kazoo-drain-" + uuid.uuid4().hex[:8]
    zk = KazooClient(hosts=hosts, timeout=10)
    zk.start()
    zk.ensure_path(path)
    holder = zk.Lock(path, "holder")
    holder.acquire()
    inside, overlaps, failures = [0], [0], []
    guard = threading.Lock()

    def waiter(i):
        try:
            lock = zk.Lock(path, "w%d" % i)
            lock.acquire()
            with guard:
                inside[0] += 1
                if inside[0] != 1:
                    overlaps[0] += 1
                inside[0] -= 1
            lock.release()
        except Exception as e:  # reported below: the run fails
            failures.append(repr(e))

    build0, cpu_build0 = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=waiter, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    while zk.exists(path).numChildren < n + 1:
        time.sleep(0.02)
    build, cpu_build = time.perf_counter() - build0, time.process_time() - cpu_build0
    cpu0, t0 = time.process_time(), time.perf_counter()
    holder.release()
    for t in threads:
        t.join()
    secs, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if failures:
        raise SystemExit("kazoo drain: %d waiters failed: %s" % (len(failures), failures[0]))
    print(json.dumps({"impl": "kazoo", "mode": "drain", "clients": n, "iters": 1,
                      "seconds": round(secs, 4), "ops_per_s": round(n / secs, 1),
                      "overlaps": overlaps[0], "queue_build_seconds": round(build, 3),
                      "drain_seconds": round(secs, 3),
                      "drain_us_per_waiter": round(secs * 1e6 / n, 1),
                      "cpu_us_per_waiter_drain": round(cpu * 1e6 / n, 1),
                      "cpu_us_per_waiter_build": round(cpu_build * 1e6 / n, 1)}))
    zk.delete(path, recursive=True)
    zk.stop()


if mode == "drain":
    drain(clients)
    sys.exit(0)
path = "/bench/kazoo-" + uuid.uuid4().hex[:8]
n = 1 if mode == "uncontended" else clients
zks = []
for _ in range(n):
    zk = KazooClient(hosts=hosts, timeout=10)
    zk.start()
    zks.append(zk)
zks[0].ensure_path(path)
inside = [0]
overlaps = [0]
last_unlock = [None]
lat = []
hand = []
lat_lock = threading.Lock()
start_gate = threading.Barrier(n + 1)

def worker(zk, ident):
    lock = zk.Lock(path, ident)
    mine = []
    my_hand = []
    start_gate.wait()
    for _ in range(iters):
        t0 = time.perf_counter()
        lock.acquire()
        t1 = time.perf_counter()
        mine.append(t1 - t0)
        rel = last_unlock[0]
        if rel is not None and t0 < rel:
            my_hand.append(t1 - rel)
        inside[0] += 1
        if inside[0] != 1:
            overlaps[0] += 1
        inside[0] -= 1
        last_unlock[0] = time.perf_counter()
        lock.release()
    with lat_lock:
        lat.extend(mine)
        hand.extend(my_hand)

threads = [threading.Thread(target=worker, args=(zks[i], "c%d" % i)) for i in range(n)]
for t in threads:
    t.start()
cpu0 = time.process_time()
start_gate.wait()
t0 = time.perf_counter()
for t in threads:
    t.join()
secs = time.perf_counter() - t0
cpu = time.process_time() - cpu0
lat.sort()
hand.sort()
total = n * iters
print(json.dumps({"impl": "kazoo", "mode": mode, "clients": n, "iters": iters, "seconds": round(secs, 4),
                  "ops_per_s": round(total / secs, 1),
                  "p50_us": round(lat[len(lat) // 2] * 1e6, 1), "p99_us": round(lat[int(len(lat) * 0.99)] * 1e6, 1),
                  "overlaps": overlaps[0],
                  "handoff_p50_us": round(hand[len(hand) // 2] * 1e6, 1) if hand else None,
                  "handoff_p99_us": round(hand[int(len(hand) * 0.99)] * 1e6, 1) if hand else None,
                  "handoffs": len(hand), "cpu_us_per_acq": round(cpu * 1e6 / total, 1)}))
for zk in zks:
    zk.stop()
