#!/usr/bin/env bash
# Record real `rados bench` and `ceph ... -f json` outputs used as fixtures by the unit tests.
#
# Brings up a throwaway single-host cluster with the test harness (tests/cephcluster.py:
# 1 mon, 1 mgr, osd.0 on bluestore (sparse file) and osd.1 on memstore, all on 127.0.0.1
# with ports of its own, auth none, state in a mktemp dir), records, and tears it down.
# Never edit the recorded files by hand: rerun this script instead.
#
#   tests/data/rados/record.sh          # root not needed; ~3 min (one wait of ~65 s)
#
# Files, in the directory holding this script:
#   NAME.out       stdout of `rados bench`, byte for byte (NAME.stderr if stderr was not
#                  empty, NAME.exitcode when the exit status was not 0)
#   NAME.cmd       the command line that made it (CEPH_CONF pointed at the cluster)
#   STATE.WHAT.json  `ceph WHAT -f json` in cluster state STATE (healthy, degraded,
#                  degraded-stuck, full), byte for byte
#
# Environment: PYTHON (runs the harness, default python3), RADOS / CEPH (binaries).
set -euo pipefail

OUT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HARNESS=$(cd "$OUT/../.." && pwd)/cephcluster.py
PYTHON=${PYTHON:-python3}
RADOS=${RADOS:-rados}
CEPH=${CEPH:-ceph}
RUN_TIMEOUT=120         # hard stop for any single rados/ceph invocation (hang guard)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/storbench-rados-record.XXXXXX")
CLUSTER_PID=""

cleanup() {
    if [ -n "$CLUSTER_PID" ]; then
        echo quit >&"${CLUSTER[1]}" 2>/dev/null || true
        # the harness stops only the daemons it started, then removes its base dir
        wait "$CLUSTER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() { echo "record.sh: $*" >&2; exit 1; }

command -v "$RADOS" >/dev/null || die "rados not found (apt-get install ceph-common)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "needs Python >= 3.11"

# ---------------------------------------------------------------- the cluster (coprocess)
coproc CLUSTER {
    exec "$PYTHON" "$HARNESS" up "$WORK/cluster" --num-osd 2 --objectstore bluestore,memstore \
        --osd-gb 8 --pool bench --pool-size 1 --pg-num 8 2>"$WORK/cluster.stderr"
}
CLUSTER_PID=$CLUSTER_PID
SECONDS=0
while :; do
    read -r -u "${CLUSTER[0]}" line || { cat "$WORK/cluster.stderr" >&2; die "cluster did not come up"; }
    case $line in
        CEPH_CONF=*) export "${line?}" ;;
        ready) break ;;
    esac
done
echo "cluster up in ${SECONDS}s ($CEPH_CONF); recording into $OUT"

# cl COMMAND... -- a command to the harness (see tests/cephcluster.py serve); prints its result
cl() {
    local reply
    echo "$*" >&"${CLUSTER[1]}"
    read -r -u "${CLUSTER[0]}" reply || die "harness gone during: $*"
    case $reply in
        ok) ;;
        ok\ *) echo "${reply#ok }" ;;
        *) die "harness: $*: $reply" ;;
    esac
}

# Remove what a previous recording left, so the set of files is exactly this run's.
rm -f "$OUT"/*.out "$OUT"/*.cmd "$OUT"/*.stderr "$OUT"/*.exitcode "$OUT"/*.json

# rec NAME EXPECTED_RC rados-args... -- stdout -> NAME.out, stderr -> NAME.stderr (if any)
rec() {
    local name=$1 expect=$2 rc=0 t0; shift 2
    t0=$(date +%s.%N)
    (cd "$WORK" && exec timeout -k 5 "$RUN_TIMEOUT" "$RADOS" "$@") \
        > "$OUT/$name.out" 2> "$OUT/$name.stderr" || rc=$?
    echo "rados $*" > "$OUT/$name.cmd"
    [ -s "$OUT/$name.stderr" ] || rm -f "$OUT/$name.stderr"
    [ "$rc" = 0 ] || echo "$rc" > "$OUT/$name.exitcode"
    printf '  %-34s rc=%s %6.2fs  rados %s\n' "$name" "$rc" "$(echo "$(date +%s.%N) - $t0" | bc)" "$*"
    if [ "$expect" != any ] && [ "$rc" != "$expect" ]; then
        cat "$OUT/$name.stderr" >&2 2>/dev/null || true
        die "$name: rados exited $rc, expected $expect"
    fi
}

# state STATE -- the cluster's own view, each as `ceph ... -f json`
state() {
    local s=$1 what args
    for what in "s:-s" "health-detail:health detail" "osd-tree:osd tree" \
                "osd-metadata:osd metadata" "df:df" "osd-pool-ls-detail:osd pool ls detail" \
                "versions:versions" "osd-crush-rule-dump:osd crush rule dump" \
                "config-get-osd_max_object_size:config get osd osd_max_object_size" \
                "pg-ls-by-pool-bench:pg ls-by-pool bench"; do
        args=${what#*:}
        # shellcheck disable=SC2086  # word splitting of the fixed argument lists is intended
        timeout -k 5 60 "$CEPH" $args -f json > "$OUT/$s.${what%%:*}.json"
    done
    if [ "$s" != healthy ]; then
        timeout -k 5 60 "$CEPH" pg ls-by-pool deg -f json > "$OUT/$s.pg-ls-by-pool-deg.json"
    fi
    echo "  state $s: $(cl health)"
}

# wait_check CHECK SECONDS -- until `ceph health detail` carries the check CHECK
wait_check() {
    local check=$1 limit=$2 i
    for i in $(seq $((limit * 2))); do
        "$CEPH" health detail -f json | grep -q "\"$check\"" && return 0
        sleep 0.5
    done
    die "health check $check did not appear within ${limit}s"
}

state healthy

# ---------------------------------------------------------------- single client, 16 threads
# object size x output format; every write keeps its objects (--no-cleanup) for seq and rand.
# "plain" is rados bench's default text, "showtime" the same with --show-time (a timestamp
# per row: what storbench runs, to align clients), "json" is -f json.
for size in 4M 4K; do
    sz=$(echo "$size" | tr 'MK' 'mk')
    for fmt in plain showtime json; do
        case $fmt in plain) f=() ;; showtime) f=(--show-time) ;; json) f=(-f json) ;; esac
        run=rec-$sz-$fmt
        rec "write-$sz-$fmt" 0 -p bench bench 4 write -b "$size" -t 16 --no-cleanup --run-name "$run" "${f[@]}"
        rec "seq-$sz-$fmt" 0 -p bench bench 4 seq -t 16 --run-name "$run" "${f[@]}"
        rec "rand-$sz-$fmt" 0 -p bench bench 4 rand -t 16 --run-name "$run" "${f[@]}"
    done
done

# ---------------------------------------------------------------- longer than 20 s
# The text table repeats its header every 20 rows, after a timestamped "min lat/max lat/avg
# lat" line. Without --no-cleanup rados bench removes its objects itself and says so.
rec write-4k-22s-plain 0 -p bench bench 22 write -b 4K -t 16 --run-name rec-4k-22s-plain
rec write-4k-22s-showtime 0 -p bench bench 22 write -b 4K -t 16 --run-name rec-4k-22s-showtime --show-time

# ---------------------------------------------------------------- two clients at once
# Two processes started together, distinct run names; each reads back its own objects.
for mode in write seq rand; do
    extra=(); [ $mode = write ] && extra=(-b 4M --no-cleanup)
    pids=()
    for c in 1 2; do
        name=$mode-4m-2clients-c$c
        echo "rados -p bench bench 4 $mode -t 16 ${extra[*]} --run-name rec-2clients-c$c --show-time" > "$OUT/$name.cmd"
        (cd "$WORK" && exec timeout -k 5 "$RUN_TIMEOUT" "$RADOS" -p bench bench 4 $mode -t 16 "${extra[@]}" \
            --run-name "rec-2clients-c$c" --show-time) > "$OUT/$name.out" 2> "$OUT/$name.stderr" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || die "a $mode client failed"; done
    for c in 1 2; do [ -s "$OUT/$mode-4m-2clients-c$c.stderr" ] || rm -f "$OUT/$mode-4m-2clients-c$c.stderr"; done
    echo "  $mode-4m-2clients-c1/c2 done"
done

# ---------------------------------------------------------------- errors and cleanup
rec seq-no-write-plain any -p bench bench 2 seq -t 16 --run-name rec-never-written
[ -e "$OUT/seq-no-write-plain.exitcode" ] || die "seq without a write: expected a non-zero exit status"
prefix=$(sed -n 's/^Object prefix: //p' "$OUT/write-4m-plain.out")
rec cleanup-run-name-prefix 0 -p bench cleanup --run-name rec-4m-plain --prefix "${prefix}_object"
rec cleanup-run-name 0 -p bench cleanup --run-name rec-4k-plain
for run in rec-4m-showtime rec-4m-json rec-4k-showtime rec-4k-json rec-2clients-c1 rec-2clients-c2; do
    (cd "$WORK" && timeout -k 5 "$RUN_TIMEOUT" "$RADOS" -p bench cleanup --run-name "$run" >/dev/null)
done
rec ls-after-cleanup 0 -p bench ls --all -f json

# ---------------------------------------------------------------- unhealthy cluster
# A pool of size 2 / min_size 2 with some objects, then osd.1 stopped (SIGTERM).
cl create_pool deg 2 2 8
(cd "$WORK" && timeout -k 5 60 "$RADOS" -p deg bench 2 write -b 64K -t 16 --no-cleanup --run-name rec-deg >/dev/null)
cl stop_osd 1
wait_check PG_DEGRADED 30
state degraded
# inactive PGs are reported only once stuck for mon_pg_stuck_threshold (60 s)
wait_check PG_AVAILABILITY 90
state degraded-stuck
cl start_osd 1
cl wait_clean

# HEALTH_ERR for real: full ratios below what the OSDs already hold (OSD_FULL)
"$CEPH" osd set-nearfull-ratio 0.001 >/dev/null 2>&1
"$CEPH" osd set-backfillfull-ratio 0.002 >/dev/null 2>&1
"$CEPH" osd set-full-ratio 0.003 >/dev/null 2>&1
wait_check OSD_FULL 30
state full
"$CEPH" osd set-full-ratio 0.97 >/dev/null 2>&1
"$CEPH" osd set-backfillfull-ratio 0.96 >/dev/null 2>&1
"$CEPH" osd set-nearfull-ratio 0.95 >/dev/null 2>&1
cl delete_pool deg

echo "recorded in ${SECONDS}s; checking outputs"

# ---------------------------------------------------------------- sanity checks
"$PYTHON" - "$OUT" <<'PYEOF'
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])
problems = []
def check(cond, msg):
    if not cond:
        problems.append(msg)

def doc(path):
    text = path.read_text()
    i = text.find("{")
    return json.JSONDecoder().raw_decode(text, i)[0] if i >= 0 else None

for f in sorted(out.glob("*.out")):
    text = f.read_text()
    if "-json" in f.name:
        d = doc(f)
        check(d is not None and "datas" in d, f"{f.name}: no JSON document with datas")
    elif f.name.startswith(("write-", "seq-", "rand-")) and "no-write" not in f.name:
        check("Total time run:" in text, f"{f.name}: no summary")
        check("Average Latency(s):" in text, f"{f.name}: no latency")
for f in sorted(out.glob("*.json")):
    json.loads(f.read_text())
for n in ("write-4k-22s-plain.out", "write-4k-22s-showtime.out"):
    check((out / n).read_text().count("  sec Cur ops") >= 2, f"{n}: header not repeated")
    check("Cleaning up" in (out / n).read_text(), f"{n}: no cleanup lines")
status = {s: json.loads((out / f"{s}.health-detail.json").read_text())["status"]
          for s in ("healthy", "degraded", "degraded-stuck", "full")}
check(status["healthy"] == "HEALTH_OK", f"healthy: {status['healthy']}")
check(status["full"] == "HEALTH_ERR", f"full: {status['full']}")
# (memstore's used-bytes counter can wrap after write/delete cycles and fake OSD_FULL)
for s in ("degraded", "degraded-stuck"):
    check(status[s] == "HEALTH_WARN", f"{s}: {status[s]}")
names = [o["name"] for o in json.loads((out / "ls-after-cleanup.out").read_text())]
check(not [n for n in names if n.startswith(("benchmark_data", "rec-"))], f"left after cleanup: {names[:5]}")
print("states:", status)
if problems:
    print("CHECK FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print("checks ok")
PYEOF

echo "record.sh finished in ${SECONDS}s"
