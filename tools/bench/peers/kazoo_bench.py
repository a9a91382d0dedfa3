#!/usr/bin/python3
"""Peer benchmark: kazoo's Lock recipe, same workload as zklock-bench.

Derived from the shared peer set (shared/peers/kazoo_bench.py): identical workload and keys, plus
handoff_p50_us / handoff_p99_us / handoffs measured exactly as zklock-bench does (the releasing
thread stores the time just before release(); a waiter whose acquire() call started before that
time counts acquire-return minus that time).

usage: kazoo_bench.py HOSTS MODE CLIENTS ITERS
  MODE uncontended: one session, ITERS acquire+release cycles
  MODE contended:   CLIENTS sessions (threads), each ITERS cycles on one lock
Prints one JSON line: impl, mode, clients, iters, seconds, ops_per_s, p50_us, p99_us, overlaps,
handoff_p50_us, handoff_p99_us, handoffs.
"""
import json, sys, threading, time, uuid
from kazoo.client import KazooClient

hosts, mode, clients, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
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
start_gate.wait()
t0 = time.perf_counter()
for t in threads:
    t.join()
secs = time.perf_counter() - t0
lat.sort()
hand.sort()
total = n * iters
print(json.dumps({"impl": "kazoo", "mode": mode, "clients": n, "iters": iters, "seconds": round(secs, 4),
                  "ops_per_s": round(total / secs, 1),
                  "p50_us": round(lat[len(lat) // 2] * 1e6, 1), "p99_us": round(lat[int(len(lat) * 0.99)] * 1e6, 1),
                  "overlaps": overlaps[0],
                  "handoff_p50_us": round(hand[len(hand) // 2] * 1e6, 1) if hand else None,
                  "handoff_p99_us": round(hand[int(len(hand) * 0.99)] * 1e6, 1) if hand else None,
                  "handoffs": len(hand)}))
for zk in zks:
    zk.stop()
