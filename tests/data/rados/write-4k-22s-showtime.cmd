rados -p bench bench 22 write -b 4K -t 16 --run-name rec-4k-22s-showtime --show-time
