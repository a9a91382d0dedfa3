#!/bin/bash
# scripts/bench_fleet.sh [BUILD_DIR]             runs the fleet sweep, prints the markdown report
# scripts/bench_fleet.sh --report RESULTS.jsonl   prints the report of an earlier run again
#
# A fleet against a three-node ensemble started here on loopback (docs/benchmarks-fleet.md): P
# processes, each with S sessions (a thread each), loop for DURATION seconds taking and releasing
# a lock picked at random, each time, among LOCKS lock paths that all of them share - zklock-bench
# --mode fleet, and the Curator peer's fleet mode (tools/bench/peers/CuratorBench.java: a
# CuratorFramework per session, InterProcessMutex). Each fleet shape of PROCESSES runs REPS times,
# the implementations interleaved (their order alternating between repetitions); the report gives
# medians.
#
# The processes of a run connect first, each writes a ready file, and the script starts them
# together (a go file) once all are ready, so that their windows coincide; meanwhile (IDLE
# seconds) the servers' packets count what the idle sessions send. zklock's processes count their
# requests by kind (--count-requests). The servers' figures
# cover the window from the go to half a second before the processes' loops end (a steady state,
# without the last acquisitions' tail and the sessions' close): each server's mntr (packets
# received and sent; average and maximum request latency, srst at the go; the leader's quorum-ack
# latency; fsyncs), each server JVM's CPU time (/proc/PID/stat) and the time its threads were
# runnable but waiting for a CPU (/proc/PID/task/*/schedstat), the same for the client processes,
# and the machine's busy time (/proc/stat) - the rest of it is other users' processes. One JSON
# line per run goes to RESULTS: the processes' lines added up (acquisitions/s: the sum of each
# process's rate; the p50/p99 wait over every wait of every process, from their --latency-file;
# client CPU per acquisition: their CPU over their acquisitions) and the servers' figures (per
# acquisition: over the processes' acquisitions scaled to the window).
#
# The ensemble: tickTime=2000, initLimit=10, syncLimit=5, forceSync=FORCESYNC, each node a JVM
# with -Xmx SERVER_HEAP, on this machine - so are the clients: the report shows who used the CPU.
#
# Environment (defaults):
#   PROCESSES  ("1x1 1x3 1 5 10 20") the fleet shapes: P (P processes of SESSIONS sessions) or PxS
#              (P processes of S sessions: the small ones show the rate still growing)
#   SESSIONS   (10) sessions per process        LOCKS (20) lock paths shared by the fleet
#   DURATION   (8) seconds per run              REPS  (3)  repetitions of the sweep
#   IMPLS      ("zklock curator"; also zklock-slowhb: zklock with --heartbeat-ms SLOW_HEARTBEAT_MS,
#              default 3333 - the Java client's ping interval at T = 10 s - instead of T/20)
#   FORCESYNC  (yes) the servers' forceSync
#   IDLE       (4: longer than Curator's ping interval, T/3) seconds the connected processes stay idle at the gate before the go: the
#              sessions' own traffic (heartbeats), in packets per second per session
#   WARMUP     (15) seconds of a discarded 2 x SESSIONS run of each implementation before the
#              sweep, so that the servers' JIT is warm (0: none)
#   CLIENT_GRACE (120) seconds a client process may take past its loop's end before it is stopped
#   SERVER_HEAP (1g) each server's -Xmx          CLIENT_HEAP (256m) each Curator JVM's -Xmx
#   RESULTS    JSON-lines output (default: in a fresh temporary directory, kept)
#   ZK_CLASSPATH, JAVA_DIR (/usr/share/java) as in bench_compare.sh
# With the defaults a run takes about 10 minutes on a 2-core machine (a third of it the Curator
# JVMs starting). Every server and client process is stopped on exit, whatever the exit.
# Needs: the zklock-bench binary (BUILD_DIR/bin, default ./build), java (+ javac and Debian's
# Curator jars for the Curator peer, skipped with a note when missing), python3, bc.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3
note() { echo "bench_fleet: $*" >&2; }
# fourlw, port_in_use, bench_classpaths, compile_curator, stop_pid
source "$repo/scripts/bench_lib.sh"

server_pids=()
client_pids=()
client_ports=()

# ---- the ensemble ----
start_ensemble() {
  local servers="" i p
  local -a ports=()
  for _ in $(seq 20); do
    ports=()
    local base=$((23000 + RANDOM % 9000)) taken=0
    for i in $(seq 0 8); do
      port_in_use $((base + i)) && taken=1
      ports+=($((base + i)))
    done
    ((taken)) || break
  done
  for i in 0 1 2; do
    servers+="server.$((i + 1))=127.0.0.1:${ports[$((3 + i))]}:${ports[$((6 + i))]}"$'\n'
    client_ports[i]=${ports[$i]}
  done
  for i in 0 1 2; do
    local dir=$work/zk$((i + 1))
    rm -rf "$dir" && mkdir -p "$dir/data"
    echo $((i + 1)) >"$dir/data/myid"
    cat >"$dir/zoo.cfg" <<CFG
tickTime=2000
initLimit=10
syncLimit=5
minSessionTimeout=4000
dataDir=$dir/data
clientPort=${client_ports[$i]}
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=$FORCESYNC
admin.enableServer=false
4lw.commands.whitelist=*
standaloneEnabled=false
$servers
CFG
    setsid java -Xmx"$SERVER_HEAP" -cp "$ZK_CP" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" \
      >"$dir/server.log" 2>&1 &
    server_pids[i]=$!
  done
  hosts=127.0.0.1:${client_ports[0]},127.0.0.1:${client_ports[1]},127.0.0.1:${client_ports[2]}
  # Serving when every node answers srvr with a Mode and one of them leads.
  for _ in $(seq 600); do
    local modes
    modes=$(for p in "${client_ports[@]}"; do fourlw "$p" srvr | awk '/^Mode:/{print $2}'; done | sort | tr '\n' ' ')
    [[ $modes == "follower follower leader " ]] && return 0
    for p in "${server_pids[@]}"; do kill -0 "$p" 2>/dev/null || break 2; done
    sleep 0.1
  done
  note "the ensemble did not start:"; tail -5 "$work"/zk*/server.log >&2
  return 1
}
stop_ensemble() {
  local p
  for p in "${server_pids[@]}"; do stop_pid "$p"; done
  server_pids=()
}
stop_clients() {
  local p
  for p in "${client_pids[@]}"; do kill -0 "$p" 2>/dev/null && stop_pid "$p"; done
  client_pids=()
}

# sched PID...: "run=NS wait=NS" summed over every thread of the processes (/proc/PID/task/*/
# schedstat: time on a CPU, and time runnable but waiting for one - a process that wants more CPU
# than it gets waits there).
sched() {
  local p
  for p in "$@"; do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
    awk '{r+=$1; w+=$2} END{printf "run=%.0f wait=%.0f", r, w}'
}
# proc_snapshot: the CPU figures, read in a few milliseconds - per server "proc I cpu=TICKS run=NS
# wait=NS", the clients' "clients run=NS wait=NS", the machine's busy ticks (/proc/stat), the clock.
proc_snapshot() {
  local i
  for i in 0 1 2; do
    echo "proc $i cpu=$(awk '{print $14 + $15}' "/proc/${server_pids[$i]}/stat" 2>/dev/null || echo 0) $(sched "${server_pids[$i]}")"
  done
  echo "clients $(sched "${client_pids[@]}")"
  awk '$1=="cpu"{t=0; for(i=2;i<=NF;i++) t+=$i; print "machine busy=" t-$5-$6 " total=" t; exit}' /proc/stat
  echo "clock $(date +%s.%N)"
}
# packets_received: zk_packets_received summed over the three servers.
packets_received() {
  local i
  for i in 0 1 2; do fourlw "${client_ports[$i]}" mntr; done | awk '$1=="zk_packets_received"{p+=$2} END{print p+0}'
}
# mntr_snapshot: per server "server I key=value..." (its mntr).
mntr_snapshot() {
  local i
  for i in 0 1 2; do
    echo "server $i $(fourlw "${client_ports[$i]}" mntr | awk 'NF==2{printf "%s=%s ", $1, $2}')"
  done
}

# run_fleet IMPL P S: one run of P processes of S sessions; appends its JSON line to $results.
run_fleet() {
  local impl=$1 np=$2 ns=$3 i
  local g=$work/run-$impl-${np}x$ns-$rep
  rm -rf "$g" && mkdir -p "$g/gate"
  local base=/bench/fleet-$impl-${np}x$ns-r$rep-$RANDOM
  client_pids=()
  for i in $(seq 1 "$np"); do
    if [[ $impl == zklock* ]]; then
      # zklock-slowhb: zklock with its idle sessions' heartbeat at SLOW_HEARTBEAT_MS.
      local hb=()
      [[ $impl == zklock-slowhb ]] && hb=(--heartbeat-ms "$SLOW_HEARTBEAT_MS")
      "$bin" --connect "$hosts" --mode fleet --clients "$ns" --locks "$LOCKS" --seconds "$DURATION" \
        "${hb[@]}" --count-requests --path "$base" --gate "$g/gate" --latency-file "$g/lat.$i" >"$g/out.$i" 2>"$g/err.$i" &
    else
      java -Xmx"$CLIENT_HEAP" -Xss256k -cp "$work/cls:$CURATOR_CP" CuratorBench "$hosts" fleet "$ns" "$DURATION" \
        "$LOCKS" "$base" "$g/gate" "$g/lat.$i" >"$g/out.$i" 2>"$g/err.$i" &
    fi
    client_pids+=($!)
  done
  # Every process connected (a ready file each), or one died, or 300 s passed.
  local ready=0
  for _ in $(seq 3000); do
    ready=$(find "$g/gate" -name 'ready-*' | wc -l)
    ((ready >= np)) && break
    local dead=0
    for i in "${client_pids[@]}"; do kill -0 "$i" 2>/dev/null || dead=1; done
    ((dead)) && break
    sleep 0.1
  done
  if ((ready < np)); then
    note "$impl P=$np: only $ready of $np processes ready: $(cat "$g"/err.* | tail -3)"
    stop_clients
    echo "{\"impl\": \"$impl\", \"processes\": $np, \"rep\": $rep, \"error\": \"not ready\"}" >>"$results"
    return
  fi
  # Connected and idle at the gate: what the sessions send when they take no lock (heartbeats).
  local idle0 idle1 t0 t1
  idle0=$(packets_received) t0=$(date +%s.%N)
  sleep "$IDLE"
  idle1=$(packets_received) t1=$(date +%s.%N)
  echo "$idle0 $idle1 $t0 $t1" >"$g/idle"
  # The window: latency figures reset, counters read, go; read again half a second before the
  # processes' loops end (a steady state, without the last acquisitions' tail and the sessions'
  # close). The CPU figures are read next to the go and first at the end (a few ms), mntr outside.
  for i in "${client_ports[@]}"; do fourlw "$i" srst >/dev/null; done
  mntr_snapshot >"$g/before"
  proc_snapshot >>"$g/before"
  touch "$g/gate/go"
  sleep "$(echo "$DURATION - 0.5" | bc -l)"
  proc_snapshot >"$g/after"
  mntr_snapshot >>"$g/after"
  # The processes end their loops DURATION seconds after the go; one still running CLIENT_GRACE
  # seconds later is stuck (a machine so loaded that its sessions expired was seen: other users'
  # jobs at a load average of 200) and is stopped: it then has no line, and the run reports it.
  local failed=0 stuck=0
  for _ in $(seq $((CLIENT_GRACE * 10))); do
    local alive=0
    for i in "${client_pids[@]}"; do kill -0 "$i" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for i in "${client_pids[@]}"; do
    if kill -0 "$i" 2>/dev/null; then stuck=1; stop_pid "$i"; else wait "$i" || failed=1; fi
  done
  client_pids=()
  ((stuck)) && note "$impl P=$np: processes still running ${CLIENT_GRACE} s after their loops' end were stopped"
  ((failed)) && note "$impl P=$np: a process failed: $(cat "$g"/err.* | tail -3)"
  "$PY" - "$g" "$impl" "$np" "$rep" "$ns" "$LOCKS" "$DURATION" "$FORCESYNC" >>"$results" <<'EOF'
import glob, json, os, sys
g, impl, np_, rep, sessions, locks, secs, sync = sys.argv[1:]
np_, rep, sessions, locks, secs = int(np_), int(rep), int(sessions), int(locks), int(secs)

def snap(path):
    servers, procs, clients, machine, clock = [{}, {}, {}], [{}, {}, {}], {}, None, None
    kv = lambda ws: dict(x.split("=", 1) for x in ws)
    for line in open(path):
        w = line.split()
        if w[0] == "server":
            servers[int(w[1])] = kv(w[2:])
        elif w[0] == "proc":
            procs[int(w[1])] = {k: int(v) for k, v in kv(w[2:]).items()}
        elif w[0] == "clients":
            clients = {k: int(v) for k, v in kv(w[1:]).items()}
        elif w[0] == "machine":
            machine = {k: int(v) for k, v in kv(w[1:]).items()}
        elif w[0] == "clock":
            clock = float(w[1])
    return servers, procs, clients, machine, clock

(sb, pb, kb, mb, cb), (sa, pa, ka, ma, ca) = snap(f"{g}/before"), snap(f"{g}/after")
lines, errors, first_error = [], 0, None
for i in range(1, np_ + 1):
    out = open(f"{g}/out.{i}").read().strip().splitlines()
    if out and out[-1].startswith("{"):
        lines.append(json.loads(out[-1]))
    else:
        err = open(f"{g}/err.{i}").read().strip().splitlines()
        errors += sessions
        first_error = first_error or (err[-1] if err else "no output")
waits = []
for f in glob.glob(f"{g}/lat.*"):
    waits += [int(x) for x in open(f).read().split()]
waits.sort()
acq = sum(l["acquisitions"] for l in lines)
errors += sum(l.get("errors", 0) for l in lines)
first_error = first_error or next((l["first_error"] for l in lines if "first_error" in l), None)
wall = ca - cb
HZ = 100  # USER_HZ: /proc/PID/stat's and /proc/stat's tick
def num(d, k):
    try: return float(d[k])
    except (KeyError, ValueError): return None
def delta(k):
    vals = [num(a, k) - num(b, k) for a, b in zip(sa, sb) if num(a, k) is not None and num(b, k) is not None]
    return sum(vals) if len(vals) == 3 else None
roles = [a.get("zk_server_state", "?") for a in sa]
leader = roles.index("leader") if "leader" in roles else None
cpu_cores = [(a["cpu"] - b["cpu"]) / HZ / wall for a, b in zip(pa, pb)]
# Time runnable but not running (waiting for a CPU), in cores: the servers' and the clients'.
server_wait_cores = [(a["wait"] - b["wait"]) / 1e9 / wall for a, b in zip(pa, pb)]
client_wait_cores = (ka["wait"] - kb["wait"]) / 1e9 / wall if ka and kb else None
# The acquisitions inside the window the server figures cover: the processes' total scaled to it
# (their loops ran DURATION seconds from the go, give or take one acquisition per session).
acq_window = sum(l["acquisitions"] * min(1.0, wall / l["seconds"]) for l in lines) if lines else 0
r = {
    "impl": impl, "mode": "fleet", "processes": np_, "sessions_per_process": sessions,
    "sessions": np_ * sessions, "locks": locks, "seconds": secs, "forcesync": sync, "rep": rep,
    "processes_ok": len(lines), "acquisitions": acq,
    "acq_per_s": round(sum(l["ops_per_s"] for l in lines), 1),
    "p50_us": waits[len(waits) // 2] if waits else None,
    "p99_us": waits[int(len(waits) * 0.99)] if waits else None,
    "max_us": waits[-1] if waits else None,
    "client_cpu_us_per_acq": round(sum(l["cpu_us"] for l in lines) / acq, 1) if acq else None,
    "client_cpu_cores": round(sum(l["cpu_us"] for l in lines) / 1e6 / max(l["seconds"] for l in lines), 3) if lines else None,
    "overlaps": sum(l["overlaps"] for l in lines), "errors": errors,
    "window_s": round(wall, 3),
    "server_packets_received_per_acq": round((delta("zk_packets_received") - 3) / acq_window, 2) if acq_window and delta("zk_packets_received") is not None else None,
    "server_packets_sent_per_acq": round((delta("zk_packets_sent") - 3) / acq_window, 2) if acq_window and delta("zk_packets_sent") is not None else None,
    "server_cpu_cores": [round(c, 3) for c in cpu_cores],
    "server_runqueue_wait_cores": [round(c, 3) for c in server_wait_cores],
    "client_runqueue_wait_cores": round(client_wait_cores, 3) if client_wait_cores is not None else None,
    "server_roles": roles,
    "server_cpu_us_per_acq": round(sum(cpu_cores) * wall * 1e6 / acq_window, 1) if acq_window else None,
    "machine_busy_cores": round((ma["busy"] - mb["busy"]) / HZ / wall, 3),
}
r["machine_cores"] = os.cpu_count()
# What else ran on the machine meanwhile (other users' processes: the machine is shared).
if r["client_cpu_cores"] is not None:
    r["other_cpu_cores"] = round(r["machine_busy_cores"] - sum(cpu_cores) - r["client_cpu_cores"], 3)
# Each server's request latency over the window (srst at the go): avg and max, in ms, as mntr
# gives them; the leader's proposal -> commit and quorum-ack latencies, and the fsyncs.
r["server_avg_latency_ms"] = [num(a, "zk_avg_latency") for a in sa]
r["server_max_latency_ms"] = [num(a, "zk_max_latency") for a in sa]
if leader is not None:
    L = sa[leader]
    for k in ("zk_avg_proposal_latency", "zk_max_proposal_latency", "zk_avg_quorum_ack_latency",
              "zk_max_quorum_ack_latency", "zk_avg_commit_propagation_latency"):
        if k in L: r["leader_" + k[3:]] = num(L, k)
r["fsyncs"] = delta("zk_cnt_fsynctime")
r["avg_fsync_ms"] = [num(a, "zk_avg_fsynctime") for a in sa]
# Packets per second per connected, idle session (3 of the packets are the 4lw reads themselves).
i0, i1, it0, it1 = open(f"{g}/idle").read().split()
# (A server that did not answer reads as 0: no figure then.)
r["idle_packets_per_session_s"] = (round((int(i1) - int(i0) - 3) / (float(it1) - float(it0)) / (np_ * sessions), 3)
                                   if int(i0) > 0 and int(i1) > int(i0) else None)
# zklock's requests by kind per acquisition, counted in the client (--count-requests: every
# request of its connections, the heartbeats' exists and sync included).
for k in sorted({k for l in lines for k in l if k.startswith("req_") and k.endswith("_per_acq")}):
    r[k] = round(sum(l.get(k, 0) * l["acquisitions"] for l in lines) / acq, 3) if acq else None
if first_error: r["first_error"] = first_error
print(json.dumps(r))
EOF
  tail -1 "$results" | cut -c1-260 >&2
}

# ---- the report ----
report() { # RESULTS_FILE
"$PY" - "$1" <<'PYEOF'
import json, os, platform, statistics, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def med(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None
def fmt(v, d=0):
    return "-" if v is None else f"{v:,.{d}f}"
def model():
    try:
        for l in open("/proc/cpuinfo"):
            if l.startswith("model name"): return l.split(":", 1)[1].strip()
    except OSError: pass
    return platform.processor() or "?"

ok = [r for r in rows if "error" not in r]
bad = [r for r in rows if "error" in r or r.get("errors")]
reps = max((r["rep"] for r in rows), default=0)
r0 = ok[0] if ok else {}
print(f"Machine: {os.cpu_count()} CPUs ({model()}), kernel {platform.release()}; a 3-node ZooKeeper ensemble "
      f"and every client process on it. {r0.get('locks', '?')} locks, {r0.get('seconds', '?')} s per run, "
      f"forceSync={r0.get('forcesync', '?')}; medians of {reps} runs.")
if bad:
    print(f"\n{len(bad)} run(s) with errors: " + "; ".join(
        f"{r['impl']} {r['processes']}x{r.get('sessions_per_process', '?')} rep {r['rep']}: "
        f"{r.get('error') or str(r.get('errors')) + ' session(s): ' + str(r.get('first_error'))}" for r in bad))
# One row per implementation and fleet shape (processes x sessions), by number of sessions.
keys = sorted({(r["impl"], r["processes"], r["sessions_per_process"]) for r in ok},
              key=lambda k: (k[0] != "zklock", k[0], k[1] * k[2], k[1]))
def runs(k): return [r for r in ok if (r["impl"], r["processes"], r["sessions_per_process"]) == k]
def split(r, key):  # (the leader's figure, the followers')
    roles = r["server_roles"]
    li = roles.index("leader") if "leader" in roles else 0
    return r[key][li], [v for i, v in enumerate(r[key]) if i != li]

print("\nThroughput, waits and the servers' work:\n")
print("| impl | processes × sessions | acquisitions/s | wait p50 ms | wait p99 ms | client CPU µs/acq "
      "| server CPU µs/acq (3 nodes) | server packets/acq in / out | server latency avg ms, leader; followers "
      "| server latency max ms | idle packets/s per session | overlaps | errors |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in keys:
    rs = runs(k)
    lead_lat = med(split(r, "server_avg_latency_ms")[0] for r in rs)
    fol_lat = med(statistics.mean(split(r, "server_avg_latency_ms")[1]) for r in rs)
    max_lat = med(max(v for v in r["server_max_latency_ms"] if v is not None) for r in rs)
    print(f"| {k[0]} | {k[1]} × {k[2]} | {fmt(med(r['acq_per_s'] for r in rs))} "
          f"| {fmt(med(r['p50_us'] for r in rs) / 1e3, 1)} | {fmt(med(r['p99_us'] for r in rs) / 1e3, 1)} "
          f"| {fmt(med(r['client_cpu_us_per_acq'] for r in rs))} | {fmt(med(r.get('server_cpu_us_per_acq') for r in rs))} "
          f"| {fmt(med(r['server_packets_received_per_acq'] for r in rs), 2)} / {fmt(med(r['server_packets_sent_per_acq'] for r in rs), 2)} "
          f"| {fmt(lead_lat, 1)}; {fmt(fol_lat, 1)} | {fmt(max_lat)} | {fmt(med(r.get('idle_packets_per_session_s') for r in rs), 2)} "
          f"| {max(r['overlaps'] for r in rs)} "
          f"| {sum(r['errors'] for r in rs)} |")

print(f"\nWho used the {os.cpu_count()} CPUs (cores busy over the window; \"waiting\": runnable threads "
      "waiting for a CPU, /proc/PID/task/*/schedstat; others: the machine's busy time minus the servers' and "
      "the clients', i.e. other users' processes):\n")
print("| impl | processes × sessions | servers: leader + followers | servers waiting for a CPU "
      "| clients | clients waiting for a CPU | others | machine busy |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for k in keys:
    rs = runs(k)
    print(f"| {k[0]} | {k[1]} × {k[2]} "
          f"| {fmt(med(split(r, 'server_cpu_cores')[0] for r in rs), 2)} + {fmt(med(sum(split(r, 'server_cpu_cores')[1]) for r in rs), 2)} "
          f"| {fmt(med(sum(r['server_runqueue_wait_cores']) for r in rs), 2)} "
          f"| {fmt(med(r['client_cpu_cores'] for r in rs), 2)} | {fmt(med(r.get('client_runqueue_wait_cores') for r in rs), 2)} "
          f"| {fmt(med(r.get('other_cpu_cores') for r in rs), 2)} | {fmt(med(r['machine_busy_cores'] for r in rs), 2)} |")

# zklock's requests per acquisition by kind (client-side counts, heartbeats included).
req_keys = sorted({k for r in ok for k in r if k.startswith("req_") and k.endswith("_per_acq")})
zk = [k for k in keys if any(key in r for r in runs(k) for key in req_keys)]
if zk:
    names = [k[4:-8] for k in req_keys]
    print("\nzklock's requests per acquisition by kind (counted in the client, the heartbeats' exists and sync included):\n")
    print("| impl | processes × sessions | " + " | ".join(names) + " | total |")
    print("|---|---|" + "---:|" * (len(names) + 1))
    for k in zk:
        vals = [med(r.get(key) for r in runs(k)) for key in req_keys]
        print(f"| {k[0]} | {k[1]} × {k[2]} | " + " | ".join(fmt(v, 2) for v in vals) + f" | {fmt(sum(v for v in vals if v), 2)} |")

# Where the aggregate rate stops growing: the first shape (by sessions) whose median rate is under
# 1.1x the previous one's.
print()
for impl in dict.fromkeys(k[0] for k in keys):
    ks = [k for k in keys if k[0] == impl]
    rate = {k: med(r["acq_per_s"] for r in runs(k)) for k in ks}
    stop = next((b for a, b in zip(ks, ks[1:]) if rate[b] < 1.1 * rate[a]), None)
    growth = ", ".join(f"{k[1]}×{k[2]}: {fmt(rate[k])}/s" for k in ks)
    print(f"- {impl}: {growth}; " + (f"the rate stops growing (< 1.1x the previous) from {stop[1]}×{stop[2]}."
                                      if stop else "still growing at the largest fleet."))
PYEOF
}

main() {
  local build=${1:-$repo/build}
  bin=$build/bin/zklock-bench
  [[ -x $bin ]] || { note "$bin not found (build target zklock-bench first)"; exit 2; }
  PROCESSES=${PROCESSES:-"1x1 1x3 1 5 10 20"} SESSIONS=${SESSIONS:-10} LOCKS=${LOCKS:-20}
  DURATION=${DURATION:-8} REPS=${REPS:-3} IMPLS=${IMPLS:-"zklock curator"}
  WARMUP=${WARMUP:-15} IDLE=${IDLE:-4} CLIENT_GRACE=${CLIENT_GRACE:-120} SLOW_HEARTBEAT_MS=${SLOW_HEARTBEAT_MS:-3333} FORCESYNC=${FORCESYNC:-yes} SERVER_HEAP=${SERVER_HEAP:-1g} CLIENT_HEAP=${CLIENT_HEAP:-256m}
  bench_classpaths
  work=$(mktemp -d /tmp/zklock-bench-fleet.XXXXXX)
  results=${RESULTS:-$work/results.jsonl}
  : >"$results"
  # Everything stopped; the temporary directory goes too, unless it holds the results.
  trap 'stop_clients; stop_ensemble; if [[ $results == "$work"/* ]]; then rm -rf "$work"/zk? "$work"/run-* "$work/cls"; else rm -rf "$work"; fi' EXIT
  trap 'exit 130' INT TERM

  if [[ " $IMPLS " == *" curator "* ]] && ! compile_curator "$work/cls" "$work/javac.log"; then
    note "Curator skipped (javac or the Curator jars missing)"
    IMPLS=${IMPLS//curator/}
  fi
  echo "# bench_fleet: $(date -u +%FT%TZ), results in $results" >&2
  start_ensemble || exit 1
  note "ensemble on $hosts ($(fourlw "${client_ports[0]}" srvr | head -1))"
  local order=($IMPLS) np ns spec impl
  # A fresh JVM runs its first seconds in the interpreter and compiling: the servers are warmed up
  # by a discarded run of each implementation first.
  if ((WARMUP > 0)); then
    local keep_results=$results keep_duration=$DURATION
    results=$work/warmup.jsonl DURATION=$WARMUP rep=0
    for impl in "${order[@]}"; do
      note "warm-up (discarded): $impl, 2 processes for $WARMUP s"
      run_fleet "$impl" 2 "$SESSIONS"
    done
    results=$keep_results DURATION=$keep_duration
  fi
  for rep in $(seq 1 "$REPS"); do
    for spec in $PROCESSES; do
      np=${spec%x*} ns=$SESSIONS
      [[ $spec == *x* ]] && ns=${spec#*x}
      for impl in "${order[@]}"; do
        note "rep $rep/$REPS: $impl, $np processes x $ns sessions on $LOCKS locks"
        run_fleet "$impl" "$np" "$ns"
      done
    done
    # Who goes first alternates between repetitions.
    order=($(printf '%s\n' "${order[@]}" | tac))
  done
  report "$results"
  echo "# raw results: $results" >&2
}

# Everything above only defines functions: bash has read the whole file before anything runs, so
# editing the script during a run cannot derail it.
if [[ ${1:-} == --report ]]; then
  [[ -f ${2:-} ]] || { note "usage: $0 --report RESULTS.jsonl"; exit 2; }
  report "$2"
  exit 0
fi
main "$@"
