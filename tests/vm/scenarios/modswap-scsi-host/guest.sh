# numastor fix --modules with the whole scsi-numa-local-alloc build: the patched scsi_mod with
# scsi_host_alloc_node() and the HBA drivers that call it on their PCI function's node
# (megaraid_sas where the kernel has it, libata for the ahci controllers), and where the SCSI
# hosts land, measured at boot (stock), after the swap and after --revert.
# Booted with isolcpus=2-3: every CPU of node 1 is isolated, so the PCI core has no
# housekeeping CPU on the HBAs' node to run their probes on (pci_call_probe) and runs them on
# the CPU of the task that loads the driver, on node 0.
# Ground truth, by the kernel's own means:
# - megasas's host (struct Scsi_Host + megasas_instance, about 23 KiB) is above the slab's
#   sizes: an order-3 page allocation. The mm_page_alloc trace event with its stack trace gives
#   the pfn and CPU of the one under megasas_probe_one; the pfn's memory block
#   (sys/devices/system/node/nodeN/memoryM) gives the node.
# - the ahci ports' hosts are kmalloc objects: slub_debug=U's alloc_traces line whose stack
#   holds ata_scsi_add_hosts ("cpus=… nodes=…" of the live objects). The q35 board's own AHCI
#   (root bus, no node) is kept from binding (driver_override), or its ports' hosts would
#   share that stack.
# Patterns on the node-1 disks and the virtio-scsi disk must survive every step.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
T=/sys/kernel/tracing
mount -t tracefs nodev "$T" 2> /dev/null

host_trace_start() {
	echo 0 > "$T/tracing_on"
	echo > "$T/trace"
	echo 'order > 2' > "$T/events/kmem/mm_page_alloc/filter"
	echo 1 > "$T/options/stacktrace"
	echo 1 > "$T/events/kmem/mm_page_alloc/enable"
	echo 1 > "$T/tracing_on"
}

# The node of a pfn: the node whose memory block holds it.
pfn_node() { # pfn (0x… or decimal)
	local _bs _blk _n
	_bs=$(cat /sys/devices/system/memory/block_size_bytes)
	_blk=$(( $1 / (0x$_bs / 4096) ))
	for _n in /sys/devices/system/node/node*; do
		if [ -e "$_n/memory$_blk" ]; then
			_v=${_n##*node}
			return 0
		fi
	done
	_v=unknown
}

# Facts host.megasas.STEP = "cpu=C node=N" (or none) from the trace, and
# alloc.ahci.STEP from alloc_traces.
host_trace_stop() { # step
	local _l _pfn _cpu
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/kmem/mm_page_alloc/enable"
	echo 0 > "$T/options/stacktrace"
	cp "$T/trace" "$VM_OUT/trace-$1.txt"
	_l=$(awk '/mm_page_alloc:/ { ev = $0; next } /=> megasas_probe_one/ && ev != "" { print ev; exit }' "$VM_OUT/trace-$1.txt")
	if [ "$hba" = megaraid_sas ] && [ -n "$_l" ]; then
		# pfn=0x… from 6.1 on, decimal on 5.10: the shell's arithmetic takes both
		_pfn=$(echo "$_l" | sed -n 's/.* pfn=\([0-9a-fx]*\) .*/\1/p')
		_cpu=$(echo "$_l" | sed -n 's/.*\[0*\([0-9][0-9]*\)\].*/\1/p')
		pfn_node "$_pfn"
		vm_fact "host.megasas.$1" "cpu=$_cpu node=$_v"
	elif [ "$hba" = megaraid_sas ]; then
		vm_fact "host.megasas.$1" none
	fi
	vm_alloc_trace kmalloc-4k 'scsi_host_alloc(_node)?' - "ahci.$1" ata_scsi_add_hosts
	vm_slab_traces kmalloc-4k "$1"
}

# A kmalloc without a node takes the local node's partial slabs, else (remote_node_defrag_ratio
# of the time, 100 by default: nearly always) another node's: after the patched hosts on node 1
# are freed, the stock ones reloaded on node 0 took their partial slab once in a CI run (6.1,
# "nodes=0-1"). slub_debug's caches keep no per-CPU slab, so with the ratio 0 a node-0 CPU's
# kmalloc lands on node 0 and what is measured is the driver's choice, not the slab's leftovers.
for f in /sys/kernel/slab/kmalloc-*/remote_node_defrag_ratio; do
	echo 0 > "$f" 2> /dev/null || true
done
vm_fact slab.remote_ratio "$(cat /sys/kernel/slab/kmalloc-4k/remote_node_defrag_ratio 2> /dev/null)"
host_trace_start
vm_load_storage
vm_fact slab.listing "$(vm_slab_file kmalloc-4k)"
vm_node1_hba_driver
hba=$_v
# The board's AHCI stays unbound (before ahci loads, or unbound now on the cloud flavour).
for f in /sys/bus/pci/devices/*; do
	[ "$(cat "$f/class")" = 0x010601 ] || continue
	[ "$(cat "$f/numa_node")" = 1 ] && continue
	echo none > "$f/driver_override"
	if [ -e "$f/driver" ]; then echo "${f##*/}" > "$f/driver/unbind"; fi
	vm_fact board_ahci "${f##*/}"
done
modprobe ahci
VM_DISKS=$((VM_DISKS + 1))
vm_wait_disks 60
host_trace_stop boot

SWAP_MODULES="scsi_mod sd_mod ahci libahci libata virtio_scsi scsi_common"
[ "$hba" = megaraid_sas ] && SWAP_MODULES="$SWAP_MODULES megaraid_sas"
vm_fact hba.driver "$hba"
node1_ids='' node1_pcis=''
for d in $(vm_disks); do
	vm_disk_pci "$d"
	p=$_v
	[ -n "$p" ] || continue
	[ "$(cat "/sys/bus/pci/devices/$p/numa_node")" = 1 ] || continue
	_link_base "/sys/bus/pci/devices/$p/driver"
	case $_v in ahci | megaraid_sas) ;; *) continue ;; esac
	drv=$_v
	vm_disk_id "$d"
	vm_fact "node1.$_v.driver" "$drv"
	vm_fact "node1.$_v.pci" "$p"
	node1_ids="$node1_ids $_v"
	node1_pcis="$node1_pcis $p"
	vm_pattern_write "$_v"
done
vm_fact node1.ids "${node1_ids# }"
vm_scsi_host virtio_scsi
vm_disk_on_host "$_v"
vm_disk_id "$_v"
vscsi=$_v
vm_fact vscsi.id "$vscsi"
vm_pattern_write "$vscsi"
for m in scsi_mod libata megaraid_sas; do
	vm_fact "patched.$m.marker" "$(modinfo -F numastor "/vm/kmod/modules/$m.ko" 2> /dev/null)"
done

vm_swap_state boot "$SWAP_MODULES" "$node1_pcis"
# A manifest without the patched scsi_mod: the patched HBA drivers import its
# scsi_host_alloc_node, which the stock scsi_mod does not export. Refused, nothing changed.
mkdir -p /tmp/nocore
grep -v '"name": "scsi_mod"' /vm/kmod/modules/manifest.json > /tmp/nocore/manifest.json
vm_fact nocore.entries "$(grep -c '"name": ' /tmp/nocore/manifest.json)"
vm_module_dir /tmp/nocore/manifest.json /vm/kmod/modules/*.ko
vm_swap_state nocore-before "$SWAP_MODULES" "$node1_pcis"
vm_numastor nocore fix --modules
vm_swap_state nocore "$SWAP_MODULES" "$node1_pcis"
# libata built against another patched scsi_mod (its scsi_host_alloc_node CRC not the one
# beside it; the manifest's sha256 made to match): refused, nothing changed.
# A kernel that versions no symbol (7.2: CONFIG_MODVERSIONS unset) has no CRC to disagree:
# there the libata imports a symbol nothing exports (scsi_host_alloc_nodX), as one built against
# another scsi_mod would, and the check goes by names (fault-modules.py; libkmod reads such a
# module's imports from its undefined symbols, CRC 0).
mkdir -p /tmp/badcrc
cp /vm/kmod/modules/* /tmp/badcrc/
if [ -f /vm/kmod/faults/no-modversions ]; then
	vm_fact badcrc.form "$(cat /vm/kmod/faults/no-modversions)"
	cp /vm/kmod/faults/libata-badsym.ko /tmp/badcrc/libata.ko
else
	cp /vm/kmod/faults/libata-badcrc.ko /tmp/badcrc/libata.ko
fi
{
	sum=$(sha256sum /tmp/badcrc/libata.ko | cut -d' ' -f1)
	sed -i "/\"name\": \"libata\"/s/\"sha256\": \"[0-9a-f]*\"/\"sha256\": \"$sum\"/" /tmp/badcrc/manifest.json
	vm_fact badcrc.sha_set "$(grep -c "$sum" /tmp/badcrc/manifest.json)"
	vm_module_dir /tmp/badcrc/*
	vm_swap_state badcrc-before "$SWAP_MODULES" "$node1_pcis"
	vm_numastor badcrc fix --modules
	vm_swap_state badcrc "$SWAP_MODULES" "$node1_pcis"
}

vm_module_dir /vm/kmod/modules/*
vm_numastor before check --json
vm_numastor plan fix --modules --dry-run --json
host_trace_start
vm_numastor swap fix --modules
host_trace_stop swapped
vm_save_swap_journal journal-swap.json
vm_swap_state swapped "$SWAP_MODULES" "$node1_pcis"
for i in $node1_ids $vscsi; do vm_pattern_read "$i" swapped; done
vm_numastor swapped check --json

host_trace_start
vm_numastor revert fix --revert
host_trace_stop reverted
vm_swap_state reverted "$SWAP_MODULES" "$node1_pcis"
for i in $node1_ids $vscsi; do vm_pattern_read "$i" reverted; done
vm_numastor reverted check --json
vm_check_round
