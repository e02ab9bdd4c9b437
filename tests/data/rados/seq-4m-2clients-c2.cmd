rados -p bench bench 4 seq -t 16  --run-name rec-2clients-c2 --show-time
