#!/usr/bin/env bash
# Builds fio with its http engine (S3 targets need it) from Debian's own fio source package,
# into /usr/local/lib/storbench/fio. Debian's fio package is built without libcurl, so its fio
# has no `http` engine; this build is the same fio version with it and with every engine
# Debian's has. The distribution's /usr/bin/fio is left alone.
#
# One change to fio's source (fio-http-404.patch): its http engine reads a missing object
# (HTTP 404) as zeroes and counts the GET a success, silently; this fio also prints one line
# on stderr for each such GET, so storbench counts them (fio checks no read of a mixed
# randrw job). Nothing else fio does or reports changes.
#
# Once: when the build is there and has the http engine, this does nothing. Needs root (or
# sudo) for apt-get and the install. storbench uses this fio when it is there (STORBENCH_FIO
# names another; STORBENCH_FIO=fio means the one on PATH).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

PREFIX="${STORBENCH_FIO_PREFIX:-/usr/local/lib/storbench/fio}"
RECIPE=4 # raise when what this script builds changes, so cached builds are redone
has_http() { "$1" --enghelp 2>/dev/null | grep -qx '[[:space:]]*http'; }

if [ -x "$PREFIX/bin/fio" ] && has_http "$PREFIX/bin/fio" \
  && [ "$(cat "$PREFIX/storbench-recipe" 2>/dev/null)" = "$RECIPE" ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "build-fio-http: needs root to install build dependencies and $PREFIX" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
echo "storbench setup: building fio with its http engine into $PREFIX (once, a few minutes)"

# A deb-src entry for the suites the machine already uses, so `apt-get source` finds fio.
SRC=/etc/apt/sources.list.d/storbench-deb-src.sources
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$SRC" >/dev/null
  else
    grep -hs '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
      | $SUDO tee /etc/apt/sources.list.d/storbench-deb-src.list >/dev/null
  fi
fi
$SUDO apt-get update -qq
# Debian's own build dependencies of fio (so this fio has every engine Debian's has: libaio,
# rados/rbd, rdma, gfapi, nbd, pmem), without its GUI and docs, plus libcurl/OpenSSL for http.
deps=(build-essential dpkg-dev patch pkg-config flex bison libcurl4-openssl-dev libssl-dev zlib1g-dev
  libaio-dev librados-dev librbd-dev librdmacm-dev libibverbs-dev libnuma-dev libglusterfs-dev
  libnbd-dev)
case "$(dpkg --print-architecture)" in
  amd64 | arm64 | ppc64el) deps+=(libpmem-dev libpmemblk-dev) ;;
esac
$SUDO apt-get install -y -qq --no-install-recommends "${deps[@]}" >/dev/null

work="$(mktemp -d /tmp/storbench-fio-build.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get source -qq fio >/dev/null 2>&1 || apt-get source fio
src="$(find . -maxdepth 1 -type d -name 'fio-*' | head -n 1)"
cd "$src"
patch -s -p1 <"$HERE/fio-http-404.patch"
./configure --prefix="$PREFIX" --enable-libnbd >configure.log
if ! grep -q '^http engine *yes' configure.log; then
  cat configure.log >&2
  echo "build-fio-http: fio's configure did not enable the http engine (libcurl/openssl dev?)" >&2
  exit 1
fi
make -s -j"$(nproc)" >/dev/null
$SUDO make -s install >/dev/null
has_http "$PREFIX/bin/fio" || { echo "build-fio-http: the built fio has no http engine" >&2; exit 1; }
echo "$RECIPE" | $SUDO tee "$PREFIX/storbench-recipe" >/dev/null
echo "storbench setup: $("$PREFIX/bin/fio" --version) with http at $PREFIX/bin/fio"
