# A fix that dies right after its first write (the test-only NUMASTOR_TEST_STOP_AFTER_WRITES=1
# exits 137 there, as a kill would), then --revert. The pre-fix nvme driver (a forced-node
# device; none where nvme is built in, cloud-amd64), a second node-1 HBA (an ahci disk,
# qemu-args) and irqaffinity=3: with the default affinity the kernel already puts the
# unmanaged vectors where numastor would, leaving nothing to move. The guest snapshots every IRQ of the
# machine before, after the killed fix and after the revert (a revert killed after its first
# write comes in between).
vm_load_storage /vm/prefix-nvme/nvme.ko
# the second node-1 HBA of qemu-args, and its disk
modprobe ahci
VM_DISKS=$((VM_DISKS + 1))
vm_wait_disks 60
vm_truth > "$VM_OUT/before.txt"
vm_irqs > "$VM_OUT/irqs-before.txt"
vm_numastor plan fix --dry-run --json
export NUMASTOR_TEST_STOP_AFTER_WRITES=1
vm_numastor killed fix --json
unset NUMASTOR_TEST_STOP_AFTER_WRITES
vm_irqs > "$VM_OUT/irqs-killed.txt"
vm_save_journal journal-killed.json
vm_numastor placed check --json
# a revert that dies after its first write leaves the journal for another --revert
export NUMASTOR_TEST_STOP_AFTER_WRITES=1
vm_numastor revert-killed fix --revert
unset NUMASTOR_TEST_STOP_AFTER_WRITES
vm_save_journal journal-revert-killed.json
vm_numastor revert fix --revert --json
vm_irqs > "$VM_OUT/irqs-reverted.txt"
vm_save_journal journal-reverted.json
vm_fire_disks
vm_check_round
