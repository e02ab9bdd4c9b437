rados -p bench ls --all -f json
