#!/bin/bash
# Rebuilds tests/data/fio-versions/: real fio JSON outputs from many fio versions.
#
#   record.sh build GITDIR TAG...   build fio TAGs from a fio git dir (bare is fine) into
#                                   /tmp/fio-src/TAG, copy each ./fio to /tmp/fio-builds/TAG/fio
#   record.sh run [FIO...]          run the jobs with each fio binary (default: /tmp/fio-builds/*/fio)
#                                   and write <TAG>/ next to this script (TAG = `fio --version`)
#
# Scratch files go only to a mktemp dir under /tmp (one fresh dir per run); never a device.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)

compat_raw_h() { # the <linux/raw.h> that uapi headers shipped until Linux 5.14
  mkdir -p /tmp/fio-compat/include/linux
  cat > /tmp/fio-compat/include/linux/raw.h <<'H'
#ifndef __LINUX_RAW_H
#define __LINUX_RAW_H
#include <linux/types.h>
#define RAW_SETBIND	_IO( 0xac, 0 )
#define RAW_GETBIND	_IO( 0xac, 1 )
struct raw_config_request
{
	int	raw_minor;
	__u64	block_major;
	__u64	block_minor;
};
#endif
H
}

build_one() { # GITDIR TAG -> 0 if /tmp/fio-builds/TAG/fio exists
  local D=$1 T=$2 S=/tmp/fio-src/$2 L=/tmp/fio-src/$2.build.log CONF ARGS a
  rm -rf "$S"; mkdir -p "$S" /tmp/fio-builds/"$T"
  git --git-dir="$D" archive "$T" | tar -x -C "$S" || return 1
  # glibc >= 2.30 declares gettid(); fio < 3.16 defines its own static gettid() in
  # os/os-linux.h ("static declaration of 'gettid' follows non-static declaration"):
  # rename fio's copy so the callers use glibc's.
  sed -i 's/^static inline int gettid(void)$/static inline int fio_old_gettid(void)/' "$S/os/os-linux.h"
  CONF="--prefix=/tmp/fio-builds/$T"
  # no optional engines: this machine has librbd/gfapi/libpmem/rdma dev files, and old
  # fio's engines for them don't compile against today's libraries (e.g. fio-3.0
  # engines/glusterfs.c: "too few arguments to function 'glfs_ftruncate'").
  for o in native rdma rbd rbd-blkin gfapi pmem http rados tcmalloc libhdfs; do
    grep -q -- "--disable-$o)" "$S/configure" && CONF="$CONF --disable-$o"
  done
  (cd "$S" && echo "./configure $CONF" && timeout 120 ./configure $CONF) > "$L" 2>&1
  # versions without those --disable options: drop the engines' CONFIG_ lines afterwards
  OPT='CONFIG_(RDMA|RBD[A-Z_]*|GFAPI|GF_[A-Z_]*|LIBPMEM|PMEMBLK|LINUX_DEVDAX|HTTP|RADOS|LIBHDFS|TCMALLOC)'
  sed -i -E "/^$OPT=/d" "$S/config-host.mak"
  sed -i -E "/^#define $OPT\b/d" "$S/config-host.h"
  echo "== after stripping optional engines:" >> "$L"; grep -E "$OPT" "$S/config-host.mak" "$S/config-host.h" >> "$L"
  # Linux >= 5.14 uapi headers dropped <linux/raw.h>, which fio < 3.27 includes from
  # os/os-linux.h: give it the header's old content from a compat include dir.
  compat_raw_h
  # gcc >= 10 defaults to -fno-common: old fio then fails to link ("multiple definition of ...");
  # so -fcommon first (harmless for new fio), then without it.
  for a in "-fcommon" ""; do
    ARGS="EXTFLAGS=-I/tmp/fio-compat/include $a"
    echo "=== make -j2 $ARGS" >> "$L"
    if (cd "$S" && timeout 300 make -j2 "$ARGS") >> "$L" 2>&1 && [ -x "$S/fio" ]; then
      cp "$S/fio" /tmp/fio-builds/"$T"/fio
      echo "built $T (make -j2 '$ARGS')"; return 0
    fi
    (cd "$S" && make clean) > /dev/null 2>&1
  done
  echo "FAILED $T, see $L"; return 1
}

write_jobs() { # OUTDIR FFMT_SUPPORTED
  cat > "$1/randread.fio" <<'J'
[randread]
rw=randread
bs=4k
ioengine=psync
size=16m
filename=rr.dat
J
  cat > "$1/randrw-unified.fio" <<'J'
[randrw-unified]
rw=randrw
rwmixread=70
bs=4k
ioengine=psync
size=8m
filename=rw.dat
unified_rw_reporting=1
J
  cat > "$1/two-groups.fio" <<'J'
[global]
bs=64k
size=8m
ioengine=psync

[seqwrite]
rw=write
filename=g.dat

[seqread]
rw=read
filename=g.dat
stonewall
new_group
J
  if [ "$2" = 1 ]; then
    cat > "$1/numjobs2-group.fio" <<'J'
[numjobs2-group]
rw=randwrite
bs=4k
ioengine=psync
size=4m
numjobs=2
group_reporting=1
filename_format=nj.$jobnum
J
  else  # no filename_format: fio's default names numjobs2-group.N.0 in cwd
    cat > "$1/numjobs2-group.fio" <<'J'
[numjobs2-group]
rw=randwrite
bs=4k
ioengine=psync
size=4m
numjobs=2
group_reporting=1
J
  fi
}

has_option() { # FIO OPTION
  "$1" --cmdhelp="$2" 2>&1 | grep -qE "^ *$2:"
}

run_one() { # FIO OUTDIR JOB FMT(json|json+) SUFFIX
  local FIO=$1 OUT=$2 JOB=$3 FMT=$4 SUF=$5 SCR rc
  SCR=$(mktemp -d /tmp/fio-rec.XXXXXX)
  cp "$OUT/$JOB.fio" "$SCR/"
  (cd "$SCR" && "$FIO" --output-format="$FMT" "$JOB.fio" > "$OUT/$JOB-$SUF.json" 2> "$OUT/$JOB-$SUF.stderr")
  rc=$?
  [ -s "$OUT/$JOB-$SUF.stderr" ] || rm -f "$OUT/$JOB-$SUF.stderr"
  [ $rc = 0 ] || echo $rc > "$OUT/$JOB-$SUF.exitcode"
  rm -rf "$SCR"
  return $rc
}

record_version() { # FIO
  local FIO=$1 TAG OUT ffmt=0 jobs J err
  TAG=$("$FIO" --version | head -1 | tr -d '\r')
  OUT=$HERE/$TAG
  rm -rf "$OUT"; mkdir -p "$OUT"
  has_option "$FIO" filename_format && ffmt=1
  write_jobs "$OUT" $ffmt
  [ $ffmt = 1 ] || echo "numjobs2-group: no filename_format option in $TAG ('$FIO --cmdhelp=filename_format' does not list it); default file names used" >> "$OUT/skipped.txt"
  jobs="randread randrw-unified two-groups numjobs2-group"
  if ! has_option "$FIO" unified_rw_reporting; then
    echo "randrw-unified: no unified_rw_reporting option in $TAG; job skipped" >> "$OUT/skipped.txt"
    rm -f "$OUT/randrw-unified.fio"; jobs="randread two-groups numjobs2-group"
  fi
  for J in $jobs; do
    run_one "$FIO" "$OUT" $J json json
    if ! run_one "$FIO" "$OUT" $J json+ jsonplus; then
      err=$(cat "$OUT/$J-jsonplus.json" "$OUT/$J-jsonplus.stderr" 2>/dev/null | head -3)
      if echo "$err" | grep -qiE 'output.format|json\+'; then
        # this fio has no json+: keep the exact error, drop the outputs
        echo "$J: json+ rejected, fio said: $err" >> "$OUT/skipped.txt"
        rm -f "$OUT/$J-jsonplus."*
      fi
    fi
  done
  echo "recorded $TAG in $OUT"
}

case "${1:-run}" in
  build) shift; D=$1; shift; for T in "$@"; do build_one "$D" "$T"; done ;;
  run) shift || true
       if [ $# = 0 ]; then set -- /tmp/fio-builds/*/fio; fi
       for F in "$@"; do record_version "$F"; done ;;
  *) echo "usage: $0 build GITDIR TAG... | run [FIO...]" >&2; exit 2 ;;
esac
