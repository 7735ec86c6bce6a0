# The nvme driver from before the seed-000 fix (built out of tree, loaded after nvme-core)
# forces the root-bus controllers, which have no node, onto node 0: the root-bus NVMe and the
# root-bus path of the bed's NVMe subsystem. The pairing is measured first.
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_measure_pairing > "$VM_OUT/pairing.txt"
vm_check_round
