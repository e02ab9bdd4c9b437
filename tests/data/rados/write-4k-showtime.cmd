rados -p bench bench 4 write -b 4K -t 16 --no-cleanup --run-name rec-4k-showtime --show-time
