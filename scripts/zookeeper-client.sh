#!/usr/bin/env bash
# Builds ZooKeeper's own C client (libzookeeper_mt) WITH TLS (OpenSSL) into PREFIX, from Debian's
# source package of the very zookeeper version installed here. Nothing of that source lives in
# this repository: it is fetched with `apt-get source` (a deb-src line for the installed suites is
# added if none exists), the jute-generated C sources are made with the Rcc compiler in Debian's
# /usr/share/java/zookeeper-jute.jar, and the client's own autotools build installs the library
# and its headers. docs/security.md says how zklock uses it.
#
#   scripts/zookeeper-client.sh PREFIX
#
# Idempotent and cached: when PREFIX already holds a libzookeeper_mt that exports
# zookeeper_init_ssl, built from the installed version (PREFIX/zookeeper-version), it does nothing.
# The sources and the build tree go to PREFIX.work (kept: a rebuild then skips the download).
# Then: cmake -S . -B build-tls -DZooKeeper_ROOT=PREFIX
#
# Environment: ZKLOCK_ZK_CFLAGS (e.g. "-fsanitize=address -g -O1": a C client built with ASan;
# part of the cache key), JOBS (default 2).
#
# The library has the SONAME of Debian's (libzookeeper_mt.so.2): a program linked against PREFIX
# must find it there at run time (zklock's build tree does, through its RPATH).
set -euo pipefail
prefix=${1:?usage: scripts/zookeeper-client.sh PREFIX}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
work="$prefix.work"
cflags=${ZKLOCK_ZK_CFLAGS:-}
jobs=${JOBS:-2}
ver=$(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null) || {
  echo "zookeeper-client.sh: the zookeeper package is not installed (scripts/deps.sh)" >&2
  exit 1
}
stamp="$ver cflags=[$cflags]"
has_tls() { nm -D "$1" 2>/dev/null | grep -q ' T zookeeper_init_ssl$'; }
if [ -f "$prefix/zookeeper-version" ] && [ "$(cat "$prefix/zookeeper-version")" = "$stamp" ] &&
   has_tls "$prefix/lib/libzookeeper_mt.so" && [ -f "$prefix/include/zookeeper/zookeeper.h" ]; then
  echo "zookeeper-client.sh: $prefix already holds the TLS client ($stamp)"
  exit 0
fi
step() { echo "zookeeper-client.sh [+${SECONDS}s] $*"; }
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

# 1. What the build needs: dpkg-dev (apt-get source unpacks with dpkg-source), OpenSSL's headers,
#    autotools (the client's CMake build has no install rules), Java for Rcc.
need=()
for p in dpkg-dev libssl-dev autoconf automake libtool make gcc default-jdk-headless; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list 2>/dev/null; then
  step "adding deb-src for the installed suites"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      $sudo tee /etc/apt/sources.list.d/debian-src.sources >/dev/null
  else
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list | $sudo tee /etc/apt/sources.list.d/debian-src.list >/dev/null
  fi
  need_update=1
fi
if [ ${#need[@]} -gt 0 ] || [ -n "${need_update:-}" ]; then
  step "apt-get update"
  $sudo apt-get update -qq
fi
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# 2. The source of the installed version (fetched once; dpkg-source applies Debian's patches).
mkdir -p "$work"
src=$(ls -d "$work"/zookeeper-3.*/ 2>/dev/null | head -1 || true)
if [ -z "$src" ] || [ ! -f "$work/source-version" ] || [ "$(cat "$work/source-version")" != "$ver" ]; then
  step "apt-get source zookeeper=$ver"
  rm -rf "${work:?}"/zookeeper*
  (cd "$work" && apt-get source -qq "zookeeper=$ver" 2>&1 | grep -vE 'unsandboxed|^dpkg-source: info' || true)
  src=$(ls -d "$work"/zookeeper-3.*/ | head -1)
  echo "$ver" >"$work/source-version"
fi
c="$src/zookeeper-client/zookeeper-client-c"
[ -f "$c/src/zookeeper.c" ] || { echo "zookeeper-client.sh: no C client in $src" >&2; exit 1; }

# 3. The jute-generated sources, with Debian's own Rcc.
if [ ! -f "$c/generated/zookeeper.jute.c" ]; then
  step "jute sources (Rcc)"
  mkdir -p "$c/generated"
  (cd "$c/generated" && java -cp /usr/share/java/zookeeper-jute.jar org.apache.jute.compiler.generated.Rcc \
    -l c "$src/zookeeper-jute/src/main/resources/zookeeper.jute" >/dev/null)
fi

# 4. OpenSSL 3 has no FIPS_mode(), which 3.8.0 calls only to log whether FIPS is on: use the
#    OpenSSL 3 call that answers the same question.
if grep -q 'if (FIPS_mode() == 0)' "$c/src/zookeeper.c"; then
  step "OpenSSL 3: FIPS_mode -> EVP_default_properties_is_fips_enabled"
  sed -i -e 's/if (FIPS_mode() == 0) {/if (EVP_default_properties_is_fips_enabled(NULL) == 0) {/' \
         -e 's|^#include <openssl/err.h>$|#include <openssl/err.h>\n#include <openssl/evp.h>|' "$c/src/zookeeper.c"
fi

# 5. autotools: configure --with-openssl, build and install the multi-threaded library only.
if [ ! -x "$c/configure" ]; then
  step autoreconf
  (cd "$c" && autoreconf -if >/dev/null 2>&1)
fi
rm -rf "$work/build" && mkdir -p "$work/build"
step "configure (--with-openssl${cflags:+, CFLAGS $cflags})"
(cd "$work/build" && CFLAGS="-g -O2 $cflags" LDFLAGS="$cflags" "$c/configure" -q --prefix="$prefix" \
   --without-cppunit --with-openssl --without-sasl >/dev/null)
step make
make -C "$work/build" -s -j"$jobs" lib_LTLIBRARIES=libzookeeper_mt.la >/dev/null
rm -rf "${prefix:?}/lib" "${prefix:?}/include"
make -C "$work/build" -s lib_LTLIBRARIES=libzookeeper_mt.la install-libLTLIBRARIES install-pkgincludeHEADERS >/dev/null
rm -f "$prefix/lib/libzookeeper_mt.la"
has_tls "$prefix/lib/libzookeeper_mt.so" || {
  echo "zookeeper-client.sh: $prefix/lib/libzookeeper_mt.so has no zookeeper_init_ssl" >&2
  exit 1
}
echo "$stamp" >"$prefix/zookeeper-version"
step "done: $prefix/lib/libzookeeper_mt.so ($stamp, exports zookeeper_init_ssl)"
