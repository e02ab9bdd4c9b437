rados -p bench bench 4 rand -t 16 --run-name rec-4k-json -f json
