fio --output-format=json+ --client=127.0.0.1,18770 hosts2-refused-jsonplus.host1.fio --status-interval=500ms --client=127.0.0.1,18779 hosts2-refused-jsonplus.host2.fio --status-interval=500ms
