# Sourced by the other scripts: installs the Debian 12 packages zklock uses, if any is missing.
# Needs root (or sudo) only when something is missing.
#   zklock_install_deps          what building and running the tests, examples and tools need
#   zklock_install_deps gates    that, and what CI's gates need (scripts/test.sh ci)
ZKLOCK_PACKAGES=(
  cmake g++ make                       # build
  libzookeeper-mt-dev zookeeper        # the C client; the server the tests and demo start
  default-jdk-headless                 # Java 17 runs the server; javac builds the Curator contender
                                       # and the wrap suite's snapshot seeder
  libgtest-dev                         # tests
  libcli11-dev nlohmann-json3-dev      # the zklock CLI
  libcpp-httplib-dev                   # the CLI's --metrics-listen, the metrics_http example, the
                                       # scrape test (the library does not use it)
  libsqlite3-dev                       # the fenced-counter example
  libasio-dev                          # the asio_requests example (the library does not use it)
  libcurator-recipes-java python3-kazoo  # interop tests: Apache Curator and kazoo on one path
  prometheus                           # tests/metrics: a real Prometheus scrapes zklock's figures
  curl                                 # the demo reads the metrics_http example's /metrics
  pkg-config                           # tests/consumers: a consumer linked with pkg-config
  iproute2                             # tests/netfaults: network namespaces, veth links, tc
  tmux                                 # tests/cli: `zklock status --watch` in a real terminal
)
ZKLOCK_GATE_PACKAGES=(
  clang-format clang-tidy              # scripts/format.sh --check, scripts/tidy.sh
  clang libclang-rt-14-dev             # tests/fuzz: clang 14 and its libFuzzer and sanitizer runtimes
  doxygen                              # the API reference (target docs)
  procps                               # pgrep: scripts/test.sh ci renices its background work
  # The tls gate: scripts/zookeeper-client.sh builds ZooKeeper's C client with OpenSSL from
  # Debian's source package (apt-get source needs dpkg-dev; autotools build it), and tests/tls
  # captures loopback traffic with tcpdump.
  libssl-dev dpkg-dev autoconf automake libtool tcpdump
  gdb                                  # tests/faults: the stacks of a holder that does not exit
)

zklock_install_deps() {
  local wanted=("${ZKLOCK_PACKAGES[@]}")
  [ "${1:-}" = "gates" ] && wanted+=("${ZKLOCK_GATE_PACKAGES[@]}")
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "zklock: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
