#!/usr/bin/env bash
# Installs the system packages storbench and its tests need, if missing (Debian/Ubuntu).
# Runs apt-get only when something is missing; needs root (or sudo) for that.
set -euo pipefail

# command -> Debian package that provides it
declare -A need=(
  [fio]=fio
  [lsblk]=util-linux
  [losetup]=mount
  [findmnt]=util-linux
  [blkid]=util-linux
  [wipefs]=util-linux
  [sfdisk]=fdisk
  [smartctl]=smartmontools
  [pvcreate]=lvm2
  [dmsetup]=dmsetup
  [chromium]=chromium
  [ip]=iproute2
  [tc]=iproute2            # tests/integration/test_findings_network_runs.py: a shaped veth
  [mkfs.ext4]=e2fsprogs
  [mkfs.btrfs]=btrfs-progs # tests/integration/test_findings_runs.py: a compressing btrfs
  [setpriv]=util-linux
  [sshd]=openssh-server   # tests/integration/test_drill_hosts.py: a drill's steps on a host, over ssh
  [prometheus]=prometheus # tests/integration/test_metrics_prometheus.py: scrapes a real run
  [iperf3]=iperf3          # network baselines: toward hosts (the agent serves it), endpoints
  # Ceph (tests/integration/ceph brings up a real single-host cluster from these)
  [ceph]=ceph-common
  [rados]=ceph-common
  [rbd]=ceph-common
  [ceph-mon]=ceph-mon
  [monmaptool]=ceph-base
  [ceph-mgr]=ceph-mgr
  [ceph-osd]=ceph-osd
  [radosgw]=radosgw        # tests/integration/ceph/test_s3_radosgw.py: the seed's S3 gateway
)
missing=()
for cmd in "${!need[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
# PostgreSQL: tests/pgserver.py starts a real server (initdb, pg_ctl) for the store's tests
# on PostgreSQL; Debian keeps those commands off PATH, in /usr/lib/postgresql/VERSION/bin
compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null || missing+=(postgresql)

install_missing() {
  [ ${#missing[@]} -gt 0 ] || return 0
  mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "storbench setup: installing ${pkgs[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
      echo "storbench setup: need root to install: ${pkgs[*]} (run: apt-get install ${pkgs[*]})" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
}
install_missing

# S3 targets need fio's http engine, which Debian's fio lacks: Debian's own fio source built
# with it (once, cached in /usr/local/lib/storbench/fio), and the S3 server the tests use.
here="$(dirname "$0")"
bash "$here/build-fio-http.sh"
bash "$here/build-versitygw.sh"
