# numastor fix --modules when the swap itself fails, and the machine must end exactly as it
# was. (1) A patched sd_mod the kernel refuses to load: the build's sd_mod.ko with the CRC of
# one symbol it imports from scsi_mod inverted (fault-modules.py; its manifest entry has the
# file's sha256, so every check passes): the stock modules are out and the patched scsi_mod in
# when it fails. (2) A disk held open by a process (not mounted): the stock modules cannot be
# removed while it is open. (3) (1) again, the way back also failing to load the stock sd_mod
# (NUMASTOR_TEST_FAIL_INSERT_BACK=sd_mod, EIO) and --timeout 3: the rollback must go on and load
# every other module, name sd_mod, keep the journal; a --revert then restores everything.
# Patterns on both SCSI disks; the state before and after each.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
SCSI_MODULES="scsi_mod sd_mod megaraid_sas virtio_scsi"
MODS=/vm/kmod/midlayer

vm_load_storage
vm_wait_disks 60
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
vm_disk_id "$_v"
mega=$_v
vm_scsi_host virtio_scsi
vm_disk_on_host "$_v"
vm_disk_id "$_v"
vscsi=$_v
vm_fact mega.id "$mega"
vm_fact vscsi.id "$vscsi"
vm_pattern_write "$mega"
vm_pattern_write "$vscsi"

# (1) sd_mod fails to load.
vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko /vm/kmod/faults/sd_mod-badcrc.ko
moddir=$_v
mv "$moddir/sd_mod-badcrc.ko" "$moddir/sd_mod.ko"
sym=$(cat /vm/kmod/faults/sd_mod-badcrc.sym)
vm_fact badcrc.symbol "$sym"
sed -i "/\"name\": \"sd_mod\"/s/\"sha256\": \"[0-9a-f]*\"/\"sha256\": \"$(sha256sum < "$moddir/sd_mod.ko" | cut -d' ' -f1)\"/" \
	"$moddir/manifest.json"
vm_swap_state badcrc-before "$SCSI_MODULES" ""
vm_numastor badcrc fix --modules
vm_swap_state badcrc "$SCSI_MODULES" ""
vm_save_swap_journal journal-badcrc.json
vm_fact badcrc.dmesg "$(dmesg | grep -c "sd_mod: disagrees about version of symbol $sym")"
vm_pattern_read "$mega" badcrc
vm_pattern_read "$vscsi" badcrc

# (3) The same, and the way back cannot load the stock sd_mod.
vm_swap_state badback-before "$SCSI_MODULES" ""
export NUMASTOR_TEST_FAIL_INSERT_BACK=sd_mod
vm_numastor badback fix --modules --timeout 3 --json
unset NUMASTOR_TEST_FAIL_INSERT_BACK
vm_swap_state badback "$SCSI_MODULES" ""
vm_save_swap_journal journal-badback.json
vm_numastor badback-revert fix --revert
vm_swap_state badback-reverted "$SCSI_MODULES" ""
vm_pattern_read "$mega" badback-reverted
vm_pattern_read "$vscsi" badback-reverted

# (2) The megasas disk held open by a process.
vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
vm_disk_with_id "$mega"
# shellcheck disable=SC2217 # holding the disk open is the point
sleep 600 < "/dev/$_v" &
holder=$!
vm_wait_holding "$holder" "/dev/$_v"
vm_fact open.disk "$_v"
vm_swap_state open-before "$SCSI_MODULES" ""
vm_numastor open fix --modules
vm_swap_state open "$SCSI_MODULES" ""
vm_save_swap_journal journal-open.json
kill "$holder"
wait "$holder" || :
vm_pattern_read "$mega" open
vm_pattern_read "$vscsi" open
vm_check_round
