# Stock kernel and drivers: numastor check --json against ground truth for every disk.
vm_load_storage
vm_wait_disks 60
vm_check_round
