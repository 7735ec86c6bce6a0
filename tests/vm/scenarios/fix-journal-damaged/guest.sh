# A damaged journal on the real kernel is refused and kept byte for byte. The pre-fix nvme
# driver and irqaffinity=0 give fix moves; its journal is then damaged twice: "irqs" made a
# string (with the list under an unknown key), and every "previous" made "zz,,". Each time
# fix --revert and fix refuse, the file stays as it was, and no IRQ changes (vm_irqs
# snapshots). Then the good journal is put back and --revert restores everything.
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_irqs > "$VM_OUT/irqs-before.txt"
vm_numastor fix fix --json
vm_save_journal journal-fix.json
vm_irqs > "$VM_OUT/irqs-placed.txt"
sed -i 's/"irqs":\[/"irqs":"x","was":[/' /run/numastor/journal.json
vm_save_journal journal-damaged.json
vm_numastor revert fix --revert
vm_numastor fix2 fix
vm_irqs > "$VM_OUT/irqs-after.txt"
vm_save_journal journal-after.json
cp "$VM_OUT/journal-fix.json" /run/numastor/journal.json
sed -i 's/"previous":"[^"]*"/"previous":"zz,,"/' /run/numastor/journal.json
vm_save_journal journal-zz.json
vm_numastor revert-zz fix --revert
vm_irqs > "$VM_OUT/irqs-after-zz.txt"
vm_save_journal journal-after-zz.json
cp "$VM_OUT/journal-fix.json" /run/numastor/journal.json
vm_numastor revert-good fix --revert --json
vm_irqs > "$VM_OUT/irqs-reverted.txt"
vm_fire_disks
vm_check_round
