#!/usr/bin/env bash
# Physical network blips made by the kernel, for `zklock exec` and for Apache Curator 5.4 side by
# side (docs/reliability.md, "Faults made by the kernel"). A measurement, not a test: it asserts
# nothing and prints one markdown table.
#
#   sudo scripts/reliability_kernel.sh [ZKLOCK_CLI]        # default: build/bin/zklock
#
# One throwaway standalone ZooKeeper (tickTime 200 ms) runs in a network namespace of its own.
# Every holder runs in a namespace of its own, joined to the server's namespace by a veth link,
# and holds a lock running a command; a waiter on the host (`zklock exec` on the same path)
# queues behind it. A blip drops every packet on both ends of the holder's link (tc's blackhole
# qdisc) for d, starting at a random point of the first T/10, then heals it. Holders:
#   zklock             `zklock exec --session-timeout T PATH -- CMD`
#   curator-lost       CuratorExec.java (tools/bench/peers): InterProcessMutex, stops CMD on LOST
#   curator-suspended  the same, stopping CMD on SUSPENDED
# A cell counts, over its trials: kept (CMD ran to its end, the waiter got in only afterwards),
# stopped (CMD was stopped - SIGTERM - before the waiter got in) and two holders (the waiter got
# in while CMD still ran). The trials of one blip length run at once, every client together.
#
# Environment: TRIALS (5), SESSIONS ("6 10", seconds), BLIPS ("0.5 0.75 0.85 0.9 1.2 2", x T),
# CLIENTS ("zklock curator-lost curator-suspended").
# Needs: root, iproute2, java and javac, libcurator-recipes-java, zookeeper (Debian packages).
# Traffic stays in 10.213.0.0/16 inside namespaces this script creates (names zkl<pid>..., the
# scheme of tests/support/netns.h, so a leftover of a killed run is swept by the next test run);
# everything is removed on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cli=$(readlink -f "${1:-$root/build/bin/zklock}")
TRIALS=${TRIALS:-5}
SESSIONS=${SESSIONS:-"6 10"}
BLIPS=${BLIPS:-"0.5 0.75 0.85 0.9 1.2 2"}
CLIENTS=${CLIENTS:-"zklock curator-lost curator-suspended"}

die() { echo "reliability_kernel: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces)"
[[ -x $cli ]] || die "zklock CLI not found at $cli (build it: cmake --build build --target zklock-cli)"
for tool in ip tc java javac flock; do command -v $tool >/dev/null || die "$tool not found"; done
J=/usr/share/java
ZK_CP=$J/zookeeper.jar:$J/zookeeper-jute.jar:$J/slf4j-api.jar:$J/slf4j-nop.jar:$J/netty-handler.jar:$J/netty-common.jar:$J/netty-buffer.jar:$J/netty-transport.jar:$J/netty-codec.jar:$J/netty-resolver.jar:$J/netty-transport-native-epoll.jar:$J/netty-transport-native-unix-common.jar:$J/metrics-core.jar:$J/commons-io.jar:$J/snappy-java.jar
CURATOR_CP=$J/curator-framework.jar:$J/curator-client.jar:$J/curator-recipes.jar:$J/guava.jar:$ZK_CP
for jar in ${CURATOR_CP//:/ }; do [[ -f $jar ]] || die "$jar missing (apt-get install libcurator-recipes-java zookeeper)"; done

work=$(mktemp -d /tmp/zklock-reliability-kernel-XXXXXX)
prefix=zkl$$
namespaces=()
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  [[ -n ${KEEP:-} ]] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

# This process's /22 of 10.213.0.0/16, held by an flock like the test processes' (netns.h).
mkdir -p /run/zklock-netns
block=-1
for ((i = 0; i < 64; i++)); do
  b=$(((($$ + i)) % 64))
  exec {block_fd}>"/run/zklock-netns/block-$b.lock"
  if flock -n "$block_fd"; then block=$b; break; fi
  exec {block_fd}>&-
done
((block >= 0)) || die "all address blocks of 10.213.0.0/16 are in use"
address() { echo "10.213.$((block * 4 + $1 / 64)).$((($1 % 64) * 4 + $2))"; }  # slot, end (1|2)

# The server's namespace, linked to the host (slot 0: host .1, server .2).
server_ns=${prefix}n0
ip netns add "$server_ns"; namespaces+=("$server_ns")
ip -n "$server_ns" link set lo up
ip link add "${prefix}a0" type veth peer name "${prefix}b0" netns "$server_ns"
ip addr add "$(address 0 1)/30" dev "${prefix}a0"; ip link set "${prefix}a0" up
ip -n "$server_ns" addr add "$(address 0 2)/30" dev "${prefix}b0"; ip -n "$server_ns" link set "${prefix}b0" up
server_host_side=$(address 0 2)

# One namespace per concurrent holder, linked straight to the server's namespace (slot k).
max_holders=$((TRIALS * $(wc -w <<<"$CLIENTS")))
for ((k = 1; k <= max_holders; k++)); do
  ns=${prefix}n$k
  ip netns add "$ns"; namespaces+=("$ns")
  ip -n "$ns" link set lo up
  ip -n "$ns" link add "${prefix}a$k" type veth peer name "${prefix}b$k" netns "$server_ns"
  ip -n "$ns" addr add "$(address "$k" 1)/30" dev "${prefix}a$k"; ip -n "$ns" link set "${prefix}a$k" up
  ip -n "$server_ns" addr add "$(address "$k" 2)/30" dev "${prefix}b$k"; ip -n "$server_ns" link set "${prefix}b$k" up
done
cut() { tc -n "${prefix}n$1" qdisc replace dev "${prefix}a$1" root blackhole; tc -n "$server_ns" qdisc replace dev "${prefix}b$1" root blackhole; }
heal() { tc -n "${prefix}n$1" qdisc del dev "${prefix}a$1" root; tc -n "$server_ns" qdisc del dev "${prefix}b$1" root; }

# The server: every address of its namespace (its links only), session timeouts up to 60 s.
port=2181
mkdir -p "$work/zk/data"
cat >"$work/zk/zoo.cfg" <<EOF
tickTime=200
dataDir=$work/zk/data
clientPort=$port
clientPortAddress=0.0.0.0
admin.enableServer=false
4lw.commands.whitelist=*
maxClientCnxns=0
forceSync=no
minSessionTimeout=1000
maxSessionTimeout=60000
EOF
ip netns exec "$server_ns" java -Xmx256m -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true -cp "$ZK_CP" \
  org.apache.zookeeper.server.ZooKeeperServerMain "$work/zk/zoo.cfg" >"$work/zk/server.log" 2>&1 &
pids+=($!)
disown $!  # killed by cleanup(); no job-control notice about it
ruok() { ip netns exec "$server_ns" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && echo -n ruok >&3 && timeout 1 cat <&3" 2>/dev/null; }
for ((i = 0; i < 300; i++)); do [[ $(ruok) == imok ]] && break; sleep 0.1; done
[[ $(ruok) == imok ]] || die "ZooKeeper did not start: $(tail -5 "$work/zk/server.log")"

javac -d "$work/cls" -cp "$CURATOR_CP" "$root/tools/bench/peers/CuratorExec.java"

now() { date +%s%N; }
# wait_for FILE SECONDS: polls until FILE exists; false when it does not within SECONDS.
wait_for() {
  local deadline=$((SECONDS + $2))
  while [[ ! -e $1 ]]; do ((SECONDS < deadline)) || return 1; sleep 0.05; done
}
# The command under the lock: notes when it started, when it was stopped (SIGTERM) or ended, and
# runs until FILE.finish appears.
command_for() {
  local f=$1
  echo "echo \$(date +%s%N) > $f.started; trap 'echo \$(date +%s%N) > $f.stopped; exit 143' TERM; while [ ! -e $f.finish ]; do sleep 0.05; done; echo \$(date +%s%N) > $f.ended"
}

# run_cell T_SECONDS X: every client's TRIALS trials of one blip length, at once. Prints one line
# per client: "client kept stopped two". Run it in this shell (not $(...)): it adds to $pids.
run_cell() {
  local t=$1 x=$2 k=0 trial client f lockpath
  local cell_pids=() blip_pids=() files=() clients_of=() slots=()
  local d_ms; d_ms=$(awk -v t="$t" -v x="$x" 'BEGIN { printf "%d", t * x * 1000 }')
  for client in $CLIENTS; do
    for ((trial = 1; trial <= TRIALS; trial++)); do
      k=$((k + 1))
      f=$work/T$t-x$x-$client-$trial
      lockpath=/reliability-kernel/$$/T$t-x$x-$client-$trial
      local connect; connect=$(address "$k" 2):$port
      case $client in
        zklock) ip netns exec "${prefix}n$k" "$cli" exec -q --connect "$connect" --session-timeout "${t}s" \
                  "$lockpath" -- sh -c "$(command_for "$f")" >"$f.holder.log" 2>&1 & ;;
        curator-lost|curator-suspended)
                ip netns exec "${prefix}n$k" java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
                  -cp "$work/cls:$CURATOR_CP" CuratorExec "$connect" $((t * 1000)) "${client#curator-}" \
                  "$lockpath" sh -c "$(command_for "$f")" >"$f.holder.log" 2>&1 & ;;
        *) die "unknown client $client" ;;
      esac
      cell_pids+=($!); pids+=($!); files+=("$f"); clients_of+=("$client"); slots+=("$k")
    done
  done
  # Every holder holds, then every waiter queues.
  for f in "${files[@]}"; do
    wait_for "$f.started" 60 || die "a holder never started its command: $(tail -3 "$f.holder.log")"
  done
  for i in "${!files[@]}"; do
    f=${files[$i]}
    lockpath=/reliability-kernel/$$/$(basename "$f")
    "$cli" exec -q --connect "$server_host_side:$port" --session-timeout "${t}s" "$lockpath" -- \
      sh -c "echo \$(date +%s%N) > $f.waiter" >"$f.waiter.log" 2>&1 &
    pids+=($!)
    for ((j = 0; j < 300; j++)); do
      "$cli" status --connect "$server_host_side:$port" "$lockpath" 2>/dev/null | grep -q ': 2 contenders' && break
      sleep 0.1
    done
  done
  # The blips, each from a random point of its first T/10.
  for i in "${!files[@]}"; do
    ( sleep "$(awk -v r=$RANDOM -v t="$t" 'BEGIN { printf "%.3f", r / 32768 * t / 10 }')"
      now >"${files[$i]}.cut"; cut "${slots[$i]}"
      sleep "$(awk -v d="$d_ms" 'BEGIN { printf "%.3f", d / 1000 }')"
      heal "${slots[$i]}"; now >"${files[$i]}.healed" ) &
    blip_pids+=($!)
  done
  wait "${blip_pids[@]}"
  # Settled: T after the last heal a silent session has expired on the server and its waiter got
  # in; a holder whose command still runs then has kept its lock. Let the commands finish.
  local deadline=$(($(date +%s) + t + 3))
  while (($(date +%s) < deadline)); do sleep 0.2; done
  for f in "${files[@]}"; do touch "$f.finish"; done
  for pid in "${cell_pids[@]}"; do
    for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  for f in "${files[@]}"; do wait_for "$f.waiter" 10 || true; done
  # The verdicts.
  for client in $CLIENTS; do
    local kept=0 stopped=0 two=0
    for i in "${!files[@]}"; do
      [[ ${clients_of[$i]} == "$client" ]] || continue
      f=${files[$i]}
      local waiter=; [[ -e $f.waiter ]] && waiter=$(<"$f.waiter")
      local end=; [[ -e $f.stopped ]] && end=$(<"$f.stopped"); [[ -z $end && -e $f.ended ]] && end=$(<"$f.ended")
      if [[ -n $waiter && ( -z $end || $waiter -lt $end ) ]]; then two=$((two + 1))
      elif [[ -e $f.stopped ]]; then stopped=$((stopped + 1))
      elif [[ -e $f.ended ]]; then kept=$((kept + 1))
      fi
    done
    echo "$client $kept $stopped $two"
  done
}

declare -A cells
for t in $SESSIONS; do
  for x in $BLIPS; do
    echo "reliability_kernel: T = ${t} s, blip $x T ..." >&2
    run_cell "$t" "$x" >"$work/cell"  # not in a subshell: its processes stay in $pids
    while read -r client kept stopped two; do
      cells[$client,$t,$x]="$kept / $stopped / $two"
    done <"$work/cell"
  done
done

header="| holder | T |"; rule="|---|---|"
for x in $BLIPS; do header+=" $x T |"; rule+="---|"; done
echo "Kept / stopped / two holders, of $TRIALS trials per cell (zklock $("$cli" --version 2>/dev/null | head -1 || echo '?'), Curator 5.4):"
echo
echo "$header"; echo "$rule"
for client in $CLIENTS; do
  for t in $SESSIONS; do
    line="| $client | ${t} s |"
    for x in $BLIPS; do line+=" ${cells[$client,$t,$x]} |"; done
    echo "$line"
  done
done
