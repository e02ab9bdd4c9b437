rados -p bench bench 4 seq -t 16 --run-name rec-4m-showtime --show-time
