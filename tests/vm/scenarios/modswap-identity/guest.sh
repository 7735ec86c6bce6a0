# numastor fix --modules with two SCSI disks sharing one WWN (qemu-args): after the reload the
# swap could not tell which came back, so the plan fails a check naming both and the swap is
# refused before any change. The megaraid disk (its own identity) is not named. The guest reads
# the two disks' wwid from sysfs itself; state before and after (vm_swap_state) for nothing
# changed.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
SCSI_MODULES="scsi_mod sd_mod megaraid_sas virtio_scsi"
MODS=/vm/kmod/midlayer
VM_DISKS=$((VM_DISKS + 1))

vm_load_storage
vm_wait_disks 60
# the disks on the virtio-scsi host (both), their wwid as the kernel shows it; the megaraid one
vm_scsi_host virtio_scsi
host=$_v
dups=
for d in $(vm_disks); do
	_resolve "/sys/block/$d"
	case "$_v" in */"$host"/*) dups="$dups $d" ;; esac
done
vm_fact dup.disks "${dups# }"
for d in $dups; do
	_rd "/sys/block/$d/device/wwid"
	vm_fact "wwid.$d" "$_v"
done
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
vm_fact mega.disk "$_v"
vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko

vm_numastor plan fix --modules --dry-run --json
vm_swap_state before "$SCSI_MODULES" ""
vm_numastor swap fix --modules
vm_swap_state swap "$SCSI_MODULES" ""
vm_check_round
