#!/usr/bin/env bash
# Record real fio --status-interval streams (a local point's time series) used by the unit
# tests of storbench's interval reader (engines/fio/intervals.py):
#   status-ramp-jsonplus     two jobs, randrw, ramp_time 1 s then 3 s measured, a report
#                            every 500 ms: the ramp's reports (I/O counted, no latency),
#                            fio's restart of its counters, both directions, the last
#                            document moments after the last report
#   status-plain-jsonplus    one job, randread, no ramp, 2 s, a report every 500 ms
#
#   tests/data/fio/record-status.sh
#
# Environment: FIO (fio binary, default "fio"). The null engine does no I/O (no file is
# made); rate_iops keeps the documents small. Takes about 8 s. Writes only status-*.
set -euo pipefail

OUT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIO=${FIO:-fio}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/storbench-fio-status.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

record() {  # NAME: runs NAME.fio, keeps the command, stdout and exit status
    local name=$1 rc=0
    cp "$OUT/$name.fio" "$WORK/"
    local cmd=("$FIO" --output-format=json+ --status-interval=500ms "$WORK/$name.fio")
    echo "${cmd[*]}" | sed "s#$WORK/##" > "$OUT/$name.cmd"
    (cd "$WORK" && "${cmd[@]}") > "$OUT/$name.stdout" || rc=$?
    echo "$rc" > "$OUT/$name.exitcode"
}

cat > "$OUT/status-ramp-jsonplus.fio" <<'JOB'
[global]
ioengine=null
size=1g
bs=4k
time_based=1
ramp_time=1
runtime=3
rate_iops=2000,1000

[mixed]
rw=randrw
numjobs=2
JOB
record status-ramp-jsonplus

cat > "$OUT/status-plain-jsonplus.fio" <<'JOB'
[reader]
ioengine=null
size=1g
bs=4k
rw=randread
time_based=1
runtime=2
rate_iops=3000
JOB
record status-plain-jsonplus
