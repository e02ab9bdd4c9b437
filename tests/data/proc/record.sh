#!/bin/sh
# Two readings of the counters storbench.hosts.load reads, 1 s apart, while fio writes a
# file with direct I/O (run as root on a Linux machine):  sh record.sh DIR
set -eu
out=${1:-.}
fio --name=rec --filename=/tmp/storbench-proc-rec.dat --size=64m --rw=randwrite --bs=4k \
    --direct=1 --ioengine=libaio --iodepth=8 --runtime=4 --time_based >/dev/null &
sleep 1
for n in a b; do
    mkdir -p "$out/$n/net"
    cat /proc/stat > "$out/$n/stat"; cat /proc/meminfo > "$out/$n/meminfo"
    cat /proc/net/dev > "$out/$n/net/dev"; cat /proc/diskstats > "$out/$n/diskstats"
    [ "$n" = a ] && sleep 1
done
wait
rm -f /tmp/storbench-proc-rec.dat
