rados -p bench bench 4 rand -t 16  --run-name rec-2clients-c2 --show-time
