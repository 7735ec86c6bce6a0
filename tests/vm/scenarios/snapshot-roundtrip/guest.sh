# numastor snapshot on the real kernel: capture what check reads (the pre-fix nvme driver
# gives a forced node to carry across), then replay the bundle in the same guest.
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_check_round
vm_numastor snapshot snapshot -O "$VM_OUT/snapshot.tar.gz"
vm_numastor replay check --snapshot "$VM_OUT/snapshot.tar.gz" --json
