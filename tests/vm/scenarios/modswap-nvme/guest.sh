# numastor fix --modules where the nvme fix is already upstream: the pre-fix nvme (built out of
# tree) forces the root-bus NVMe onto node 0, and numastor's module directory holds only the
# module build's manifest.json, which says the kernel has the fix. The swap must put the stock
# nvme back (modprobe), remove and rescan the forced function, and keep a 4 MiB pattern on
# the NVMe intact; --revert swaps the stock module in again. The guest records each step's
# state (vm_swap_state) and numastor's outputs.
#
# Where the flavour builds nvme in (cloud-amd64) no pre-fix nvme can load and nothing can replace
# the built-in one: the same manifest must plan nothing and change nothing, and a module
# directory that offers an nvme.ko (the build's scsi_mod.ko under that name: its sha256,
# vermagic and ownership all right) must be refused for that reason alone, before anything is
# touched.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
form=module
if vm_builtin nvme; then
	form=builtin
	vm_load_storage
else
	vm_load_storage /vm/prefix-nvme/nvme.ko
fi
vm_fact nvme.form "$form"
vm_wait_disks 60
# every NVMe function: the subsystem's root-bus controller is forced too, the swap must
# rescan it and bring the head's paths back
vm_nvme_pcis
pcis=$_v
vm_fact nvme.pcis "$pcis"
vm_pattern_write NSROOT0001
vm_pattern_write NSMPATH0001
vm_swap_state boot nvme "$pcis"
vm_module_dir /vm/kmod/nvme-only/manifest.json
vm_numastor before check --json
if [ "$form" = builtin ]; then
	vm_numastor plan fix --modules --dry-run --json
	vm_numastor upstream fix --modules
	vm_swap_state upstream nvme "$pcis"
	# an nvme.ko offered for the built-in nvme
	mkdir -p /tmp/builtin-offer
	cp /vm/kmod/midlayer/scsi_mod.ko /tmp/builtin-offer/nvme.ko
	_rd /proc/sys/kernel/osrelease
	krel=$_v
	cat > /tmp/builtin-offer/manifest.json <<-EOF
	{
	  "kernel_release": "$krel",
	  "built": "2026-12-02T00:00:00Z",
	  "modules": [
	    {"name": "nvme", "file": "nvme.ko", "sha256": "$(sha256sum /tmp/builtin-offer/nvme.ko | cut -d' ' -f1)", "vermagic": "$(modinfo -F vermagic /tmp/builtin-offer/nvme.ko)", "srcversion": null, "patches": ["nvme-no-forced-node"], "replaces": "kernel/drivers/nvme/host/nvme.ko"}
	  ],
	  "already_upstream": []
	}
	EOF
	vm_module_dir /tmp/builtin-offer/manifest.json /tmp/builtin-offer/nvme.ko
	vm_swap_state offered-before nvme "$pcis"
	vm_numastor offered fix --modules
	vm_swap_state offered nvme "$pcis"
	vm_pattern_read NSROOT0001 offered
	vm_pattern_read NSMPATH0001 offered
	vm_check_round
	return 0
fi
vm_disk_by_serial NSROOT0001
vm_disk_pci "$_v"
pci=$_v
vm_fact nvme.pci "$pci"
vm_fact stock.nvme.srcversion "$(modinfo -F srcversion nvme)"
vm_numastor plan fix --modules --dry-run --json
vm_swap_state planned nvme "$pcis"
vm_pattern_read NSROOT0001 planned
vm_pattern_read NSMPATH0001 planned
vm_numastor swap fix --modules
vm_save_swap_journal journal-swap.json
vm_swap_state swapped nvme "$pcis"
vm_pattern_read NSROOT0001 swapped
vm_pattern_read NSMPATH0001 swapped
vm_numastor swapped check --json
vm_numastor revert fix --revert
vm_save_swap_journal journal-revert.json
vm_swap_state reverted nvme "$pcis"
vm_pattern_read NSROOT0001 reverted
vm_pattern_read NSMPATH0001 reverted
vm_check_round
