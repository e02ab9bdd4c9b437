#!/usr/bin/env bash
# Record real fio client/server outputs (many hosts) used by the unit tests of storbench's
# multi-host parser: status reports, a server killed mid-point, a refused connection, a
# protocol version mismatch, fio's own refusal to write to a mounted device, and the
# preflight probe. See README.md ("Many hosts") for what each file shows.
#
#   sudo tests/data/fio/record-hosts.sh      # root: a loop device for the mounted case
#
# Environment: FIO (fio binary, default "fio"), PORT_BASE (first of the loopback ports of
# the fio servers, default 18770; the script uses PORT_BASE .. PORT_BASE+9), PYTHON.
#
# Every fio server listens on 127.0.0.1 only and runs in its own mktemp scratch directory
# (job files use relative file names); the controller runs in $WORK. Each run has <= 3 s
# of I/O; the whole script takes about 30 s. Writes only NAME.* files whose NAME starts
# with "hosts" or "probe" in this directory (record.sh owns the others).
set -euo pipefail

OUT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIO=${FIO:-fio}
PORT_BASE=${PORT_BASE:-18770}
PYTHON=${PYTHON:-python3}
RUN_TIMEOUT=30

WORK=$(mktemp -d "${TMPDIR:-/tmp}/storbench-fio-hosts.XXXXXX")
SERVER_PIDS=()
LOOPDEV=""
MNT=""

cleanup() {
    local pid
    for pid in "${SERVER_PIDS[@]}"; do
        kill -KILL -- "-$pid" 2>/dev/null || true   # each server leads its process group
    done
    for pid in "${SERVER_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    [ -n "$MNT" ] && { umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true; }
    [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() { echo "record-hosts.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (loop device for the mounted-device case)"
command -v "$FIO" >/dev/null || die "fio not found ($FIO)"
echo "fio: $("$FIO" --version)   scratch: $WORK   out: $OUT"

rm -f "$OUT"/hosts*.* "$OUT"/probe*.*

declare -A SERVER   # port -> pid
start_server() {    # start_server PORT
    local port=$1 dir="$WORK/server-$1" i
    if ss -ltnH "sport = :$port" | grep -q .; then die "port $port already in use"; fi
    mkdir -p "$dir"
    # setsid: the server, the process it forks per connection and the job process it forks
    # in turn share one process group, so killing the group is fio dying on that host
    (cd "$dir" && exec setsid "$FIO" --server="127.0.0.1,$port") > "$dir.log" 2>&1 &
    SERVER_PIDS+=("$!")
    SERVER[$port]=$!
    for i in $(seq 50); do
        ss -ltnH "sport = :$port" | grep -q . && return 0
        kill -0 "$!" 2>/dev/null || { cat "$dir.log" >&2; die "fio server on $port died"; }
        sleep 0.1
    done
    die "fio server on port $port did not start listening"
}

# rec NAME [fio arguments...]: fio in $WORK, stdout -> NAME.stdout, stderr -> NAME.stderr (if
# not empty), exit status -> NAME.exitcode, the command line (ports as given) -> NAME.cmd
rec() {
    local name=$1 rc=0 t0; shift
    t0=$(date +%s.%N)
    (cd "$WORK" && exec timeout -k 5 "$RUN_TIMEOUT" "$FIO" "$@") \
        > "$OUT/$name.stdout" 2> "$OUT/$name.stderr" || rc=$?
    [ -s "$OUT/$name.stderr" ] || rm -f "$OUT/$name.stderr"
    echo "$rc" > "$OUT/$name.exitcode"
    echo "fio $*" | sed "s#$OUT/##g" > "$OUT/$name.cmd"
    printf '  %-34s rc=%s  %5.2fs\n' "$name" "$rc" "$(echo "$(date +%s.%N) - $t0" | bc)"
}

P1=$PORT_BASE; P2=$((PORT_BASE + 1)); P3=$((PORT_BASE + 2)); P4=$((PORT_BASE + 3))
P9=$((PORT_BASE + 9))   # never listened on: refused
# --status-interval goes after each job file: an option before the first --client stays
# with the local client process (no status reports at all); one after a --client is sent
# to that server
SI=--status-interval=500ms
for p in $P1 $P2 $P3 $P4; do start_server "$p"; done
SECONDS=0

hostjob() {   # hostjob NAME HOSTNO [extra option lines...] -> $OUT/NAME.hostN.fio
    local name=$1 n=$2; shift 2
    {
        echo "[host$n]"
        printf '%s\n' "ioengine=null" "rw=randread" "bs=4k" "size=1g" "time_based=1" "$@"
    } > "$OUT/$name.host$n.fio"
}

# 1. three hosts, 3 s, a status report every 500 ms; per-I/O iops logs (rate-limited to
#    500 IOPS, log_unix_epoch: absolute ms on this one clock) are the ground truth for the
#    start/end times storbench derives from the status reports; host 3 starts 400 ms late.
name=hosts3-status-jsonplus
for n in 1 2 3; do
    delay=0; [ $n = 3 ] && delay=400ms
    hostjob $name $n "runtime=3" "startdelay=$delay" "rate_iops=500" \
        "write_iops_log=$name.host$n" "log_avg_msec=0" "log_unix_epoch=1"
done
rec $name --output-format=json+ \
    --client=127.0.0.1,$P1 $OUT/$name.host1.fio $SI \
    --client=127.0.0.1,$P2 $OUT/$name.host2.fio $SI \
    --client=127.0.0.1,$P3 $OUT/$name.host3.fio $SI
for n in 1 2 3; do mv "$WORK/${name}.host${n}_iops.1.log.127.0.0.1" "$OUT/$name.host$n.iops.log"; done

# 2. two hosts that barely overlap: host 2 starts 2 s into host 1's 3 s (startdelay=2)
name=hosts2-lowoverlap-jsonplus
hostjob $name 1 "runtime=3"
hostjob $name 2 "runtime=3" "startdelay=2"
rec $name --output-format=json+ \
    --client=127.0.0.1,$P1 $OUT/$name.host1.fio $SI --client=127.0.0.1,$P2 $OUT/$name.host2.fio $SI

# 3. ramp_time: reports during the ramp count from the job's start, then stats reset
name=hosts2-ramp-jsonplus
for n in 1 2; do hostjob $name $n "runtime=2" "ramp_time=1"; done
rec $name --output-format=json+ \
    --client=127.0.0.1,$P1 $OUT/$name.host1.fio $SI --client=127.0.0.1,$P2 $OUT/$name.host2.fio $SI

# 4. the fio server of host 2 dies mid-point: SIGKILL to its process group (server,
#    connection process, job process) 2.6 s after the client started: the servers begin
#    their run ~1.2 s after it (fio's client/server start-up), so host 2 has sent 2 or 3
#    status reports of its 3 s run. (Killing only the server's main process would not stop
#    the point: the connection process and the job carry on.)
name=hosts3-killed-jsonplus
for n in 1 2 3; do hostjob $name $n "runtime=3"; done
( sleep 2.6; kill -KILL -- "-${SERVER[$P2]}" ) &
killer=$!
rec $name --output-format=json+ \
    --client=127.0.0.1,$P1 $OUT/$name.host1.fio $SI \
    --client=127.0.0.1,$P2 $OUT/$name.host2.fio $SI \
    --client=127.0.0.1,$P3 $OUT/$name.host3.fio $SI
wait $killer || true

# 5. one host refuses the connection (nothing listens on its port): fio runs the other
#    and exits 0
name=hosts2-refused-jsonplus
for n in 1 2; do hostjob $name $n "runtime=1"; done
rec $name --output-format=json+ \
    --client=127.0.0.1,$P1 $OUT/$name.host1.fio $SI --client=127.0.0.1,$P9 $OUT/$name.host2.fio $SI

# 6. protocol version mismatch: a stand-in server (Python, port P4+5) answers fio's probe
#    with a command header one protocol version newer (crc16 as fio computes it)
PV=$((PORT_BASE + 5))
"$PYTHON" - "$PV" > "$WORK/fake.log" 2>&1 <<'PYEOF' &
import socket, struct, sys, time
def crc16(data, crc=0):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); s.settimeout(20)
c, _ = s.accept(); c.settimeout(10)
data = c.recv(4096)
ver, op, flags, tag, plen, _, _ = struct.unpack("<HHIQIHH", data[:24])
h = struct.pack("<HHIQI", ver + 1, op, 0, tag, 0)
c.sendall(h + struct.pack("<HH", crc16(h), 0))
time.sleep(1)
PYEOF
fake=$!
for i in $(seq 50); do ss -ltnH "sport = :$PV" | grep -q . && break; sleep 0.1; done
name=hosts2-version-mismatch-jsonplus
for n in 1 2; do hostjob $name $n "runtime=1"; done
rec $name --output-format=json+ \
    --client=127.0.0.1,$P1 $OUT/$name.host1.fio $SI --client=127.0.0.1,$PV $OUT/$name.host2.fio $SI
wait $fake || true

# 7. fio refuses to write to a mounted device (allow_mounted_write=0, its default): the
#    host's entry has no I/O and error 0; the reason is only in the text fio prints
truncate -s 32M "$WORK/disk.img"
LOOPDEV=$(losetup --find --show "$WORK/disk.img")
mkfs.ext4 -q "$LOOPDEV"
MNT="$WORK/mnt"; mkdir -p "$MNT"; mount "$LOOPDEV" "$MNT"
name=hosts1-mounted-jsonplus
printf '[mounted]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\nfilename=LOOPDEV\n' \
    > "$OUT/$name.host1.fio"
sed "s#LOOPDEV#$LOOPDEV#" "$OUT/$name.host1.fio" > "$WORK/$name.host1.fio"
rec $name --output-format=json+ \
    --client=127.0.0.1,$P1 "$WORK/$name.host1.fio" $SI
umount "$MNT"; MNT=""
losetup -d "$LOOPDEV"; LOOPDEV=""

# 8. preflight probes (normal output: the server's "hostname=..., fio=..." line): one
#    create_only section per engine, no I/O; then an engine fio does not have
probejob() {  # probejob NAME ENGINE...
    local name=$1 e; shift
    for e in "$@"; do
        printf '[probe-%s]\nioengine=%s\nfilename=/dev/zero\nrw=read\nbs=4k\nsize=4k\ncreate_only=1\n' \
            "$e" "$e"
    done > "$OUT/$name.fio"
}
probejob probe-ok null psync libaio io_uring
rec probe-ok --output-format=normal --client=127.0.0.1,$P1 $OUT/probe-ok.fio
probejob probe-missing-engine psync nosuchengine
rec probe-missing-engine --output-format=normal --client=127.0.0.1,$P1 \
    $OUT/probe-missing-engine.fio
probejob probe-refused null
rec probe-refused --output-format=normal --client=127.0.0.1,$P9 $OUT/probe-refused.fio

echo "fio runs done in ${SECONDS}s; checking outputs"

"$PYTHON" - "$OUT" <<'PYEOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def doc(name):
    s = (out / f"{name}.stdout").read_text()
    i = s.find("{")
    return json.JSONDecoder().raw_decode(s, i)[0] if i >= 0 else None
def rc(name):
    return int((out / f"{name}.exitcode").read_text())
def ports(name):
    d = doc(name)
    return [c["port"] for c in d["client_stats"] if c["jobname"] != "All clients"]
problems = []
def check(cond, msg):
    if not cond:
        problems.append(msg)
p = ports("hosts3-status-jsonplus")
check(len(set(p)) == 3 and len(p) > 12, f"hosts3-status: entries {p}")
check(rc("hosts3-status-jsonplus") == 0, "hosts3-status: rc != 0")
k = ports("hosts3-killed-jsonplus")
check(rc("hosts3-killed-jsonplus") != 0, "killed: rc == 0")
check("disconnected" in (out / "hosts3-killed-jsonplus.stdout").read_text(), "killed: no 'disconnected'")
check(len(set(k)) == 3, f"killed: hosts {set(k)} (the killed one reported before dying?)")
r = ports("hosts2-refused-jsonplus")
check(len(set(r)) == 1 and rc("hosts2-refused-jsonplus") == 0, "refused: not 1 host with rc 0")
check("mismatch" in (out / "hosts2-version-mismatch-jsonplus.stderr").read_text(), "no mismatch")
check("appears mounted" in (out / "hosts1-mounted-jsonplus.stdout").read_text(), "mounted: no refusal")
check("fio=fio-" in (out / "probe-ok.stdout").read_text(), "probe-ok: no probe line")
check("not loadable" in (out / "probe-missing-engine.stdout").read_text(), "probe: engine")
check("Connection refused" in (out / "probe-refused.stderr").read_text(), "probe: refused")
if problems:
    print("CHECK FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print("checks ok")
PYEOF
echo "record-hosts.sh finished in ${SECONDS}s"
