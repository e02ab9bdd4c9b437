rados -p bench bench 4 write -b 4M -t 16 --no-cleanup --run-name rec-4m-plain
