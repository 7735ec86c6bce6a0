# irqaffinity=0 and the pre-fix nvme driver: unmanaged vectors start on CPU 0 and the
# root-bus NVMe has a forced node. numastor fix --json, then the guest's own reads: where
# every storage IRQ sits right after the fix, after each disk's vectors fired, and after
# --revert (journal copies and `check --json` in between).
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_truth > "$VM_OUT/before.txt"
vm_numastor fix fix --json
vm_truth > "$VM_OUT/after-fix.txt"
vm_save_journal journal-fix.json
vm_numastor placed check --json
# On x86 without interrupt remapping a move takes effect at the vector's next interrupt.
vm_fire_disks
vm_truth > "$VM_OUT/after-io.txt"
vm_numastor revert fix --revert --json
vm_truth > "$VM_OUT/after-revert.txt"
vm_save_journal journal-revert.json
vm_numastor revert2 fix --revert
# settle the reverted moves before the final round compares check with ground truth
vm_fire_disks
vm_check_round
