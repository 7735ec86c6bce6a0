# md RAID1 across nodes, and its twin on one node, built with Debian's mdadm (fetch-mdadm.sh):
#   md0: the node-1 NVMe (NSPXB0001, behind the node-1 expander) and the node-0 NVMe
#        (NSNODE0001, behind this scenario's node-0 expander; the bed's root-bus NVMe reads
#        numa_node -1, no node at all);
#   md1: the megasas disk and a second node-1 NVMe (NSPXB0002): both on node 1.
# Ground truth, read in the guest: each array's md/level and slaves/*, and each member's PCI
# function and its numa_node (the member's device link walked up to the function). Then the
# usual check round.
# shellcheck disable=SC2154 # _v and _pcidev are what guest/lib.sh's helpers return
[ -x /sbin/mdadm ] || { echo "test bed: no mdadm in the initramfs (tests/vm/fetch-mdadm.sh did not run)" >&2; exit 1; }
vm_load_storage
modprobe raid1
vm_wait_disks 60
# the scenario's two NVMe come on top of the bed's six disks
n=0
while :; do
	vm_disk_by_serial NSNODE0001
	node0=$_v
	vm_disk_by_serial NSPXB0002
	pxb2=$_v
	vm_disk_by_serial NSPXB0001
	pxb=$_v
	[ -n "$node0" ] && [ -n "$pxb2" ] && [ -n "$pxb" ] && [ -e "/dev/$node0" ] && [ -e "/dev/$pxb2" ] && [ -e "/dev/$pxb" ] && break
	[ "$n" -lt 300 ] || { echo "test bed: NVMe NSNODE0001 '$node0', NSPXB0002 '$pxb2', NSPXB0001 '$pxb' did not all appear" >&2; exit 1; }
	sleep 0.1
	n=$((n + 1))
done
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
mega=$_v
[ -n "$mega" ] || { echo "test bed: no megasas disk" >&2; exit 1; }
vm_fact disk.nvme-pxb "$pxb"
vm_fact disk.nvme-node0 "$node0"
vm_fact disk.nvme-pxb2 "$pxb2"
vm_fact disk.mega "$mega"

/sbin/mdadm --create /dev/md0 --run --assume-clean --level=1 --raid-devices=2 --metadata=1.2 \
	"/dev/$pxb" "/dev/$node0" > "$VM_OUT/mdadm-md0.txt" 2>&1
/sbin/mdadm --create /dev/md1 --run --assume-clean --level=1 --raid-devices=2 --metadata=1.2 \
	"/dev/$mega" "/dev/$pxb2" >> "$VM_OUT/mdadm-md1.txt" 2>&1
/sbin/mdadm --detail /dev/md0 /dev/md1 > "$VM_OUT/mdadm-detail.txt" 2>&1 || :
cat /proc/mdstat > "$VM_OUT/mdstat.txt"

# Each array: level, state, members, and each member's function and node.
for md in md0 md1; do
	_rd "/sys/block/$md/md/level"
	vm_fact "$md.level" "$_v"
	_rd "/sys/block/$md/md/array_state"
	vm_fact "$md.array_state" "$_v"
	members=
	for s in "/sys/block/$md"/slaves/*; do
		[ -e "$s" ] || continue
		m=${s##*/}
		members="$members $m"
		_resolve "/sys/block/$m/device"
		if _pci_walk "$_v"; then
			vm_fact "$md.member.$m.pci" "${_pcidev##*/}"
			_rd "$_pcidev/numa_node"
			vm_fact "$md.member.$m.numa_node" "$_v"
		else
			vm_fact "$md.member.$m.pci" none
		fi
	done
	vm_fact "$md.members" "${members# }"
done
# the arrays carry data: a pattern written through md0 reads back from each member's data area
echo numastor-md > /tmp/md-pattern
dd if=/tmp/md-pattern of=/dev/md0 bs=4096 count=1 conv=sync oflag=direct 2>/dev/null
vm_fact md0.readback "$(dd if=/dev/md0 bs=4096 count=1 iflag=direct 2>/dev/null | tr -d '\000')"
vm_check_round
