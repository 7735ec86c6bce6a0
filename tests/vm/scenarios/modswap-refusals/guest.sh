# numastor fix --modules refusing, each time before touching anything, with the real patched
# SCSI modules in the module directory: a disk the swap would detach is mounted (ext2 from
# busybox mke2fs) or used as swap; then, with no disk in use, a manifest whose sha256 does not
# match, a group-writable module file, a module file not owned by root, a module with another
# kernel's vermagic, a manifest for another kernel release. And --install with the disk
# mounted: copies into /lib/modules/<release>/updates/numastor and runs depmod (kmod's, from
# the host), --revert removes them. After each attempt the guest records the state
# (vm_swap_state) and what is mounted / swapped on.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
SCSI_MODULES="scsi_mod sd_mod megaraid_sas virtio_scsi"
MODS=/vm/kmod/midlayer

# Facts in_use.STEP: the /dev/sd* lines of /proc/mounts and /proc/swaps.
in_use() { # step
	vm_fact "in_use.$1" "$(grep -h '^/dev/sd' /proc/mounts /proc/swaps | cut -d' ' -f1,2 | tr '\n' ';')"
}

# Try one thing: state before (STEP-before), numastor (tag STEP), state after (STEP).
attempt() { # step numastor-args...
	local step="$1"
	shift
	vm_swap_state "$step-before" "$SCSI_MODULES" ""
	in_use "$step-before"
	vm_numastor "$step" "$@"
	vm_swap_state "$step" "$SCSI_MODULES" ""
	in_use "$step"
}

# The module directory with the build's modules, then one edit of sd_mod's manifest entry.
sd_manifest() { # sed expression for sd_mod's line
	sed -i "/\"name\": \"sd_mod\"/$1" "$moddir/manifest.json"
}

vm_load_storage
vm_wait_disks 60
modprobe ext4
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
mega_disk=$_v
vm_scsi_host virtio_scsi
vm_disk_on_host "$_v"
vscsi_disk=$_v
vm_fact mega.disk "$mega_disk"
vm_fact vscsi.disk "$vscsi_disk"
_rd /proc/sys/kernel/osrelease
krel=$_v
vm_fact krel "$krel"
vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
moddir=$_v

# A mounted disk: refused, and a file on it survives.
mke2fs -q "/dev/$mega_disk"
mkdir -p /mnt/mega
mount -t ext2 "/dev/$mega_disk" /mnt/mega
dd if=/dev/urandom of=/mnt/mega/data bs=64k count=16 2>/dev/null
sync
vm_fact file.written "$(sha256sum < /mnt/mega/data | cut -d' ' -f1)"
vm_numastor mounted-plan fix --modules --dry-run --json
attempt mounted fix --modules

# --install with the disk still mounted, then --revert.
attempt install fix --modules --install
vm_save_swap_journal journal-install.json
for m in scsi_mod sd_mod; do
	f=/lib/modules/$krel/updates/numastor/$m.ko
	if [ -f "$f" ]; then
		vm_fact "installed.$m.sha256" "$(sha256sum < "$f" | cut -d' ' -f1)"
		vm_fact "installed.$m.mode" "$(stat -c '%a %u' "$f")"
	else
		vm_fact "installed.$m.sha256" missing
	fi
	vm_fact "manifest.$m.sha256" "$(sha256sum < "$moddir/$m.ko" | cut -d' ' -f1)"
	vm_fact "modules_dep.$m.after_install" "$(grep -o "^[^:]*/$m.ko:" "/lib/modules/$krel/modules.dep" | tr '\n' ' ')"
done
attempt install-revert fix --revert
vm_save_swap_journal journal-install-revert.json
for m in scsi_mod sd_mod; do
	vm_fact "modules_dep.$m.after_revert" "$(grep -o "^[^:]*/$m.ko:" "/lib/modules/$krel/modules.dep" | tr '\n' ' ')"
done
vm_fact installed.after_revert "$(find "/lib/modules/$krel/updates/numastor" -type f 2>/dev/null | tr '\n' ' ')"
vm_fact file.mounted "$(sha256sum < /mnt/mega/data | cut -d' ' -f1)"
umount /mnt/mega

# Swap on the virtio-scsi disk: refused.
mkswap "/dev/$vscsi_disk" > /dev/null
swapon "/dev/$vscsi_disk"
attempt swap fix --modules
swapoff "/dev/$vscsi_disk"

# No disk in use from here on: each refusal is the check's alone.
sd_manifest 's/"sha256": "[0-9a-f]*"/"sha256": "0000000000000000000000000000000000000000000000000000000000000000"/'
attempt sha256 fix --modules

vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
chmod 0664 "$moddir/sd_mod.ko"
attempt group-writable fix --modules

vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
chmod 0775 "$moddir"
attempt dir-writable fix --modules

vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
chown 1000:1000 "$moddir/sd_mod.ko"
attempt not-root fix --modules

vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko /vm/kmod/faults/sd_mod-vermagic.ko
mv "$moddir/sd_mod-vermagic.ko" "$moddir/sd_mod.ko"
vm_fact fault.vermagic "$(modinfo -F vermagic "$moddir/sd_mod.ko")"
sd_manifest "s/\"sha256\": \"[0-9a-f]*\"/\"sha256\": \"$(sha256sum < "$moddir/sd_mod.ko" | cut -d' ' -f1)\"/"
sd_manifest "s/\"vermagic\": \"[^\"]*\"/\"vermagic\": \"$(modinfo -F vermagic "$moddir/sd_mod.ko")\"/"
cp "$moddir/manifest.json" "$VM_OUT/manifest-vermagic.json"
attempt vermagic fix --modules

vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
sed -i "s/\"kernel_release\": \"[^\"]*\"/\"kernel_release\": \"6.1.0-99-amd64\"/" "$moddir/manifest.json"
attempt release fix --modules

# Will the kernel load the file (issue 29, item 4), last: module.sig_enforce is enable-only,
# Y until the reboot. The build's modules are unsigned. The guest never mounts securityfs
# (numastor reads lockdown in a private mount namespace): its own reading comes at the end.
vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
vm_fact sig.moddir "$moddir"
for m in scsi_mod sd_mod; do
	vm_fact "sig.$m.signer" "$(modinfo -F signer "$moddir/$m.ko")"
done
vm_fact sig.securityfs.before "$(grep -c ' securityfs ' /proc/mounts)"
_rd /sys/module/module/parameters/sig_enforce
vm_fact sig.enforce.before "$_v"
vm_numastor sig-twin fix --modules --dry-run --json
echo Y > /sys/module/module/parameters/sig_enforce
_rd /sys/module/module/parameters/sig_enforce
vm_fact sig.enforce.after "$_v"
vm_numastor sig-enforce-plan fix --modules --dry-run --json
attempt sig-enforce fix --modules
attempt sig-install fix --modules --install
vm_save_swap_journal journal-sig-install.json
vm_fact sig.installed "$(find "/lib/modules/$krel/updates/numastor" -type f 2>/dev/null | tr '\n' ' ')"
if [ -e /var/lib/numastor/swap.json ]; then
	vm_numastor sig-install-revert fix --revert
fi
vm_fact sig.securityfs.after "$(grep -c ' securityfs ' /proc/mounts)"
mkdir -p /tmp/secfs
mount -t securityfs securityfs /tmp/secfs && vm_fact sig.lockdown "$(cat /tmp/secfs/lockdown)"
umount /tmp/secfs

vm_check_round
