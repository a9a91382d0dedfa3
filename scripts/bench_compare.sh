#!/bin/bash
# scripts/bench_compare.sh [BUILD_DIR]            runs everything, prints the markdown report
# scripts/bench_compare.sh --report RESULTS.jsonl   prints the report of an earlier run again
#
# zklock against Apache Curator, kazoo and the bare ZooKeeper operations, on the same workloads,
# against one throwaway standalone ZooKeeper started here (docs/benchmarks.md):
#
#   uncontended  one session, ITERS_U acquire+release cycles        raw-ops, raw-pipelined, curator, kazoo, zklock
#   contended    CLIENTS sessions, ITERS_C cycles each, one lock    curator, kazoo, zklock
#                (zklock also as zklock-nometrics: its figures off, to measure their cost)
#   queue        N waiters queued behind a held lock, then drained  zklock, N in QUEUE_SIZES
#                (QUEUE_ROUNDS times per run with the same sessions; the run reports the median)
#   many         one session holds MANY distinct locks              zklock
#   drain        N asynchronous waiters of one Mutex on ONE session  zklock, N in DRAIN_SIZES;
#                queue behind a hold and drain (time, CPU per waiter) curator and kazoo (N threads
#                                                                     of one client), N in
#                                                                     DRAIN_PEER_SIZES
#
# Every (impl, workload) runs REPS times, interleaved; the tables give medians. Around each run the
# server's mntr is read, so every impl gets the same server-side figures: packets received, watch
# notifications and fsyncs per acquisition (whole process: session setup included, as in
# shared/peers/run.sh).
#
# Needs: the zklock-bench binary (BUILD_DIR/bin, default ./build), java + javac and Debian's
# zookeeper and libcurator-recipes-java jars (/usr/share/java), gcc + libzookeeper-mt-dev, python3
# with kazoo (/usr/bin/python3). A peer whose tools are missing is skipped with a note. The peer
# programs are in tools/bench/peers/.
#
# Environment: REPS (3), ITERS_U (2000), CLIENTS (16), ITERS_C (60), QUEUE_SIZES ("16 64 256"),
#   QUEUE_ROUNDS (5), MANY (1000), MANY_SESSION_TIMEOUT_MS (40000), DRAIN_SIZES ("16 100 1000 10000"), DRAIN_PEER_SIZES
#   ("16 100 1000"), WORKLOADS ("uncontended contended queue many drain"), SYNC_MODES ("yes": the server's forceSync; "yes no" runs
#   everything twice), FORCESYNC (alias for a single SYNC_MODES value), RESULTS (JSON-lines output
#   file; default in a fresh temporary directory, kept), PLOTS (where scripts/bench_plots.py
#   writes the SVG plots; default beside the results; PLOTS=docs/plots renews docs/benchmarks.md's,
#   also with --report), ZK_CLASSPATH (server classpath),
#   JAVA_DIR (/usr/share/java).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
peers=$repo/tools/bench/peers
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3
server_pid=
note() { echo "bench_compare: $*" >&2; }
# fourlw, port_in_use, bench_classpaths, compile_curator, stop_pid
source "$repo/scripts/bench_lib.sh"

# ---- the throwaway server (the approach of shared/peers/zkserver.sh) ----
start_server() { # forceSync
  local sync=$1 dir=$work/zk
  rm -rf "$dir" && mkdir -p "$dir/data"
  for _ in $(seq 20); do port=$((23000 + RANDOM % 9000)); port_in_use "$port" || break; done
  cat >"$dir/zoo.cfg" <<CFG
tickTime=2000
minSessionTimeout=2000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=$sync
admin.enableServer=false
4lw.commands.whitelist=*
CFG
  setsid java -Xmx1g -cp "$ZK_CP" org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" >"$dir/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do
    fourlw "$port" ruok | grep -q imok && fourlw "$port" srvr | grep -q Mode && { hosts=127.0.0.1:$port; return 0; }
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  note "zookeeper did not start:"; tail -20 "$dir/server.log" >&2
  return 1
}
stop_server() {
  stop_pid "$server_pid"
  server_pid=
}
# "packets notifications fsyncs" from mntr (notifications: the sums of the per-event watcher counts).
counters() {
  fourlw "$port" mntr | awk '
    $1=="zk_packets_received"{p=$2}
    $1 ~ /^zk_sum_node_(created|deleted|changed|children)_watch_count$/ {w+=$2}
    $1=="zk_cnt_fsynctime"{f=$2}
    $1=="zk_sum_fsynctime"{t=$2}
    END{print p+0, w+0, f+0, t+0}'
}

# run IMPL MODE CLIENTS ITERS ACQUISITIONS command...: one JSON line into $results, with the
# server-side figures per acquisition and the run's context added.
run() {
  local impl=$1 mode=$2 c=$3 k=$4 acq=$5; shift 5
  local before after line
  read -r -a before <<<"$(counters)"
  line=$(timeout 900 "$@" 2>"$work/err" | tail -1)
  read -r -a after <<<"$(counters)"
  if [[ $line != \{* ]]; then
    line="{\"impl\": \"$impl\", \"mode\": \"$mode\", \"clients\": $c, \"iters\": $k, \"overlaps\": 0, \"error\": \"$(tail -1 "$work/err" | tr -d '"\\')\"}"
    note "$impl $mode $c x $k failed: $(tail -1 "$work/err")"
  fi
  # The after-read's own 4lw counts as one packet.
  local pk=$((after[0] - before[0] - 1)) wn=$((after[1] - before[1])) fs=$((after[2] - before[2]))
  local ft=$((after[3] - before[3]))
  "$PY" - "$line" "$pk" "$wn" "$fs" "$ft" "$acq" "$sync" "$rep" "$impl" >>"$results" <<'EOF'
import json, sys
line, pk, wn, fs, ft, acq, sync, rep, impl = sys.argv[1:]
d = json.loads(line)
d["impl"] = impl  # the run's name (zklock-nometrics is zklock-bench --no-metrics)
acq = float(acq)
d["server_packets_per_acq"] = round(int(pk) / acq, 3)
d["server_notifications_per_acq"] = round(int(wn) / acq, 3)
d["server_fsyncs_per_acq"] = round(int(fs) / acq, 3)
# The server's time in fsync (zk_sum_fsynctime, ms) per acquisition: with forceSync=yes, how much
# of each acquisition the disk alone takes - where throughput meets the disk's floor.
d["server_fsync_ms_per_acq"] = round(int(ft) / acq, 3)
d["forcesync"], d["rep"] = sync, int(rep)
print(json.dumps(d))
EOF
  echo "$line" | cut -c1-200 >&2
}

# ---- the report ----
report() { # RESULTS_FILE ZK_VERSION
"$PY" - "$1" "$2" <<'EOF'
import json, statistics, sys, os, platform, subprocess

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
zk_version = sys.argv[2]

def med(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None

def fmt(v, d=0):
    if v is None: return "-"
    return f"{v:,.{d}f}"

def sel(sync, impl, mode, clients=None):
    return [r for r in rows if r.get("forcesync") == sync and r["impl"] == impl and r["mode"] == mode
            and "error" not in r and (clients is None or r.get("clients") == clients)]

def cpu():
    try:
        for l in open("/proc/cpuinfo"):
            if l.startswith("model name"): return l.split(":", 1)[1].strip()
    except OSError: pass
    return platform.processor() or "?"
def mem():
    try:
        for l in open("/proc/meminfo"):
            if l.startswith("MemTotal"): return f"{int(l.split()[1]) / 1048576:.1f} GiB"
    except OSError: pass
    return "?"

print(f"Machine: {os.cpu_count()} CPUs ({cpu()}), {mem()} RAM, kernel {platform.release()}, "
      f"ZooKeeper {zk_version} standalone on loopback. Load average at the end: "
      f"{' '.join(open('/proc/loadavg').read().split()[:3])}.")
errors = [r for r in rows if "error" in r]
if errors:
    print(f"\n{len(errors)} run(s) failed: " + "; ".join(f"{r['impl']} {r['mode']}: {r['error']}" for r in errors))

for sync in dict.fromkeys(r["forcesync"] for r in rows):
    reps = max(r["rep"] for r in rows if r["forcesync"] == sync)
    print(f"\n### forceSync={sync}: medians of {reps} runs\n")
    print("| impl | workload | ops/s | acquire p50 µs | acquire p99 µs | handoff p50 µs | client CPU µs/acq | server packets/acq | watch notifications/acq | fsyncs/acq | fsync ms/acq | overlaps |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode in ("uncontended", "contended"):
        for impl in ("raw-ops", "raw-pipelined", "curator", "kazoo", "zklock"):
            rs = sel(sync, impl, mode)
            if not rs: continue
            c = rs[0]["clients"]; k = rs[0]["iters"]
            wl = f"{mode}, {c}×{k}" if mode == "contended" else f"{mode}, {k}"
            print(f"| {impl} | {wl} | {fmt(med(r['ops_per_s'] for r in rs))} | {fmt(med(r['p50_us'] for r in rs))} "
                  f"| {fmt(med(r['p99_us'] for r in rs))} | {fmt(med(r.get('handoff_p50_us') for r in rs))} "
                  f"| {fmt(med(r.get('cpu_us_per_acq') for r in rs))} "
                  f"| {fmt(med(r['server_packets_per_acq'] for r in rs), 2)} | {fmt(med(r['server_notifications_per_acq'] for r in rs), 2)} "
                  f"| {fmt(med(r['server_fsyncs_per_acq'] for r in rs), 2)} | {fmt(med(r.get('server_fsync_ms_per_acq') for r in rs), 2)} "
                  f"| {max(r['overlaps'] for r in rs)} |")
    # A zklock-only table: a row per client count measured in `mode`, row(n, rs) its cells.
    # Returns the client counts.
    def zklock_table(mode, title, header, row):
        ns = sorted({r["clients"] for r in rows if r["forcesync"] == sync and r["mode"] == mode and "error" not in r})
        if ns:
            print(f"\n{title}\n")
            print("| " + " | ".join(header) + " |")
            print("|" + "---:|" * len(header))
            for n in ns:
                print("| " + " | ".join(str(c) for c in row(n, sel(sync, "zklock", mode, n))) + " |")
        return ns
    def queue_row(q, rs):
        d = med(r["drain_seconds"] for r in rs)
        return [q, fmt(d, 3), fmt(d * 1000 / q if d else None, 2), fmt(med(r.get('handoff_p50_us') for r in rs)),
                fmt(med(r.get('wakeups_per_release') for r in rs), 3), fmt(med(r.get('watch_notifications_per_release') for r in rs), 3),
                fmt(med(r.get('server_requests_per_acq') for r in rs), 2),
                fmt(med(r.get('server_requests_per_acq_excl_idle') for r in rs), 2), max(r['overlaps'] for r in rs)]
    qs = zklock_table("queue", "zklock queue drain (N waiters queued on one lock, then released one after another):",
                      ["waiters", "drain s", "drain ms per waiter", "handoff p50 µs", "waiter wakeups/release",
                       "all watch notifications/release", "server requests/acq", "excl. idle heartbeats", "overlaps"],
                      queue_row)
    zklock_table("many", "zklock, many locks held by one session:",
                 ["locks", "acquisitions/s", "acquire p50 µs", "heap bytes/held lock", "RSS bytes/held lock",
                  "held at end", "server requests/acq", "unlock µs/lock", "server data bytes/lock"],
                 lambda m, rs: [m, fmt(med(r['acquisitions_per_s'] for r in rs)), fmt(med(r['p50_us'] for r in rs)),
                                fmt(med(r['bytes_per_lock'] for r in rs)), fmt(med(r['rss_bytes_per_lock'] for r in rs)),
                                min(r['held'] for r in rs), fmt(med(r.get('server_requests_per_acq') for r in rs), 2),
                                fmt(med(r.get('unlock_us_per_lock') for r in rs), 1),
                                fmt(med(r.get('server_data_bytes_per_lock') for r in rs), 1)])
    # The checkpoints of the largest many run: is the rate flat as the number held grows?
    many_runs = sel(sync, "zklock", "many")
    marks = sorted({int(k.rsplit("_", 1)[1]) for r in many_runs for k in r if k.startswith("acquisitions_per_s_at_")})
    if marks:
        print("\nzklock, many: at each number held, the rate of the last 1,000 acquisitions and the heap per held lock:\n")
        print("| held | acquisitions/s | heap bytes/held lock |")
        print("|---:|---:|---:|")
        for m in marks:
            rs = [r for r in many_runs if f"acquisitions_per_s_at_{m}" in r]
            print(f"| {m:,} | {fmt(med(r[f'acquisitions_per_s_at_{m}'] for r in rs))} | {fmt(med(r[f'bytes_per_lock_at_{m}'] for r in rs))} |")

    # The drain: one row per (impl, waiters).
    drains = sorted({(r["impl"], r["clients"]) for r in rows
                     if r["forcesync"] == sync and r["mode"] == "drain" and "error" not in r},
                    key=lambda x: (("zklock", "curator", "kazoo").index(x[0]) if x[0] in ("zklock", "curator", "kazoo") else 9, x[1]))
    if drains:
        print("\nDrain (N waiters of one lock on ONE session - zklock: asynchronous requests of one Mutex; "
              "Curator, kazoo: a thread each, one client - queue behind a hold, then drain):\n")
        print("| impl | waiters | queue build s | drain s | drain µs/waiter | client CPU µs/waiter (drain) | CPU µs/waiter (build) | Suspended | Lost | server packets/acq | overlaps |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for impl, n in drains:
            rs = sel(sync, impl, "drain", n)
            print(f"| {impl} | {n:,} | {fmt(med(r.get('queue_build_seconds') for r in rs), 2)} | {fmt(med(r.get('drain_seconds') for r in rs), 3)} "
                  f"| {fmt(med(r.get('drain_us_per_waiter') for r in rs))} | {fmt(med(r.get('cpu_us_per_waiter_drain') for r in rs))} "
                  f"| {fmt(med(r.get('cpu_us_per_waiter_build') for r in rs))} "
                  f"| {max((r.get('suspended', 0) for r in rs), default='-') if impl == 'zklock' else '-'} "
                  f"| {max((r.get('lost', 0) for r in rs), default='-') if impl == 'zklock' else '-'} "
                  f"| {fmt(med(r.get('server_packets_per_acq') for r in rs), 2)} | {max(r['overlaps'] for r in rs)} |")

    # Targets: ratios are taken within each repetition (runs close in time), then the median.
    def per_rep(f):
        out = []
        for rep in range(1, reps + 1):
            try:
                v = f(rep)
            except (IndexError, KeyError, TypeError, ZeroDivisionError):
                v = None
            if v is not None: out.append(v)
        return out
    def one(impl, mode, rep, key, clients=None):
        rs = [r for r in sel(sync, impl, mode, clients) if r["rep"] == rep]
        return rs[0][key]
    def show(name, vals, goal, ok, d=2):
        if not vals:
            print(f"| {name} | - | {goal} | not measured |"); return
        m = statistics.median(vals)
        print(f"| {name} | {m:+.{d}f} (runs: {', '.join(f'{v:+.{d}f}' for v in vals)}) | {goal} | {'met' if ok(m) else 'MISSED'} |"
              if d == 3 else
              f"| {name} | {m:.{d}f} (runs: {', '.join(f'{v:.{d}f}' for v in vals)}) | {goal} | {'met' if ok(m) else 'MISSED'} |")
    print(f"\nTargets (forceSync={sync}; ratio per repetition, median):\n")
    print("| target | value | goal | |")
    print("|---|---|---|---|")
    show("uncontended ops/s, zklock ÷ raw-pipelined", per_rep(lambda r: one("zklock","uncontended",r,"ops_per_s") / one("raw-pipelined","uncontended",r,"ops_per_s")), "≥ 0.90", lambda m: m >= 0.9)
    show("uncontended ops/s, zklock ÷ Curator", per_rep(lambda r: one("zklock","uncontended",r,"ops_per_s") / one("curator","uncontended",r,"ops_per_s")), "≥ 1.15", lambda m: m >= 1.15)
    # Issue 23's bar for the contended workload (it was 1.25 and "below Curator's" before).
    show("contended ops/s, zklock ÷ max(Curator, kazoo)", per_rep(lambda r: one("zklock","contended",r,"ops_per_s") / max(one("curator","contended",r,"ops_per_s"), one("kazoo","contended",r,"ops_per_s"))), "≥ 1.50", lambda m: m >= 1.5)
    show("contended handoff p50, zklock ÷ Curator", per_rep(lambda r: one("zklock","contended",r,"handoff_p50_us") / one("curator","contended",r,"handoff_p50_us")), "≤ 0.60", lambda m: m <= 0.6)
    show("contended handoff p50, zklock ÷ kazoo", per_rep(lambda r: one("zklock","contended",r,"handoff_p50_us") / one("kazoo","contended",r,"handoff_p50_us")), "< 1", lambda m: m < 1)
    for mode in ("uncontended", "contended"):
        show(f"{mode} ops/s, figures on ÷ off (SessionOptions::metrics)", per_rep(lambda r: one("zklock",mode,r,"ops_per_s") / one("zklock-nometrics",mode,r,"ops_per_s")), "≥ 0.97", lambda m: m >= 0.97)
        show(f"{mode} client CPU µs/acq, figures on ÷ off", per_rep(lambda r: one("zklock",mode,r,"cpu_us_per_acq") / one("zklock-nometrics",mode,r,"cpu_us_per_acq")), "≤ 1.03", lambda m: m <= 1.03)
        show(f"{mode} server packets/acq, figures on − off", per_rep(lambda r: one("zklock",mode,r,"server_packets_per_acq") - one("zklock-nometrics",mode,r,"server_packets_per_acq")), "≤ 0 (no extra request)", lambda m: m <= 0.05, 3)
    for mode in ("uncontended", "contended"):
        show(f"{mode} server packets/acq, zklock − Curator", per_rep(lambda r: one("zklock",mode,r,"server_packets_per_acq") - one("curator",mode,r,"server_packets_per_acq")), "≤ 0", lambda m: m <= 0, 3)
    cc = next((r["clients"] for r in rows if r["forcesync"] == sync and r["mode"] == "contended"), "?")
    show(f"wakeups/release, contended {cc} sessions (all notifications)", per_rep(lambda r: one("zklock","contended",r,"wakeups_per_release")), "≤ 1.05", lambda m: m <= 1.05)
    for q in qs:
        show(f"waiter wakeups/release, queue of {q}", per_rep(lambda r: one("zklock","queue",r,"wakeups_per_release",q)), "≤ 1.05", lambda m: m <= 1.05)
    show("uncontended client CPU/acq, zklock ÷ raw-pipelined", per_rep(lambda r: one("zklock","uncontended",r,"cpu_us_per_acq") / one("raw-pipelined","uncontended",r,"cpu_us_per_acq")), "≤ 1.10", lambda m: m <= 1.10)
    show("contended client CPU/acq, zklock ÷ Curator", per_rep(lambda r: one("zklock","contended",r,"cpu_us_per_acq") / one("curator","contended",r,"cpu_us_per_acq")), "≤ 0.40", lambda m: m <= 0.40)
    zn = sorted({n for impl, n in drains if impl == "zklock"})
    if len(zn) >= 2:
        lo, hi = zn[0], zn[-1]
        show(f"drain µs per waiter, {hi:,} ÷ {lo:,} waiters (one session)",
             per_rep(lambda r: one("zklock","drain",r,"drain_us_per_waiter",hi) / one("zklock","drain",r,"drain_us_per_waiter",lo)),
             "≤ 1.20", lambda m: m <= 1.20)
        show(f"drain: Suspended + Lost of the waiters' session, {hi:,} waiters",
             per_rep(lambda r: one("zklock","drain",r,"suspended",hi) + one("zklock","drain",r,"lost",hi)), "0", lambda m: m == 0, 0)
    many_runs = sel(sync, "zklock", "many")
    marks = sorted({int(k.rsplit("_", 1)[1]) for r in many_runs for k in r if k.startswith("bytes_per_lock_at_")})
    if marks:
        top = marks[-1]
        at = lambda key: [r[key] for r in many_runs if key in r]
        show(f"many: client heap per held lock at {top:,} held", at(f"bytes_per_lock_at_{top}"), "≤ 1024 bytes", lambda m: m <= 1024, 0)
        if len(marks) >= 2:
            # Against 10,000 held when there is a larger mark: the first thousand also warm the
            # server up (they run at a third of the rate, however many are held after them).
            base = marks[1] if len(marks) >= 3 else marks[0]
            show(f"many: acquisitions/s at {top:,} held ÷ at {base:,}",
                 [r[f"acquisitions_per_s_at_{top}"] / r[f"acquisitions_per_s_at_{base}"] for r in many_runs
                  if f"acquisitions_per_s_at_{top}" in r], "≥ 0.80 (flat)", lambda m: m >= 0.8)
    if len(qs) >= 2:
        lo, hi = qs[0], qs[-1]
        show(f"queue drain per waiter, {hi} ÷ {lo} (1.0 = linear)",
             per_rep(lambda r: (one("zklock","queue",r,"drain_seconds",hi) / hi) / (one("zklock","queue",r,"drain_seconds",lo) / lo)),
             "≈ 1 (≤ 1.5 counted as linear: noise allowance)", lambda m: m <= 1.5)
EOF
}

main() {
  local build=${1:-$repo/build}
  bin=$build/bin/zklock-bench
  [[ -x $bin ]] || { note "$bin not found (build target zklock-bench first)"; exit 2; }
  REPS=${REPS:-3} ITERS_U=${ITERS_U:-2000} CLIENTS=${CLIENTS:-16} ITERS_C=${ITERS_C:-60}
  QUEUE_SIZES=${QUEUE_SIZES:-"16 64 256"} QUEUE_ROUNDS=${QUEUE_ROUNDS:-5} MANY=${MANY:-1000}
  DRAIN_SIZES=${DRAIN_SIZES:-"16 100 1000 10000"} DRAIN_PEER_SIZES=${DRAIN_PEER_SIZES:-"16 100 1000"}
  SYNC_MODES=${SYNC_MODES:-${FORCESYNC:-yes}}
  WORKLOADS=${WORKLOADS:-"uncontended contended queue many drain"}
  bench_classpaths
  local curator_cp=$CURATOR_CP

  work=$(mktemp -d /tmp/zklock-bench-compare.XXXXXX)
  results=${RESULTS:-$work/results.jsonl}
  : >"$results"
  trap 'stop_server; rm -rf "$work/zk" "$work/cls" "$work/raw_floor" "$work/raw_pipelined"' EXIT
  trap 'exit 130' INT TERM

  # ---- the peers ----
  local have_curator=0 have_kazoo=0 have_raw=0
  if compile_curator "$work/cls" "$work/javac.log"; then
    have_curator=1
  else
    note "Curator skipped (javac or the Curator jars missing)"
  fi
  if "$PY" -c 'import kazoo' 2>/dev/null; then have_kazoo=1; else note "kazoo skipped ($PY has no kazoo)"; fi
  if gcc -O2 -DTHREADED -o "$work/raw_floor" "$peers/raw_floor.c" -lzookeeper_mt 2>"$work/gcc.log" &&
     gcc -O2 -DTHREADED -o "$work/raw_pipelined" "$peers/raw_pipelined.c" -lzookeeper_mt -lpthread 2>>"$work/gcc.log"; then
    have_raw=1
  else
    note "raw floors skipped (gcc or libzookeeper-mt-dev missing)"
  fi

  echo "# bench_compare: $(date -u +%FT%TZ), results in $results" >&2
  local zk_version=? q acq
  for sync in $SYNC_MODES; do
    start_server "$sync" || exit 1
    note "server on $hosts, forceSync=$sync, $(fourlw "$port" srvr | head -1)"
    for rep in $(seq 1 "$REPS"); do
      note "forceSync=$sync rep $rep/$REPS"
      if [[ " $WORKLOADS " == *" uncontended "* ]]; then
      if ((have_raw)); then
        run raw-ops uncontended 1 "$ITERS_U" "$ITERS_U" "$work/raw_floor" "$hosts" "$ITERS_U"
        run raw-pipelined uncontended 1 "$ITERS_U" "$ITERS_U" "$work/raw_pipelined" "$hosts" "$ITERS_U"
      fi
      ((have_curator)) && run curator uncontended 1 "$ITERS_U" "$ITERS_U" java -cp "$work/cls:$curator_cp" CuratorBench "$hosts" uncontended 1 "$ITERS_U"
      ((have_kazoo)) && run kazoo uncontended 1 "$ITERS_U" "$ITERS_U" "$PY" "$peers/kazoo_bench.py" "$hosts" uncontended 1 "$ITERS_U"
      run zklock uncontended 1 "$ITERS_U" "$ITERS_U" "$bin" --connect "$hosts" --mode uncontended --clients 1 --iterations "$ITERS_U"
      run zklock-nometrics uncontended 1 "$ITERS_U" "$ITERS_U" "$bin" --connect "$hosts" --mode uncontended --clients 1 --iterations "$ITERS_U" --no-metrics
      fi
      if [[ " $WORKLOADS " == *" contended "* ]]; then
      acq=$((CLIENTS * ITERS_C))
      ((have_curator)) && run curator contended "$CLIENTS" "$ITERS_C" "$acq" java -cp "$work/cls:$curator_cp" CuratorBench "$hosts" contended "$CLIENTS" "$ITERS_C"
      ((have_kazoo)) && run kazoo contended "$CLIENTS" "$ITERS_C" "$acq" "$PY" "$peers/kazoo_bench.py" "$hosts" contended "$CLIENTS" "$ITERS_C"
      run zklock contended "$CLIENTS" "$ITERS_C" "$acq" "$bin" --connect "$hosts" --mode contended --clients "$CLIENTS" --iterations "$ITERS_C"
      run zklock-nometrics contended "$CLIENTS" "$ITERS_C" "$acq" "$bin" --connect "$hosts" --mode contended --clients "$CLIENTS" --iterations "$ITERS_C" --no-metrics
      fi
      if [[ " $WORKLOADS " == *" queue "* ]]; then
      for q in $QUEUE_SIZES; do
        run zklock queue "$q" "$QUEUE_ROUNDS" $((q * QUEUE_ROUNDS)) "$bin" --connect "$hosts" --mode queue --clients "$q" --iterations "$QUEUE_ROUNDS"
      done
      fi
      if [[ " $WORKLOADS " == *" many "* ]]; then
      # A 40 s session (the server's maximum): releasing 100,000 locks at once puts 100,000
      # deletes ahead of the session's heartbeat on the server, more than 10 s of work here, and
      # a 10 s session is then rightly declared Lost (docs/benchmarks.md, "Scale and cost").
      run zklock many "$MANY" 1 "$MANY" "$bin" --connect "$hosts" --mode many --clients "$MANY" \
        --session-timeout-ms "${MANY_SESSION_TIMEOUT_MS:-40000}"
      fi
      if [[ " $WORKLOADS " == *" drain "* ]]; then
      for q in $DRAIN_SIZES; do
        run zklock drain "$q" 1 "$q" "$bin" --connect "$hosts" --mode drain --clients "$q"
      done
      for q in $DRAIN_PEER_SIZES; do
        ((have_curator)) && run curator drain "$q" 1 "$q" java -Xss256k -cp "$work/cls:$curator_cp" CuratorBench "$hosts" drain "$q" 1
        ((have_kazoo)) && run kazoo drain "$q" 1 "$q" "$PY" "$peers/kazoo_bench.py" "$hosts" drain "$q" 1
      done
      fi
    done
    zk_version=$(fourlw "$port" mntr | awk '$1=="zk_version"{print $2}')
    stop_server
  done

  report "$results" "$zk_version"
  plots "$results" "${PLOTS:-$work/plots}"
  echo "# raw results: $results" >&2
}

# plots RESULTS DIR: the SVG plots of docs/benchmarks.md (scripts/bench_plots.py), if matplotlib
# is there (Debian's python3-matplotlib).
plots() {
  if "$PY" -c 'import matplotlib' 2>/dev/null; then
    "$PY" "$repo/scripts/bench_plots.py" "$1" "$2" >&2
  else
    note "plots skipped: $PY has no matplotlib (apt-get install python3-matplotlib)"
  fi
}

# Everything above only defines functions, and bash reads a script as it runs it: the exit on the
# same line as main means nothing after it is read, so editing the script during a run cannot
# derail it.
if [[ ${1:-} == --report ]]; then
  [[ -f ${2:-} ]] || { note "usage: $0 --report RESULTS.jsonl [ZK_VERSION]"; exit 2; }
  report "$2" "${3:-?}"
  [[ -n ${PLOTS:-} ]] && plots "$2" "$PLOTS"
  exit 0
fi
main "$@"; exit
