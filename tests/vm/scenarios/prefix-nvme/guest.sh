# The nvme driver from before the seed-000 fix (built out of tree, loaded after nvme-core)
# forces the root-bus controller, which has no node, onto node 0.
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_check_round
