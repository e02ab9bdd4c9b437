fio --output-format=json+ --status-interval=500ms status-ramp-jsonplus.fio
