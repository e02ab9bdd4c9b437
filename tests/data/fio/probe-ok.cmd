fio --output-format=normal --client=127.0.0.1,18770 probe-ok.fio
