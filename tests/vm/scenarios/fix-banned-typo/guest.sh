# irqbalance's banned list with a typo (a trailing comma) in /etc/default/irqbalance, on the
# pre-fix nvme driver with irqaffinity=0 (unmanaged vectors start on CPU 0, so a plan has
# moves): fix --dry-run and fix refuse, naming the file and the value, and no IRQ of the machine
# changes (snapshots of every /proc/irq/N before and after). Twin: the list without the typo
# ("0") is honoured by the plan.
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
mkdir -p /etc/default
[ -e /etc/default/irqbalance ] && cp /etc/default/irqbalance /tmp/irqbalance.orig
echo 'IRQBALANCE_BANNED_CPULIST="0-3,"' > /etc/default/irqbalance
vm_irqs > "$VM_OUT/irqs-before.txt"
vm_numastor dryrun fix --dry-run
vm_numastor refused fix --json
vm_irqs > "$VM_OUT/irqs-after.txt"
vm_save_journal journal-refused.json
echo 'IRQBALANCE_BANNED_CPULIST="0"' > /etc/default/irqbalance
vm_numastor twin fix --dry-run --json
if [ -e /tmp/irqbalance.orig ]; then cp /tmp/irqbalance.orig /etc/default/irqbalance; else rm -f /etc/default/irqbalance; fi
vm_check_round
