# A server-shaped machine (machine: 2 sockets x 6 cores x 2 threads, 16 of 24 possible CPUs
# present, Debian's stock command line; the guest takes CPUs 14-15 offline), one boot for three
# things: the stock checks (numastor check --json against ground truth for every disk, path,
# function, IRQ and hardware queue, the pairing measured from some CPUs of each node), the
# capture kept in tests/fixtures/captures/LINE-server/, and fix: the node-1 HBA's vector put on
# a node-0 CPU by hand (as an operator or a balancer may leave it), then fix --dry-run, fix, the
# vectors fired, fix --revert, the kernel's own files read around each step.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_step() {
	vm_uptime
	echo "$1	$_v" >> "$VM_OUT/steps.txt"
}
vm_step start
vm_load_storage
vm_wait_disks 90
vm_step disks
# Node 1's second core (CPUs 14-15, both SMT threads) taken offline, as an operator may: present
# but not online CPUs beside the possible but not present ones. 6.12 under TCG has none of the
# latter (its topology code counts qemu's disabled MADT entries as hotplug CPUs only under a
# hypervisor it knows or with ACPI's online-capable flag, which qemu 7.2's MADT lacks: "Allowing
# 16 present CPUs plus 0 hotplug CPUs", measured), so these are what leaves its nvme queues
# without an online CPU there.
VM_OFFLINE_CPUS="14 15"
for _c in $VM_OFFLINE_CPUS; do
	echo 0 > "/sys/devices/system/cpu/cpu$_c/online"
done
# The machine as the kernel shows it: CPU sets, and each present CPU's package, core and SMT
# siblings.
{
	echo "offlined	$VM_OFFLINE_CPUS"
	for _f in online possible present; do
		echo "cpus	$_f	$(cat /sys/devices/system/cpu/$_f)"
	done
	for _c in /sys/devices/system/cpu/cpu[0-9]*; do
		# an offline CPU has no topology directory
		[ -d "$_c/topology" ] || continue
		echo "cpu	${_c##*cpu}	$(cat "$_c/topology/physical_package_id") $(cat "$_c/topology/core_id")	$(cat "$_c/topology/thread_siblings_list")"
	done
} > "$VM_OUT/topology.txt"
# both threads of a node-0 core, a node-0 CPU of another core, both threads of node 1's online
# core: every queue of theirs measured, the others' by name
VM_PAIR_CPUS="0 1 11 12 13" vm_measure_pairing > "$VM_OUT/pairing.txt"
vm_step pairing
# which path of the multipath head serves each CPU (stock's expectations hold it)
vm_measure_paths > "$VM_OUT/paths.txt"
vm_step paths
vm_check_round
vm_step check
mkdir -p "$VM_OUT/capture"
# the check round's second reading is the capture's first: nothing ran in between
cp "$VM_OUT/truth.txt" "$VM_OUT/capture/truth-before.txt"
vm_numastor snapshot snapshot -O "$VM_OUT/capture/snapshot.tar.gz"
vm_truth > "$VM_OUT/capture/truth.txt"
cp "$VM_OUT/pairing.txt" "$VM_OUT/paths.txt" "$VM_OUT/capture/"
vm_step capture

# fix: the node-1 HBA's vectors (one, unmanaged) onto CPU 0 of node 0
vm_node1_hba_driver
vm_node1_hba_disk "$_v"
vm_disk_pci "$_v"
_irqs=
_fn_irqs "/sys/bus/pci/devices/$_v"
for _i in $_irqs; do
	echo 0 > "/proc/irq/$_i/smp_affinity_list"
	vm_fact misplaced "$_i"
done
vm_fire_disks
# the full ground truth once (disks, functions, managed-ness); after each step every IRQ of the
# machine with its counts (vm_irqs_counts: a full reading is 70 KB and about 4 s here)
vm_truth > "$VM_OUT/before.txt"
vm_irqs_counts > "$VM_OUT/irqs-before.txt"
vm_numastor plan fix --dry-run --json
vm_irqs_counts > "$VM_OUT/irqs-plan.txt"
vm_numastor fix fix --json
vm_irqs_counts > "$VM_OUT/irqs-fix.txt"
vm_save_journal journal-fix.json
vm_numastor placed check --json
vm_fire_disks
vm_irqs_counts > "$VM_OUT/irqs-io.txt"
vm_step fix
vm_numastor revert fix --revert --json
vm_irqs_counts > "$VM_OUT/irqs-revert.txt"
vm_save_journal journal-revert.json
vm_step revert
