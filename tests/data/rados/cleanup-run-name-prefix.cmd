rados -p bench cleanup --run-name rec-4m-plain --prefix benchmark_data_vm_845_object
