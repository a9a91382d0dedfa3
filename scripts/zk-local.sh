#!/usr/bin/env bash
# A throwaway standalone ZooKeeper (Debian's zookeeper package) on 127.0.0.1:PORT in DIR.
#   scripts/zk-local.sh start DIR PORT   |   scripts/zk-local.sh stop DIR
set -euo pipefail
J=/usr/share/java
CP=$(printf "$J/%s:" zookeeper.jar zookeeper-jute.jar slf4j-api.jar slf4j-nop.jar netty-handler.jar \
  netty-common.jar netty-buffer.jar netty-transport.jar netty-codec.jar netty-resolver.jar \
  netty-transport-native-epoll.jar netty-transport-native-unix-common.jar metrics-core.jar \
  commons-io.jar snappy-java.jar)
ruok() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1; printf ruok >&3; cat <&3" 2>/dev/null; }
case ${1:-} in
start)
  dir=$2 port=$3
  mkdir -p "$dir/data"
  cat >"$dir/zoo.cfg" <<CFG
tickTime=500
minSessionTimeout=1000
maxSessionTimeout=60000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
CFG
  setsid java -Xmx256m -cp "$CP" org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
    >"$dir/server.log" 2>&1 &
  echo $! >"$dir/pid"
  for _ in $(seq 100); do ruok "$port" | grep -q imok && exit 0; sleep 0.1; done
  echo "zookeeper did not start; see $dir/server.log" >&2
  exit 1 ;;
stop)
  pid=$(cat "$2/pid" 2>/dev/null) || exit 0
  kill -CONT "$pid" 2>/dev/null || true
  kill "$pid" 2>/dev/null || exit 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true ;;
*) echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 64 ;;
esac
