rados -p bench bench 2 seq -t 16 --run-name rec-never-written
