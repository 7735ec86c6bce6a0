# numastor probe and fix --probe on the two-node machine, booted with irqaffinity=0: the node-1
# HBA's single unmanaged vector (megasas; ahci on the cloud flavour) sits on CPU 0, node 0.
# Ground truth is the guest's own reading of that vector's per_cpu_count around each numastor
# run (facts irq.STEP.before / irq.STEP.after) and its smp_affinity_list / effective affinity.
# 1. probe the HBA's disk from both nodes: every completion interrupt fires on node 0;
# 2. fix --probe with the disk's /dev node moved away: refused before any change; then
#    fix --probe=2 --json: the plan moves the vector to node 1, and probes its disk before
#    and after the change;
# 3. probe again: every completion interrupt fires on node 1;
# 4. fix --revert, then the usual check round.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_load_storage
vm_wait_disks 60
vm_node1_hba_driver
vm_node1_hba_disk "$_v"
disk=$_v
vm_disk_pci "$disk"
pci=$_v
irq=
for _q in "/sys/bus/pci/devices/$pci"/msi_irqs/*; do
	irq=${_q##*/}
done
vm_fact disk "$disk"
vm_fact irq "$irq"
# (cat: the node's cpulist answers busybox read's 1-byte reads with nothing)
for n in /sys/devices/system/node/node*; do
	vm_fact "node.${n##*node}.cpus" "$(cat "$n/cpulist")"
done

# the vector's state and counts, as facts irq.STEP.*
irq_state() { # step
	_rd "/sys/kernel/irq/$irq/per_cpu_count"
	vm_fact "irq.$1.counts" "$_v"
	_rd "/proc/irq/$irq/smp_affinity_list"
	vm_fact "irq.$1.affinity" "$_v"
	_rd "/proc/irq/$irq/effective_affinity_list"
	vm_fact "irq.$1.effective" "$_v"
}

irq_state probe1-before
vm_numastor probe1 probe -d 2 --json "$disk"
irq_state probe1-after
# a probe that cannot run before the change refuses the change: the disk's node moved away
mv "/dev/$disk" "/dev/$disk.away"
vm_numastor refused fix --probe=1 --json
mv "/dev/$disk.away" "/dev/$disk"
irq_state refused
_v=absent
[ -e /run/numastor/journal.json ] && _v=present
vm_fact journal.refused "$_v"
irq_state fix-before
vm_numastor fix fix --probe=2 --json
irq_state fix-after
vm_save_journal journal-fix.json
irq_state probe2-before
vm_numastor probe2 probe -d 2 --json "$disk"
irq_state probe2-after
vm_numastor text probe -d 1 "$disk"
vm_numastor revert fix --revert
vm_check_round
