#!/bin/sh
# Record fio's output against a device that saturates at a known rate: a loop device whose
# reads a blkio cgroup throttles to 2,000 IOPS (root; cgroup v1 blkio). First a 4k randread
# climb of iodepth 1, 2, 4, 8; then the steps of a capacity search (rate_iops with
# rate_process=poisson, iodepth 32, total latency percentiles): a closed-loop probe (no
# rate) and offered rates below, near and above what the device takes. Writes NAME.json
# (fio's stdout, byte for byte) and NAME.fio here. Usage: sudo tests/data/climb/record.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fio=${FIO:-$(command -v /usr/local/lib/storbench/fio/bin/fio || command -v fio)}
work=$(mktemp -d)
cg=/sys/fs/cgroup/blkio/storbench-record-$$
truncate -s 64M "$work/img"
dev=$(losetup --find --show --direct-io=on "$work/img")
trap 'rmdir "$cg" 2>/dev/null; losetup -d "$dev"; rm -rf "$work"' EXIT
mkdir "$cg"
echo "$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ') 2000" > "$cg/blkio.throttle.read_iops_device"
for qd in 1 2 4 8; do
    name=throttled-qd$qd
    cat > "$here/$name.fio" <<JOB
[climb]
filename=\${DEV}
ioengine=libaio
direct=1
rw=randread
bs=4k
iodepth=$qd
time_based=1
runtime=2
JOB
    DEV=$dev sh -c "echo \$\$ > $cg/cgroup.procs; exec $fio --output-format=json+ $here/$name.fio" \
        > "$here/$name.json"
done
for rate in probe 1000 1500 1800 1950 2200; do
    name=rate-$rate
    limit=""
    [ "$rate" = probe ] || limit="rate_iops=$rate
rate_process=poisson"
    cat > "$here/$name.fio" <<JOB
[step]
filename=\${DEV}
ioengine=libaio
direct=1
rw=randread
bs=4k
iodepth=32
lat_percentiles=1
time_based=1
runtime=3
$limit
JOB
    DEV=$dev sh -c "echo \$\$ > $cg/cgroup.procs; exec $fio --output-format=json+ $here/$name.fio" \
        > "$here/$name.json"
done
