# numastor fix --modules with the patched SCSI midlayer (scsi_mod and sd_mod as
# kmod-patches/build-modules.sh built them for this kernel, with their manifest.json), and
# where the midlayer's objects land, measured: booted with slub_debug=U,kmalloc-* so that
# /sys/kernel/debug/slab/<cache>/alloc_traces shows the CPUs and nodes of the live objects of
# each allocation site. The node-1 HBA's disk (megasas; on the cloud flavour, which has no
# megaraid_sas, an ich9-ahci's: libata's host) is deleted and its host rescanned from CPU 0 (node 0)
# with the stock midlayer, after the swap, and after --revert: the rescanning shell's own
# scsi_alloc_sdev (kmalloc-4k) and scsi_alloc_target (kmalloc-1k) objects tell the node.
# Patterns on both SCSI disks must survive every step.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
vm_node1_hba_driver
hba=$_v
if [ "$hba" = ahci ]; then
	SCSI_MODULES="scsi_mod sd_mod ahci libahci libata virtio_scsi scsi_common"
else
	SCSI_MODULES="scsi_mod sd_mod megaraid_sas virtio_scsi scsi_common"
fi

# Delete the megasas disk and rescan its channel/target/LUN from CPU 0 (a wildcard scan walks
# every target id of the HBA: 10 s under TCG); facts alloc.sdev.STEP and alloc.target.STEP,
# and copies of both caches' traces.
# Where the kernel lists live objects by call site alone (5.10's alloc_calls), the virtio-scsi
# disk's scsi_device and scsi_target would share the megasas disk's line: that disk leaves for
# the measurement (its target goes with its last device) and is scanned back afterwards.
rescan_from_cpu0() { # step
	local host disk ctl vhost=''
	vm_disk_with_id "$mega"
	vm_disk_host "$_v"
	host=$_v
	if [ "$(vm_slab_file kmalloc-4k)" = /sys/kernel/slab/kmalloc-4k/alloc_calls ]; then
		vm_scsi_host virtio_scsi
		vhost=$_v
		vm_disk_with_id "$vscsi"
		echo 1 > "/sys/block/$_v/device/delete"
		VM_DISKS=$((VM_DISKS - 1))
	fi
	vm_disk_with_id "$mega"
	disk=$_v
	ctl=$(echo "${mega#*/}" | tr : ' ')
	echo 1 > "/sys/block/$disk/device/delete"
	if [ "$hba" = ahci ]; then
		# libata scans in its error handler's wake: the host's EH thread (scsi_eh_N) queues
		# ata_scsi_hotplug on its own CPU's worker, which allocates; that thread goes to CPU 0
		vm_pid_of "scsi_eh_${host#host}"
		taskset -p 1 "$_v" > /dev/null
		vm_fact "rescan.$1.eh_pid" "$_v"
	fi
	vm_on_cpu 0 "rescan.$1" "echo '$ctl' > /sys/class/scsi_host/$host/scan"
	vm_wait_disks 30
	_rd "/tmp/on-cpu.pid"
	if [ "$hba" = ahci ]; then
		vm_alloc_trace kmalloc-4k scsi_alloc_sdev - "sdev.$1" ata_scsi_hotplug
		vm_alloc_trace kmalloc-1k scsi_alloc_target - "target.$1" ata_scsi_hotplug
	else
		vm_alloc_trace kmalloc-4k scsi_alloc_sdev "$_v" "sdev.$1"
		vm_alloc_trace kmalloc-1k scsi_alloc_target "$_v" "target.$1"
	fi
	vm_slab_traces kmalloc-4k "$1"
	vm_slab_traces kmalloc-1k "$1"
	if [ -n "$vhost" ]; then
		VM_DISKS=$((VM_DISKS + 1))
		echo "${vscsi#*/}" | tr : ' ' > "/sys/class/scsi_host/$vhost/scan"
		vm_wait_disks 30
	fi
}

vm_load_storage
vm_wait_disks 60
vm_fact slab.listing "$(vm_slab_file kmalloc-4k)"
vm_node1_hba_disk "$hba"
mega_disk=$_v
vm_disk_id "$mega_disk"
mega=$_v
vm_disk_pci "$mega_disk"
mega_pci=$_v
vm_scsi_host virtio_scsi
vm_disk_on_host "$_v"
vm_disk_id "$_v"
vscsi=$_v
vm_fact hba.driver "$hba"
vm_fact mega.id "$mega"
vm_fact mega.pci "$mega_pci"
vm_fact vscsi.id "$vscsi"
vm_fact stock.scsi_mod.marker "$(modinfo -F numastor scsi_mod)"
vm_fact patched.scsi_mod.marker "$(modinfo -F numastor /vm/kmod/midlayer/scsi_mod.ko)"
vm_fact patched.sd_mod.marker "$(modinfo -F numastor /vm/kmod/midlayer/sd_mod.ko)"
vm_pattern_write "$mega"
vm_pattern_write "$vscsi"

rescan_from_cpu0 stock
vm_swap_state boot "$SCSI_MODULES" "$mega_pci"
vm_module_dir /vm/kmod/midlayer/manifest.json /vm/kmod/midlayer/scsi_mod.ko /vm/kmod/midlayer/sd_mod.ko
vm_numastor before check --json
vm_numastor plan fix --modules --dry-run --json
vm_swap_state planned "$SCSI_MODULES" "$mega_pci"
vm_numastor swap fix --modules
vm_save_swap_journal journal-swap.json
vm_swap_state swapped "$SCSI_MODULES" "$mega_pci"
vm_pattern_read "$mega" swapped
vm_pattern_read "$vscsi" swapped
vm_numastor swapped check --json

rescan_from_cpu0 patched
vm_pattern_read "$mega" patched-rescan
if [ "$hba" = ahci ]; then
	# the journal as a numastor that loaded HBA drivers before their libraries wrote it: ahci
	# before libata (the revert must still load libata and libahci first)
	awk '/^  "modules":\[/ { inmods = 1; print; next }
		inmods && /^  \]/ { inmods = 0 }
		inmods { obj = obj $0 "\n"; if ($0 ~ /^    \}/) { sub(/,?\n$/, "", obj); objs[n++] = obj; obj = "" } next }
		!inmods && n { for (i = 0; i < n; i++) if (objs[i] ~ /"name":"ahci"/) a = i
			for (i = 0; i < n; i++) if (objs[i] ~ /"name":"libata"/) l = i
			k = 0
			for (i = 0; i < n; i++) { if (i == l) ord[k++] = a; if (i != a) ord[k++] = i }
			for (i = 0; i < n; i++) printf "%s%s\n", objs[ord[i]], (i < n - 1 ? "," : "")
			n = 0 }
		{ print }' /var/lib/numastor/swap.json > /tmp/swap.json
	cat /tmp/swap.json > /var/lib/numastor/swap.json
	vm_save_swap_journal journal-reordered.json
fi
vm_numastor revert fix --revert
vm_save_swap_journal journal-revert.json
vm_swap_state reverted "$SCSI_MODULES" "$mega_pci"
vm_pattern_read "$mega" reverted
vm_pattern_read "$vscsi" reverted
rescan_from_cpu0 reverted
vm_check_round
