rados -p bench bench 4 write -t 16 -b 4M --no-cleanup --run-name rec-2clients-c1 --show-time
