# numastor fix --modules where the nvme fix is already upstream: the pre-fix nvme (built out of
# tree) forces the root-bus NVMe onto node 0, and numastor's module directory holds only the
# module build's manifest.json, which says the kernel has the fix. The swap must put the stock
# nvme back (modprobe), remove and rescan the forced function, and keep a 4 MiB pattern on
# the NVMe intact; --revert swaps the stock module in again. The guest records each step's
# state (vm_swap_state) and numastor's outputs.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_disk_by_serial NSROOT0001
vm_disk_pci "$_v"
pci=$_v
vm_fact nvme.pci "$pci"
# every NVMe function: the subsystem's root-bus controller is forced too, the swap must
# rescan it and bring the head's paths back
vm_nvme_pcis
pcis=$_v
vm_fact nvme.pcis "$pcis"
vm_fact stock.nvme.srcversion "$(modinfo -F srcversion nvme)"
vm_pattern_write NSROOT0001
vm_pattern_write NSMPATH0001
vm_swap_state boot nvme "$pcis"
vm_module_dir /vm/kmod/nvme-only/manifest.json
vm_numastor before check --json
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
