# irqaffinity=0 on the kernel command line: every unmanaged vector starts on CPU 0.
vm_load_storage
vm_wait_disks 60
vm_check_round
