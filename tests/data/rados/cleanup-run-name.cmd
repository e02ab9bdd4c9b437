rados -p bench cleanup --run-name rec-4k-plain
