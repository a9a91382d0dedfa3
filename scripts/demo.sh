#!/usr/bin/env bash
# The quick start: installs what is missing, builds, starts a throwaway ZooKeeper and runs every
# bundled example and the zklock CLI against it, then stops the server and cleans up:
#   1. four processes take turns on one lock, each printing its fencing token (basic_lock);
#   2. the RAII guard with token and validity (guard_token);
#   3. two processes increment a counter in SQLite and two a counter in a znode, fenced
#      (fenced_counter, znode_counter): no increment is lost;
#   4. the CLI: a holder, two waiters and the queue (`zklock hold`, `exec`, `status`);
#   5. a worker pool of three processes limited to 2 concurrent jobs by a Semaphore (worker_pool):
#      fails if more than 2 jobs ever ran at once;
#   6. a read/write lock (shared_lock): three readers hold it at once, a writer waits for them,
#      writes fenced and downgrades to a read lock;
#   7. an Asio event loop on one thread serving 60 requests, each taking one of three locks
#      asynchronously with a deadline (asio_requests): no extra thread, never two holders;
#   8. Prometheus metrics: a service serves /metrics while its worker takes a lock, some
#      attempts timing out behind a second session (metrics_http); curl reads a few figures;
#   9. a lost session: the server is frozen (SIGSTOP) past the 6 s session timeout while
#      stop_on_lost holds a lock - it stops, and says so, before the server could hand the lock
#      on - and session_monitor prints Suspended, Lost, then a new session once the server thaws.
# Fails (exit 1) as soon as an example does not do what it shows; CI runs it (scripts/test.sh demo).
#
# ZKLOCK_DEMO_REQUIRE_QUIET=1 also fails when parts 1-9 (a healthy server throughout) print an error
# or a ZooKeeper C client log line on stderr; without it the demo only counts them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
zklock_install_deps

build=${BUILD_DIR:-build}
cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target zklock-cli zklock-example-basic-lock \
  zklock-example-guard-token zklock-example-fenced-counter zklock-example-znode-counter \
  zklock-example-stop-on-lost zklock-example-session-monitor zklock-example-worker-pool \
  zklock-example-shared-lock zklock-example-asio-requests zklock-example-metrics-http >/dev/null
bin=$(cd "$build" && pwd)/bin  # BUILD_DIR may be relative or absolute

work=$(mktemp -d)
port=$((24000 + RANDOM % 2000))
cleanup() {
  # Background examples still running (only after a failure) go first, then the server.
  jobs -p | xargs -r kill 2>/dev/null || true
  scripts/zk-local.sh stop "$work/zk"
  rm -rf "$work"
}
trap cleanup EXIT
scripts/zk-local.sh start "$work/zk" "$port"
export ZKLOCK_CONNECT=127.0.0.1:$port
echo "== ZooKeeper on $ZKLOCK_CONNECT"

fail() {
  echo "demo: FAILED: $*" >&2
  exit 1
}
# wait_for FILE PATTERN SECONDS: until a line of FILE matches PATTERN (grep -E).
wait_for() {
  local deadline=$((SECONDS + $3))
  until grep -qE "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt "$deadline" ] || fail "no line matching '$2' in $1 within $3 s"
    sleep 0.1
  done
}
# wait_for_queue PATH N: waits until `zklock status` shows N contenders (holder included) on PATH.
wait_for_queue() {
  local deadline=$((SECONDS + 30))
  until [ "$("$bin/zklock" status --json "$1" | grep -o '"position"' | wc -l)" -ge "$2" ]; do
    [ $SECONDS -lt "$deadline" ] || fail "zklock status did not show $2 contenders on $1"
    sleep 0.1
  done
}
# expect_exit NAME PID STATUS: waits for the background example PID; it must exit with STATUS.
expect_exit() {
  local status=0
  wait "$2" || status=$?
  [ "$status" -eq "$3" ] || fail "$1 exited with $status, expected $3"
}

# Parts 1-9 run against a healthy server: their stderr is also kept, to count error lines.
exec 3>&2
exec 2> >(tee "$work/healthy.err" >&3)
healthy_tee=$!

echo "== 1. four processes take turns on /demo/lock (tokens grow with each holder)"
pids=()
for i in 1 2 3 4; do
  "$bin/zklock-example-basic-lock" --path /demo/lock --name "worker-$i" --hold-ms 200 &
  pids+=($!)
done
for i in 1 2 3 4; do expect_exit "basic_lock worker-$i" "${pids[$((i - 1))]}" 0; done

echo "== 2. RAII guard with fencing token and validity"
"$bin/zklock-example-guard-token" --path /demo/guard || fail "guard_token exited with $?"

echo "== 3. fenced counters: two processes, 10 increments each, no increment lost"
for store in fenced-counter znode-counter; do
  args=(--connect "$ZKLOCK_CONNECT" --iterations 10 --path "/demo/$store")
  [ $store = fenced-counter ] && args+=(--db "$work/counter.db")
  "$bin/zklock-example-$store" "${args[@]}" >"$work/$store-1.out" &
  first=$!
  "$bin/zklock-example-$store" "${args[@]}" >"$work/$store-2.out" &
  second=$!
  expect_exit "$store (first)" $first 0
  expect_exit "$store (second)" $second 0
  grep -h "^wrote" "$work/$store-1.out" "$work/$store-2.out" | sort -k2n | tail -n 1 |
    sed "s/^/   $store: /"
  grep -q "^wrote 20 with token" "$work/$store-1.out" "$work/$store-2.out" ||
    fail "$store: the counter did not reach 20"
done

echo "== 4. zklock CLI: one holder, two waiters, and the queue"
"$bin/zklock" hold --description "demo holder" /demo/cli >"$work/hold.out" &
holder=$!
wait_for "$work/hold.out" . 30
"$bin/zklock" exec --description "waiter A" /demo/cli -- sh -c 'echo "A runs with token $ZKLOCK_FENCING_TOKEN"' &
a=$!
"$bin/zklock" exec --description "waiter B" /demo/cli -- sh -c 'echo "B runs with token $ZKLOCK_FENCING_TOKEN"' &
b=$!
wait_for_queue /demo/cli 3  # the holder and two waiters
"$bin/zklock" status /demo/cli
kill -TERM "$holder"
wait "$holder" || true  # stopped by SIGTERM on purpose
expect_exit "zklock exec (waiter A)" $a 0
expect_exit "zklock exec (waiter B)" $b 0

echo "== 5. a worker pool: three processes, two workers each, at most 2 jobs at once (Semaphore)"
pids=()
for i in 1 2 3; do
  "$bin/zklock-example-worker-pool" --path /demo/pool --slots 2 --workers 2 --jobs 4 \
    --job-ms 100 --name "pool-$i" >"$work/pool-$i.out" &
  pids+=($!)
done
for i in 1 2 3; do expect_exit "worker_pool pool-$i" "${pids[$((i - 1))]}" 0; done
grep -h ": 4 jobs done" "$work"/pool-*.out | sed 's/^/   /'
# Every job's start and end on the machine's monotonic clock, all processes merged: the most
# jobs running at once. A job starts after its lease is granted and ends before it is released.
most=$(cat "$work"/pool-*.out | awk '$1 == "start" || $1 == "end"' | sort -k2,2n |
  awk '{ n += ($1 == "start") ? 1 : -1; if (n > most) most = n } END { print most + 0 }')
jobs_run=$(cat "$work"/pool-*.out | grep -c "^end ")
echo "   $jobs_run jobs, at most $most at once across the three processes (2 slots)"
[ "$jobs_run" -eq 12 ] || fail "worker_pool: $jobs_run of 12 jobs ran"
[ "$most" -le 2 ] || fail "worker_pool: $most jobs ran at once with 2 slots"

echo "== 6. a read/write lock: readers share it, a writer waits, writes and downgrades"
"$bin/zklock-example-shared-lock" --path /demo/config-lock --config /demo/config --readers 3 \
  >"$work/shared.out" || fail "shared_lock exited with $?"
sed 's/^/   /' "$work/shared.out"
grep -q "^3 readers hold the read lock at once" "$work/shared.out" ||
  fail "shared_lock: the readers did not hold the lock together"
grep -q "^downgraded to a read lock" "$work/shared.out" || fail "shared_lock: no downgrade"

echo "== 7. asynchronous acquisition: an Asio event loop, one thread, 60 requests on 3 locks"
"$bin/zklock-example-asio-requests" --path /demo/asio --requests 60 >"$work/asio.out" ||
  fail "asio_requests exited with $? (a request failed, two held one lock, or threads grew)"
sed 's/^/   /' "$work/asio.out"

echo "== 8. Prometheus metrics: /metrics while a worker takes a lock, every 3rd try timing out"
"$bin/zklock-example-metrics-http" --listen 127.0.0.1:0 --path /demo/metrics --hold-ms 20 \
  --pause-ms 20 --timeout-every 3 >"$work/metrics.out" &
metrics=$!
wait_for "$work/metrics.out" "^listening on http://" 30
url=$(grep -m 1 -o 'http://[^ ]*/metrics' "$work/metrics.out")
echo "   $(grep -m 1 '^listening on' "$work/metrics.out")"
# Until a scrape shows an acquisition that timed out (the third attempt is the first).
figure='zklock_lock_acquisitions_total\{.*path="/demo/metrics".*outcome="timed_out".*\} [1-9]'
deadline=$((SECONDS + 30))
until curl -sf "$url" >"$work/metrics.txt" && grep -qE "$figure" "$work/metrics.txt"; do
  [ $SECONDS -lt $deadline ] || fail "metrics_http: /metrics showed no timed-out acquisition"
  sleep 0.1
done
shown='^zklock_lock_(acquisitions_total|holds_ended_total|wait_seconds_count)\{.*path="/demo/metrics"'
grep -E "$shown" "$work/metrics.txt" | grep -v ' 0$' | sed 's/^/   /'
kill -TERM "$metrics"
expect_exit "metrics_http" $metrics 0

echo "== 9. leader election: two participants, the leader is killed, the other takes over"
"$bin/zklock" elect --session-timeout 4s --value "participant A" /demo/election -- \
  sh -c 'echo "A leads, term $ZKLOCK_FENCING_TOKEN"; exec sleep 600' >"$work/elect-a.out" &
elect_a=$!
wait_for "$work/elect-a.out" "^A leads" 30
"$bin/zklock" elect --session-timeout 4s --value "participant B" /demo/election -- \
  sh -c 'echo "B leads, term $ZKLOCK_FENCING_TOKEN"' >"$work/elect-b.out" &
elect_b=$!
wait_for_queue /demo/election 2  # the leader and one waiting
echo "   $(cat "$work/elect-a.out")"
echo "   zklock leader: $("$bin/zklock" leader /demo/election)"
# Killed on purpose (the shell's "Killed" notice silenced): its session lives on until it expires.
{ kill -KILL "$elect_a" && wait "$elect_a"; } 2>/dev/null || true
killed_at=$SECONDS
echo "   leader killed (SIGKILL) at $(date +%T); its session expires 4 s later"
expect_exit "zklock elect (participant B)" $elect_b 0
echo "   $(cat "$work/elect-b.out") ($((SECONDS - killed_at)) s after the kill)"
grep -q "^B leads" "$work/elect-b.out" || fail "participant B never led"

exec 2>&3 3>&-
wait "$healthy_tee" 2>/dev/null || true
noisy=$(grep -cE 'ZOO_[A-Z]+@|[Ee]rror' "$work/healthy.err" || true)
echo "== parts 1-9 (healthy server): $noisy error or C client lines on stderr"
if [ "${ZKLOCK_DEMO_REQUIRE_QUIET:-0}" = 1 ] && [ "$noisy" -ne 0 ]; then
  grep -E 'ZOO_[A-Z]+@|[Ee]rror' "$work/healthy.err" | head -n 20 >&2
  fail "a healthy run must print no error lines"
fi

echo "== 10. a lost session: the server freezes past the 6 s session timeout"
# stdbuf -oL: its first line (printf, no flush) must reach the file before it exits.
stdbuf -oL "$bin/zklock-example-session-monitor" --timeout-ms 6000 --seconds 15 \
  >"$work/monitor.out" &
monitor=$!
"$bin/zklock-example-stop-on-lost" --path /demo/worker --steps 100000 --step-ms 100 \
  >"$work/worker.out" &
worker=$!
wait_for "$work/worker.out" "^working with token" 30
wait_for "$work/monitor.out" "Connected session" 30
server=$(cat "$work/zk/pid")
kill -STOP "$server"
echo "   server frozen (SIGSTOP) at $(date +%T)"
frozen_at=$SECONDS
expect_exit "stop_on_lost" $worker 76
echo "   stop_on_lost stopped after $((SECONDS - frozen_at)) s: $(tail -n 1 "$work/worker.out")"
# The monitor's own session may have been answered a little later than the worker's: keep the
# server frozen until it too has declared Lost.
wait_for "$work/monitor.out" "Suspended -> Lost" 30
kill -CONT "$server"
echo "   server thawed (SIGCONT)"
wait_for "$work/monitor.out" "Lost -> Connecting" 30
wait_for "$work/monitor.out" "Connecting -> Connected" 30
expect_exit "session_monitor" $monitor 0
sed 's/^/   session_monitor: /' "$work/monitor.out"
grep -q -- "-> Suspended" "$work/monitor.out" || fail "session_monitor did not report Suspended"
echo "== done"
