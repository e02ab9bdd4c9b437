fio --output-format=json+ --status-interval=500ms status-plain-jsonplus.fio
