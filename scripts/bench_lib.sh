# scripts/bench_lib.sh: what the benchmark drivers share (sourced by bench_compare.sh and
# bench_fleet.sh; defines functions and nothing else runs): four-letter words over bash's
# /dev/tcp, the classpaths of Debian's ZooKeeper and Curator jars, the Curator peer's compilation,
# and stopping a process.

# fourlw PORT WORD: the server's answer to a four-letter word on 127.0.0.1:PORT ("" if none in 3 s).
fourlw() { timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1; printf %s $2 >&3; cat <&3" 2>/dev/null; }
# port_in_use PORT: something accepts connections on 127.0.0.1:PORT.
port_in_use() { timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# bench_classpaths: sets J (JAVA_DIR, default /usr/share/java), ZK_CP (the server's classpath,
# ZK_CLASSPATH overrides) and CURATOR_CP (the Curator peer's).
bench_classpaths() {
  J=${JAVA_DIR:-/usr/share/java}
  ZK_CP=${ZK_CLASSPATH:-$J/zookeeper.jar:$J/zookeeper-jute.jar:$J/slf4j-api.jar:$J/slf4j-nop.jar:$J/netty-handler.jar:$J/netty-common.jar:$J/netty-buffer.jar:$J/netty-transport.jar:$J/netty-codec.jar:$J/netty-resolver.jar:$J/netty-transport-native-epoll.jar:$J/netty-transport-native-unix-common.jar:$J/metrics-core.jar:$J/commons-io.jar:$J/snappy-java.jar}
  CURATOR_CP=$J/curator-framework.jar:$J/curator-client.jar:$J/curator-recipes.jar:$J/zookeeper.jar:$J/zookeeper-jute.jar:$J/guava.jar:$J/slf4j-api.jar:$J/slf4j-nop.jar:$J/netty-handler.jar:$J/netty-common.jar:$J/netty-buffer.jar:$J/netty-transport.jar:$J/netty-codec.jar:$J/netty-resolver.jar:$J/netty-transport-native-epoll.jar:$J/netty-transport-native-unix-common.jar
}

# compile_curator CLASS_DIR LOG: compiles tools/bench/peers/CuratorBench.java into CLASS_DIR
# (bench_classpaths first); fails when javac or the Curator jars are missing.
compile_curator() {
  command -v javac >/dev/null && [[ -f $J/curator-recipes.jar ]] &&
    javac -d "$1" -cp "$CURATOR_CP" "$(dirname "${BASH_SOURCE[0]}")/../tools/bench/peers/CuratorBench.java" 2>"$2"
}

# stop_pid PID: SIGTERM, up to 5 s to exit, then SIGKILL; reaps it when it is our child.
stop_pid() {
  [[ -n ${1:-} ]] || return 0
  kill "$1" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 0
}
