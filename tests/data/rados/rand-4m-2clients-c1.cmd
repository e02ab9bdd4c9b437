rados -p bench bench 4 rand -t 16  --run-name rec-2clients-c1 --show-time
