# Stock kernel and drivers, with the bed's NVMe subsystem: numastor check --json
# against ground truth for every disk and every path of the multipath head; the queue -> vector
# pairing measured first with O_DIRECT reads from each CPU in turn.
vm_load_storage
vm_wait_disks 60
vm_measure_pairing > "$VM_OUT/pairing.txt"
vm_check_round
vm_kernel_facts
