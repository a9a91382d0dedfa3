# Sourced by the other scripts: installs the Debian packages zklock needs, if any is missing.
# Needs root (or sudo) only when something is missing.
ZKLOCK_PACKAGES=(
  cmake g++ make                       # build
  libzookeeper-mt-dev zookeeper        # the C client; the server the tests and demo start
  default-jdk-headless                 # Java 17 runs the server; javac builds the Curator contender
  libgtest-dev libgmock-dev            # tests
  libbenchmark-dev                     # micro-benchmarks
  libcli11-dev nlohmann-json3-dev      # the zklock CLI
  libsqlite3-dev                       # the fenced-counter example
  libcurator-recipes-java python3-kazoo  # interop tests: Apache Curator and kazoo on one path
  bc procps                            # scripts
  iproute2                             # ip and tc: the kernel-fault tests (tests/netfaults)
)

zklock_install_deps() {
  local missing=()
  for p in "${ZKLOCK_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "zklock: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
