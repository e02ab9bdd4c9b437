#!/usr/bin/env bash
# Record real fio outputs used as fixtures by the fio parser's unit tests.
#
# Regenerates every NAME.fio (job file actually used) and NAME.json (fio's
# stdout, byte for byte) in the directory holding this script.  Never edit
# the .json files by hand: rerun this script instead.
#
#   sudo tests/data/fio/record.sh          # needs root (mounts a 1 MiB tmpfs)
#
# Environment: FIO (fio binary, default "fio"), PORT1/PORT2 (loopback ports of
# the two fio servers, default 18765/18766), PYTHON (for the sanity checks).
#
# Scratch files live in a mktemp dir; every fio run is started with that
# directory (or a subdirectory) as cwd, so job files use relative file names
# and are byte-identical between recordings.  Servers listen on 127.0.0.1 only.
# Each run is capped at <= 3 s of I/O; the whole script takes well under 90 s.
set -euo pipefail

OUT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIO=${FIO:-fio}
PORT1=${PORT1:-18765}
PORT2=${PORT2:-18766}
PYTHON=${PYTHON:-python3}
RUN_TIMEOUT=30          # hard stop for any single fio invocation (hang guard)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/storbench-fio-record.XXXXXX")
SERVER_PIDS=()
MOUNTS=()

cleanup() {
    local pid m
    for pid in "${SERVER_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${SERVER_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    for m in "${MOUNTS[@]}"; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() { echo "record.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (mounts a tmpfs for the ENOSPC case)"
command -v "$FIO" >/dev/null || die "fio not found ($FIO)"
echo "fio: $("$FIO" --version)   scratch: $WORK   out: $OUT"

# Remove what a previous recording left, so the set of files is exactly this run's.
rm -f "$OUT"/*.json "$OUT"/*.fio "$OUT"/*.exitcode "$OUT"/*.stderr

# job NAME  -- writes stdin to $OUT/NAME.fio
job() { cat > "$OUT/$1.fio"; }

# rec NAME EXPECTED_RC [fio options...] -- runs fio on $OUT/NAME.fio with cwd
# $WORK/NAME, stdout -> $OUT/NAME.json, stderr -> $OUT/NAME.stderr (kept only
# if non-empty).  EXPECTED_RC "any" accepts any exit status.
rec() {
    local name=$1 expect=$2; shift 2
    local dir="$WORK/$name" rc=0 t0 t1
    mkdir -p "$dir"
    t0=$(date +%s.%N)
    (cd "$dir" && exec timeout -k 5 "$RUN_TIMEOUT" "$FIO" "$@" "$OUT/$name.fio") \
        > "$OUT/$name.json" 2> "$OUT/$name.stderr" || rc=$?
    t1=$(date +%s.%N)
    [ -s "$OUT/$name.stderr" ] || rm -f "$OUT/$name.stderr"
    printf '  %-40s rc=%s  %5.2fs  %s\n' "$name" "$rc" "$(echo "$t1 - $t0" | bc)" "fio $* $name.fio"
    if [ "$expect" != any ] && [ "$rc" != "$expect" ]; then
        cat "$OUT/$name.stderr" >&2 2>/dev/null || true
        die "$name: fio exited $rc, expected $expect"
    fi
    LAST_RC=$rc
}

start_server() {   # start_server PORT DIR
    local port=$1 dir=$2 i
    if ss -ltnH "sport = :$port" | grep -q .; then die "port $port already in use"; fi
    mkdir -p "$dir"
    (cd "$dir" && exec "$FIO" --server="127.0.0.1,$port") > "$dir.log" 2>&1 &
    SERVER_PIDS+=("$!")
    for i in $(seq 50); do
        ss -ltnH "sport = :$port" | grep -q . && return 0
        kill -0 "${SERVER_PIDS[-1]}" 2>/dev/null || { cat "$dir.log" >&2; die "fio server on $port died"; }
        sleep 0.1
    done
    die "fio server on port $port did not start listening"
}

SECONDS=0
echo "recording into $OUT"

# 1. psync 4k randread, direct, 64 MiB file, json ------------------------------
job psync-randread-json <<'EOF'
[psync-randread]
ioengine=psync
direct=1
rw=randread
bs=4k
size=64m
filename=psync-randread.dat
runtime=2
EOF
rec psync-randread-json 0 --output-format=json

# 2. libaio randrw 70/30 qd16, direct, json+ (time_based: 64 MiB alone takes
#    ~0.3 s here, too short for any bw/iops sample at the default 500 ms) -------
job libaio-randrw-jsonplus <<'EOF'
[libaio-randrw]
ioengine=libaio
iodepth=16
direct=1
rw=randrw
rwmixread=70
bs=4k
size=64m
filename=libaio-randrw.dat
time_based=1
runtime=2
EOF
rec libaio-randrw-jsonplus 0 --output-format=json+

# 3. numjobs=4 randwrite, no group_reporting, json+ (4 entries in jobs[]) -----
job numjobs4-nogroup-jsonplus <<'EOF'
[randwrite4]
ioengine=psync
direct=1
rw=randwrite
bs=4k
size=8m
numjobs=4
runtime=2
EOF
rec numjobs4-nogroup-jsonplus 0 --output-format=json+

# 4. same with group_reporting=1, json+ (1 aggregated entry) ------------------
job numjobs4-group-jsonplus <<'EOF'
[randwrite4]
ioengine=psync
direct=1
rw=randwrite
bs=4k
size=8m
numjobs=4
runtime=2
group_reporting=1
EOF
rec numjobs4-group-jsonplus 0 --output-format=json+

# 5. two different job sections, second one stonewalled, json -----------------
job twojobs-sections-json <<'EOF'
[global]
ioengine=psync
direct=1
bs=128k
size=32m
filename=twojobs.dat
runtime=1

[seqread]
rw=read

[seqwrite]
stonewall
rw=write
EOF
rec twojobs-sections-json 0 --output-format=json

# 6. --status-interval=1, time_based 3 s, json: several documents -------------
job status-interval-json <<'EOF'
[status-randread]
ioengine=psync
direct=1
rw=randread
bs=4k
size=16m
filename=status.dat
time_based=1
runtime=3
EOF
rec status-interval-json 0 --status-interval=1 --output-format=json

# 7./8. real client/server on loopback, two servers, one job file each --------
start_server "$PORT1" "$WORK/server1"
start_server "$PORT2" "$WORK/server2"
for fmt in jsonplus json; do
    name=clientserver-2hosts-$fmt
    for h in 1 2; do
        job "$name.host$h" <<EOF
[host$h-randread]
ioengine=libaio
iodepth=8
direct=1
rw=randread
bs=4k
size=16m
filename=cs-host$h.dat
time_based=1
runtime=1
EOF
    done
    [ $fmt = jsonplus ] && ofmt=json+ || ofmt=json
    rc=0; t0=$(date +%s.%N)
    (cd "$WORK" && exec timeout -k 5 "$RUN_TIMEOUT" "$FIO" \
        --client="127.0.0.1,$PORT1" "$OUT/$name.host1.fio" \
        --client="127.0.0.1,$PORT2" "$OUT/$name.host2.fio" \
        --output-format=$ofmt) > "$OUT/$name.json" 2> "$OUT/$name.stderr" || rc=$?
    [ -s "$OUT/$name.stderr" ] || rm -f "$OUT/$name.stderr"
    printf '  %-40s rc=%s  %5.2fs  %s\n' "$name" "$rc" "$(echo "$(date +%s.%N) - $t0" | bc)" \
        "fio --client=127.0.0.1,$PORT1 $name.host1.fio --client=127.0.0.1,$PORT2 $name.host2.fio --output-format=$ofmt"
    [ "$rc" = 0 ] || die "$name: fio exited $rc"
done

# 9. warning on stdout before the JSON: sync engine with iodepth>1 ------------
# fio prints "note: both iodepth >= 1 and synchronous I/O engine are selected,
# queue depth will be capped at 1" on stdout, then the JSON document.
job warning-before-json <<'EOF'
[psync-qd16]
ioengine=psync
iodepth=16
direct=1
rw=randread
bs=4k
size=16m
filename=warning.dat
runtime=1
EOF
rec warning-before-json 0 --output-format=json

# 10. failing job: write 4 MiB into a 1 MiB tmpfs -> ENOSPC, non-zero error ----
mkdir -p "$WORK/error-enospc-json/tiny"
mount -t tmpfs -o size=1m storbench-fio-enospc "$WORK/error-enospc-json/tiny"
MOUNTS+=("$WORK/error-enospc-json/tiny")
job error-enospc-json <<'EOF'
[enospc-write]
ioengine=psync
rw=write
bs=4k
size=4m
filename=tiny/enospc.dat
EOF
rec error-enospc-json any --output-format=json
echo "$LAST_RC" > "$OUT/error-enospc-json.exitcode"
[ "$LAST_RC" != 0 ] || die "error-enospc-json: expected a non-zero exit status"
umount "$WORK/error-enospc-json/tiny"
MOUNTS=()

# 11. null engine, 4k randread qd1, 1 s, json+ --------------------------------
job null-engine-jsonplus <<'EOF'
[null-randread]
ioengine=null
iodepth=1
rw=randread
bs=4k
size=1g
time_based=1
runtime=1
EOF
rec null-engine-jsonplus 0 --output-format=json+

# 12. numjobs=2 randwrite, lat_percentiles=1, no group_reporting, json+ -------
job numjobs2-lat-percentiles-jsonplus <<'EOF'
[randwrite2-lat]
ioengine=psync
direct=1
rw=randwrite
bs=4k
size=8m
numjobs=2
runtime=2
lat_percentiles=1
EOF
rec numjobs2-lat-percentiles-jsonplus 0 --output-format=json+

# 13. exactly 33000 completions (33000 x 4k, each block once), json+, with a
#     percentile_list of ranks where fio's long double threshold
#     (p / 100.0 * N in x87 80-bit precision) needs one sample more than the
#     same computation in double: 99.9 -> 32968th sample, not the 32967th (and
#     likewise for the other non-default entries).  Lets the unit tests check
#     that storbench reproduces fio's percentiles from bins bit for bit.
job percentile-rank-jsonplus <<'EOF'
[rank33000]
ioengine=libaio
iodepth=4
direct=1
rw=randread
bs=4k
size=135168000
filename=rank.dat
percentile_list=50:90:90.9:91.9:92.9:93.7:95:97.2:97.7:98.2:98.7:99:99.2:99.4:99.7:99.9:99.99
EOF
rec percentile-rank-jsonplus 0 --output-format=json+

# 14. buffered 4k randread of a file fio just laid out (through the page cache)
#     and does not drop from it (invalidate=0): the reads come from RAM, json ------
job psync-cached-randread-json <<'EOF'
[psync-cached-randread]
ioengine=psync
direct=0
invalidate=0
rw=randread
bs=4k
size=64m
filename=psync-cached-randread.dat
time_based=1
runtime=2
EOF
rec psync-cached-randread-json 0 --output-format=json

echo "fio runs done in ${SECONDS}s; checking outputs"

# Sanity checks on what was recorded (fail loudly if a future fio changes shape).
"$PYTHON" - "$OUT" <<'PYEOF'
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])

def docs(name):
    s = (out / name).read_text()
    dec, res, i = json.JSONDecoder(), [], 0
    while (j := s.find("{", i)) != -1:
        d, i = dec.raw_decode(s, j)
        res.append(d)
    return s, res

def bins_in(entries):
    return any("bins" in e[k][lat] for e in entries for k in ("read", "write")
               for lat in ("clat_ns", "lat_ns") if isinstance(e[k].get(lat), dict))

problems = []
def check(cond, msg):
    if not cond:
        problems.append(msg)

for f in sorted(out.glob("*.json")):
    s, ds = docs(f.name)
    check(ds, f"{f.name}: no JSON document")
    if f.name == "status-interval-json.json":
        check(len(ds) >= 3, f"{f.name}: expected >= 3 documents, got {len(ds)}")
    else:
        check(len(ds) == 1, f"{f.name}: expected 1 document, got {len(ds)}")
    key = "client_stats" if f.name.startswith("clientserver") else "jobs"
    for d in ds:
        check(key in d, f"{f.name}: no {key}")
    if "jsonplus" in f.name:
        check(bins_in(ds[-1][key]), f"{f.name}: json+ without bins")

jobs = lambda n: docs(n)[1][-1]["jobs"]
check(len(jobs("numjobs4-nogroup-jsonplus.json")) == 4, "nogroup: jobs != 4")
check(len(jobs("numjobs4-group-jsonplus.json")) == 1, "group: jobs != 1")
check(len(jobs("numjobs2-lat-percentiles-jsonplus.json")) == 2, "lat-percentiles: jobs != 2")
check(len(jobs("twojobs-sections-json.json")) == 2, "twojobs: jobs != 2")
rank = jobs("percentile-rank-jsonplus.json")
check(len(rank) == 1 and rank[0]["read"]["clat_ns"]["N"] == 33000, "percentile-rank: N != 33000")
check(jobs("error-enospc-json.json")[0]["error"] != 0, "enospc: error == 0")
s = (out / "warning-before-json.json").read_text()
check(s.lstrip()[:1] != "{", "warning-before-json: no text before the JSON")
for n in ("clientserver-2hosts-json.json", "clientserver-2hosts-jsonplus.json"):
    names = {c["jobname"] for c in docs(n)[1][-1]["client_stats"]}
    check({"host1-randread", "host2-randread"} <= names, f"{n}: client entries {names}")

if problems:
    print("CHECK FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print("checks ok")
PYEOF

echo "record.sh finished in ${SECONDS}s"
