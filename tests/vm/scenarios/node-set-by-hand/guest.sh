# An operator's override of a node the firmware does not give: the stock 6.1 nvme (it has the
# fix) leaves the root-bus controller at numa_node -1; writing 0 to its numa_node by hand makes
# it read 0, the first memory node, exactly what a pre-fix nvme would have forced, and taints
# the kernel I (TAINT_FIRMWARE_WORKAROUND, "FW Bug: Overriding NUMA node" in dmesg).
vm_load_storage
vm_wait_disks 60
cat /proc/sys/kernel/tainted > "$VM_OUT/tainted-before"
for f in /sys/bus/pci/drivers/nvme/0000:00:*; do
	[ -e "$f/numa_node" ] || continue
	echo "${f##*/}" > "$VM_OUT/overridden"
	echo 0 > "$f/numa_node"
	break
done
cat /proc/sys/kernel/tainted > "$VM_OUT/tainted-after"
vm_check_round
