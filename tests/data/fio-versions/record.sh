#!/bin/bash
# Rebuilds tests/data/fio-versions/: real fio JSON outputs from many fio versions.
#
#   record.sh build GITDIR TAG...   build fio TAGs from a fio git dir (bare is fine) into
#                                   /tmp/fio-src/TAG, copy each ./fio to /tmp/fio-builds/TAG/fio
#   record.sh facts                 print the JSON shape facts per version (for README.md)
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
  CONF=""  # fio < 2.2 has no --prefix (./fio is used in place anyway)
  grep -q -- '--prefix=' "$S/configure" && CONF="--prefix=/tmp/fio-builds/$T"
  # no optional engines: this machine has librbd/gfapi/libpmem/rdma dev files, and old
  # fio's engines for them don't compile against today's libraries (e.g. fio-3.0
  # engines/glusterfs.c: "too few arguments to function 'glfs_ftruncate'").
  for o in native rdma rbd rbd-blkin gfapi pmem http rados tcmalloc libhdfs; do
    grep -q -- "--disable-$o)" "$S/configure" && CONF="$CONF --disable-$o"
  done
  (cd "$S" && echo "./configure $CONF" && timeout 120 ./configure $CONF) > "$L" 2>&1
  # versions without those --disable options: drop the engines' CONFIG_ lines afterwards
  # (MTD too: fio-2.2.10's lib/libmtd.h fails with "unknown type name 'uint8_t'")
  OPT='CONFIG_(RDMA|RBD[A-Z_]*|GFAPI|GF_[A-Z_]*|LIBPMEM|PMEMBLK|LINUX_DEVDAX|HTTP|RADOS|LIBHDFS|TCMALLOC|MTD)'
  sed -i -E "/^$OPT=/d" "$S/config-host.mak"
  sed -i -E "/^#define $OPT\b/d" "$S/config-host.h"
  echo "== after stripping optional engines:" >> "$L"; grep -E "$OPT" "$S/config-host.mak" "$S/config-host.h" >> "$L"
  # Linux >= 5.14 uapi headers dropped <linux/raw.h>, which fio < 3.27 includes from
  # os/os-linux.h: give it the header's old content from a compat include dir.
  compat_raw_h
  # gcc >= 10 defaults to -fno-common: old fio then fails to link ("multiple definition of ...").
  # glibc >= 2.28 no longer gets major()/minor() from <sys/types.h>: fio < 3.0 then fails to
  # link ("undefined reference to `major'" from oslib/linux-dev-lookup.c), so force-include
  # <sys/sysmacros.h>. Both are harmless for newer fio.
  ARGS="EXTFLAGS=-I/tmp/fio-compat/include -include sys/sysmacros.h -fcommon"
  echo "=== make -j2 $ARGS" >> "$L"
  if (cd "$S" && timeout 300 make -j2 "$ARGS") >> "$L" 2>&1 && [ -x "$S/fio" ]; then
    cp "$S/fio" /tmp/fio-builds/"$T"/fio
    echo "built $T (make -j2 '$ARGS')"; return 0
  fi
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
    elif ! grep -q '^{' "$OUT/$J-jsonplus.json"; then
      # old fio (< 2.12?) takes an unknown --output-format silently and prints normal text
      echo "$J: --output-format=json+ accepted (exit 0) but the output is fio's normal text output, no JSON; its first line: $(head -1 "$OUT/$J-jsonplus.json")" >> "$OUT/skipped.txt"
      rm -f "$OUT/$J-jsonplus."*
    fi
  done
  echo "recorded $TAG in $OUT"
}

facts() { # print, per version dir, the JSON shape facts the README's table is made from
  python3 - "$HERE" <<'PY'
import json, os, sys, glob
base = sys.argv[1]
def load(p):
    t = open(p).read(); i = t.find('{')
    d, end = json.JSONDecoder().raw_decode(t[i:]); return t[:i], d, t[i+end:]
def vkey(v): return [int(x) for x in v.replace('fio-','').split('.')]
vers = sorted([os.path.basename(p) for p in glob.glob(base+'/fio-*') if os.path.isdir(p)], key=vkey)
DIRS = ('read','write','trim','sync','mixed')
for v in vers:
    out = {}
    def add(k, val): out.setdefault(k, set()).add(str(val))
    for p in sorted(glob.glob(f'{base}/{v}/*.json')):
        name = os.path.basename(p)
        try: pre, d, post = load(p)
        except Exception as e: add('NOT JSON', name); continue
        add('version', d.get('fio version')); add('top', list(d))
        if pre: add('prefix', (name, pre))
        add('tail', repr(post))
        jobs = d['jobs']
        add('njobs:'+name.split('-json')[0], (len(jobs), [x.get('groupid') for x in jobs]))
        for j in jobs:
            dirs = [k for k in DIRS if k in j]
            add('dirs:'+name.split('-json')[0], dirs)
            add('jobkeys', [k for k in j if k not in DIRS])
            for dn in dirs:
                dd = j[dn]
                if dn == 'sync':
                    add('sync keys', list(dd)); continue
                add('dir scalar keys', [k for k in dd if not isinstance(dd[k], dict)])
                if dd.get('total_ios', dd.get('io_kbytes')) == 0: continue
                for k in dd:
                    if isinstance(dd[k], dict):
                        add('latobj '+k, sorted(x for x in dd[k] if x not in ('bins',)) )
                        if 'percentile' in dd[k]: add('pct keys sample '+k, list(dd[k]['percentile'])[:2])
                        if 'bins' in dd[k]:
                            b = dd[k]['bins']; ks = list(b)
                            nz = [x for x in ks if not x.startswith('FIO') and b[x] != 0]
                            meta = {x: b[x] for x in ks if x.startswith('FIO')}
                            cnt = sum(b[x] for x in ks if not x.startswith('FIO'))
                            n = dd[k].get('N', dd.get('total_ios'))
                            add('bins '+k, f'nkeys={len(ks)} meta={meta} first={ks[:3]} zeros={len(ks)-len(meta)-len(nz)} sum={cnt} N/total_ios={n}')
                if 'iops' in dd: add('iops type', type(dd['iops']).__name__)
            for k in ('latency_ns','latency_us','latency_ms'):
                if k in j: add(k+' keys', list(j[k])[:3])
        if 'global options' in d: add('global options', d['global options'])
    print('##', v)
    for k, vals in out.items():
        for val in sorted(vals): print(f'  {k}: {val}')
PY
}

case "${1:-run}" in
  build) shift; D=$1; shift; for T in "$@"; do build_one "$D" "$T"; done ;;
  run) shift || true
       if [ $# = 0 ]; then set -- /tmp/fio-builds/*/fio; fi
       for F in "$@"; do record_version "$F"; done ;;
  facts) facts ;;
  *) echo "usage: $0 build GITDIR TAG... | run [FIO...] | facts" >&2; exit 2 ;;
esac
