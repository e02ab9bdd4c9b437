#!/usr/bin/env bash
# Record real outputs of fio's http engine in S3 mode against versitygw: the fixtures of the
# s3 suite's answer (tests/answer_runs.py). Never edit the .json files by hand: rerun this.
#
#   tests/data/s3/record.sh        # needs scripts/build-fio-http.sh and build-versitygw.sh
#   ONLY=NAME tests/data/s3/record.sh   # only that recording (the others stay as they are)
#
# versitygw listens on 127.0.0.1 only, over a mktemp directory removed at the end; its keys
# are made up for the recording (the job files name them only as ${...}, as storbench's do;
# fio's JSON echoes the secret under "job options", replaced by "[redacted]" as storbench
# does before it stores an output).
# Each job is sized (not timed): 8 objects per job, 2 jobs; GETs read what the PUTs wrote.
set -euo pipefail

OUT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIO=${FIO:-/usr/local/lib/storbench/fio/bin/fio}
GW=${VERSITYGW:-/usr/local/lib/storbench/bin/versitygw}
PORT=${PORT:-17090}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/storbench-s3-record.XXXXXX")
GW_PID=""
cleanup() {
    [ -n "$GW_PID" ] && kill "$GW_PID" 2>/dev/null && wait "$GW_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

"$FIO" --enghelp | grep -qx '[[:space:]]*http' || { echo "no http engine in $FIO" >&2; exit 1; }
mkdir -p "$WORK/s3/bench"
export STORBENCH_S3_KEY_ID=AKIDRECORDING STORBENCH_S3_SECRET=recording-secret-not-real
ROOT_ACCESS_KEY=$STORBENCH_S3_KEY_ID ROOT_SECRET_KEY=$STORBENCH_S3_SECRET \
    "$GW" --port "127.0.0.1:$PORT" posix "$WORK/s3" >/dev/null 2>&1 &
GW_PID=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.05
done
echo "fio: $("$FIO" --version)   versitygw on 127.0.0.1:$PORT   out: $OUT"
ONLY=${ONLY:-}
[ -n "$ONLY" ] || rm -f "$OUT"/*.json "$OUT"/*.fio "$OUT"/*.err

# rec NAME RW BS [OPTION...]: the job file storbench writes for such a point (sized, not timed)
rec() {
    local name=$1 rw=$2 bs=$3 size
    shift 3
    [ -z "$ONLY" ] || [ "$ONLY" = "$name" ] || return 0
    size=$(( 8 * $(numfmt --from=iec "${bs^^}") ))
    cat > "$OUT/$name.fio" <<JOB
[objects]
http_host=127.0.0.1:$PORT
https=off
http_s3_region=us-east-1
http_s3_keyid=\${STORBENCH_S3_KEY_ID}
http_s3_key=\${STORBENCH_S3_SECRET}
rw=$rw
bs=$bs
numjobs=2
ioengine=http
http_mode=s3
size=$size
filename_format=/bench/storbench/rec.b$bs.\$jobnum.\$filenum
group_reporting
JOB
    printf '%s\n' "$@" >> "$OUT/$name.fio"
    sed -i '/^$/d' "$OUT/$name.fio"
    # fio's JSON echoes the expanded keys under "job options": taken out the way storbench
    # takes them out of what it stores (storbench.model.redact: "[redacted]"), nothing else changed
    (cd "$WORK" && "$FIO" --output-format=json+ "$OUT/$name.fio" 2>"$WORK/stderr") \
        | sed "s/$STORBENCH_S3_SECRET/[redacted]/g" > "$OUT/$name.json"
    # what fio said on stderr, where it said anything (the requests that failed)
    if [ -s "$WORK/stderr" ]; then cp "$WORK/stderr" "$OUT/$name.err"; else rm -f "$OUT/$name.err"; fi
}
for bs in 4k 64k 1m; do
    rec "put-$bs-jsonplus" write "$bs"
done
for bs in 4k 64k 1m; do
    rec "get-$bs-jsonplus" read "$bs"
done
rec "delete-64k-jsonplus" trim 64k
# GETs of objects nobody wrote (HTTP 404, which fio reads as zeroes), with the check
# storbench adds to a GET point (jobfile.S3_GET_CHECK): each one a verify error, counted
rec "get-missing-4k-verify-jsonplus" read 4k verify=crc32c continue_on_error=verify
# a mixed point (GETs and PUTs) over objects nobody wrote: fio checks no read of a mixed
# job, and reads each missing object as zeroes; storbench's build of fio
# (scripts/fio-http-404.patch) says so on stderr, once per GET (NAME.err)
rec "mix-missing-4k-jsonplus" randrw 4k \
    'filename_format=/bench/storbench/missing.b4k.$jobnum.$filenum'
if grep -l "recording-secret-not-real" "$OUT"/*.json "$OUT"/*.err 2>/dev/null; then
    echo "record.sh: the secret is in an output (above)" >&2
    exit 1
fi
echo "recorded: $(ls "$OUT"/*.json | wc -l) outputs"
