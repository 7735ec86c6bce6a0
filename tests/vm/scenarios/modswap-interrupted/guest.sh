# numastor fix --modules killed after each of its steps in turn, and fix --revert after each
# kill. The machine: the pre-fix nvme (forcing the root-bus NVMe onto node 0) and the build's
# patched scsi_mod/sd_mod, so one swap holds both groups: nvme out and the stock one in, the
# forced function removed and the bus rescanned, every SCSI module out and back (with the
# patched midlayer). The stock modules run with non-default options (nvme sgl_threshold,
# scsi_mod inq_timeout), which the revert must give them again. Run K is killed
# (NUMASTOR_TEST_STOP_AFTER_STEP=K, _exit(137)) right after the K-th step that changed the
# machine; runs go on until a swap completes without being killed, which is then reverted too.
# After each run: the state (vm_swap_state), the options, the patterns, the journal.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
MODULES="nvme scsi_mod sd_mod megaraid_sas virtio_scsi"
MODS=/vm/kmod/midlayer

modprobe nvme-core
insmod /vm/prefix-nvme/nvme.ko sgl_threshold=65536
modprobe scsi_mod inq_timeout=7
vm_load_storage_rest() {
	modprobe -a sd_mod megaraid_sas virtio_pci virtio_blk virtio_scsi
}
vm_load_storage_rest
vm_wait_disks 60
vm_disk_by_serial NSROOT0001
vm_disk_pci "$_v"
pci=$_v
vm_fact nvme.pci "$pci"
# every NVMe function (the subsystem's root-bus controller is forced too)
vm_nvme_pcis
pcis=$_v
vm_fact nvme.pcis "$pcis"
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
vm_disk_id "$_v"
mega=$_v
vm_scsi_host virtio_scsi
vm_disk_on_host "$_v"
vm_disk_id "$_v"
vscsi=$_v
vm_fact ids "NSROOT0001 NSPXB0001 NSMPATH0001 $mega $vscsi"
for id in NSROOT0001 NSPXB0001 NSMPATH0001 "$mega" "$vscsi"; do
	vm_pattern_write "$id"
done

options() { # step: the options the revert must restore, as the kernel shows them
	_rd /sys/module/nvme/parameters/sgl_threshold
	vm_fact "param.nvme.sgl_threshold.$1" "${_v:-absent}"
	_rd /sys/module/scsi_mod/parameters/inq_timeout
	vm_fact "param.scsi_mod.inq_timeout.$1" "${_v:-absent}"
}
patterns() { # step
	for id in NSROOT0001 NSPXB0001 NSMPATH0001 "$mega" "$vscsi"; do
		vm_pattern_read "$id" "$1"
	done
}

vm_swap_state boot "$MODULES" "$pcis"
options boot
vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
vm_numastor plan fix --modules --dry-run --json

k=1
while [ "$k" -le 30 ]; do
	export NUMASTOR_TEST_STOP_AFTER_STEP=$k
	vm_numastor "kill$k" fix --modules
	unset NUMASTOR_TEST_STOP_AFTER_STEP
	_rd "$VM_OUT/kill$k.rc"
	rc=$_v
	vm_swap_state "killed$k" "$MODULES" "$pcis"
	vm_save_swap_journal "journal-killed$k.json"
	if [ "$k" = 1 ]; then
		# a second swap over a journaled one is refused, and changes nothing
		vm_numastor again fix --modules
		vm_swap_state again "$MODULES" "$pcis"
	fi
	if [ "$rc" = 0 ]; then
		# the journal of a swap made in another boot: reported, nothing swapped back
		cp /var/lib/numastor/swap.json /tmp/swap.json
		sed -i 's/"boot_id":"[^"]*"/"boot_id":"00000000-0000-0000-0000-000000000000"/' /var/lib/numastor/swap.json
		vm_numastor otherboot fix --revert
		vm_swap_state otherboot "$MODULES" "$pcis"
		cp /tmp/swap.json /var/lib/numastor/swap.json
	fi
	vm_numastor "revert$k" fix --revert
	vm_swap_state "reverted$k" "$MODULES" "$pcis"
	options "reverted$k"
	patterns "reverted$k"
	vm_save_swap_journal "journal-reverted$k.json"
	vm_fact "run.$k" "$rc"
	[ "$rc" = 137 ] || break
	k=$((k + 1))
done
vm_fact runs "$k"
vm_check_round
