# numastor fix --modules next to a vendor or DKMS driver: megaraid_sas installed as dkms does
# (a copy under /lib/modules/<release>/updates/dkms, depmod: modprobe then prefers it over the
# in-tree file; the in-tree build stands in for the vendor's), loaded from there at boot. The
# swap of the midlayer (scsi_mod, sd_mod) would remove megaraid_sas and load the in-tree one in
# its place: refused, megaraid_sas left as it runs. Then the copy removed (depmod): the running
# megaraid_sas is the in-tree code and modprobe resolves to the in-tree file, and the same plan
# passes that check (the twin).
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
SCSI_MODULES="scsi_mod sd_mod megaraid_sas virtio_scsi"
MODS=/vm/kmod/midlayer

_rd /proc/sys/kernel/osrelease
krel=$_v
mdir=/lib/modules/$krel
intree=$(grep '/megaraid_sas\.ko' "$mdir/modules.order")
intree_file=$(ls "$mdir/$intree"*)
mkdir -p "$mdir/updates/dkms"
cp "$intree_file" "$mdir/updates/dkms/"
/usr/sbin/depmod "$krel"
dkms_file=$mdir/updates/dkms/${intree_file##*/}
vm_fact dkms.file "$dkms_file"
# what busybox modprobe (and the boot's) loads megaraid_sas from: modules.dep's line
vm_fact dkms.dep "$(grep -o '^[^:]*megaraid_sas\.ko[^:]*' "$mdir/modules.dep")"

vm_load_storage
vm_wait_disks 60
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
vm_disk_id "$_v"
vm_fact mega.id "$_v"
vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko

vm_swap_state dkms-dry-before "$SCSI_MODULES" ""
vm_numastor dkms-dry fix --modules --dry-run --json
vm_swap_state dkms-before "$SCSI_MODULES" ""
vm_numastor dkms fix --modules
vm_swap_state dkms "$SCSI_MODULES" ""
vm_save_swap_journal journal-dkms.json

# the twin: no vendor copy installed any more; megaraid_sas runs the in-tree code
rm -r "$mdir/updates/dkms"
/usr/sbin/depmod "$krel"
vm_fact twin.dep "$(grep -o '^[^:]*megaraid_sas\.ko[^:]*' "$mdir/modules.dep")"
vm_numastor twin-dry fix --modules --dry-run --json
vm_check_round
