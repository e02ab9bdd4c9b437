fio --output-format=json+ --client=127.0.0.1,18770 /tmp/storbench-fio-hosts.WQ7GB1/hosts1-mounted-jsonplus.host1.fio --status-interval=500ms
