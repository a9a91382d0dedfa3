#!/usr/bin/env bash
# The quick start: installs what is missing, builds, starts a throwaway ZooKeeper, runs the bundled
# examples (several processes taking turns on one lock, each printing its fencing token) and the
# zklock CLI, then stops the server and cleans up.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
zklock_install_deps

build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
bin=$(pwd)/$build/bin

work=$(mktemp -d)
port=$((24000 + RANDOM % 2000))
trap 'scripts/zk-local.sh stop "$work/zk"; rm -rf "$work"' EXIT
scripts/zk-local.sh start "$work/zk" "$port"
export ZKLOCK_CONNECT=127.0.0.1:$port
echo "== ZooKeeper on $ZKLOCK_CONNECT"

echo "== four processes take turns on /demo/lock (tokens grow with each holder)"
pids=()
for i in 1 2 3 4; do
  "$bin/zklock-example-basic-lock" --path /demo/lock --name "worker-$i" --hold-ms 200 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

echo "== RAII guard with fencing token and validity"
"$bin/zklock-example-guard-token" --path /demo/guard

if [ -x "$bin/zklock" ]; then
  echo "== zklock CLI: one holder, two waiters, and the queue"
  "$bin/zklock" hold --description "demo holder" /demo/cli >"$work/hold.out" &
  holder=$!
  for _ in $(seq 50); do [ -s "$work/hold.out" ] && break; sleep 0.1; done
  "$bin/zklock" exec --description "waiter A" /demo/cli -- sh -c 'echo "A runs with token $ZKLOCK_FENCING_TOKEN"' &
  a=$!
  "$bin/zklock" exec --description "waiter B" /demo/cli -- sh -c 'echo "B runs with token $ZKLOCK_FENCING_TOKEN"' &
  b=$!
  for _ in $(seq 50); do
    [ "$("$bin/zklock" status --json /demo/cli | grep -o '"position"' | wc -l)" -ge 3 ] && break
    sleep 0.1
  done
  "$bin/zklock" status /demo/cli
  kill -TERM "$holder"
  wait "$holder" || true
  wait "$a" "$b"
fi
echo "== done"
