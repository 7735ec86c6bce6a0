# numastor fix --modules with a patched nvme: the module directory holds the nvme.ko that
# kmod-patches/build-modules.sh built from the pre-fix source with the nvme-no-forced-node
# series applied (it carries the numastor marker) and that build's manifest.json, as on a
# kernel without the fix. The pre-fix nvme forces the root-bus NVMe onto node 0; the swap
# loads the patched nvme from the module directory and removes and rescans the forced
# function; --revert loads the stock nvme. Then the same with the module directory elsewhere
# (--module-dir; nothing in the default directory): swap in, --revert.
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
vm_fact patched.nvme.srcversion "$(modinfo -F srcversion /vm/kmod/prefix-modules/nvme.ko)"
vm_fact patched.nvme.marker "$(modinfo -F numastor /vm/kmod/prefix-modules/nvme.ko)"
vm_pattern_write NSROOT0001
vm_pattern_write NSMPATH0001
vm_swap_state boot nvme "$pcis"
vm_module_dir /vm/kmod/prefix-modules/manifest.json /vm/kmod/prefix-modules/nvme.ko
vm_numastor before check --json
vm_numastor plan fix --modules --dry-run --json
vm_swap_state planned nvme "$pcis"
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

# --module-dir: the directory moved to /opt/numastor-kmod (root-owned, 0755).
mkdir -p /opt
chmod 0755 /opt
mv "/var/lib/numastor/modules/$(uname -r)" /opt/numastor-kmod
vm_numastor swap2 fix --modules --module-dir /opt/numastor-kmod
vm_swap_state swapped2 nvme "$pcis"
vm_numastor revert2 fix --revert
vm_save_swap_journal journal-revert2.json
vm_swap_state reverted2 nvme "$pcis"
vm_pattern_read NSROOT0001 reverted2
vm_pattern_read NSMPATH0001 reverted2
vm_check_round
