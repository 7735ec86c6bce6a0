# numastor fix --modules --install, then the next boots of the same Debian disk image
# (tests/vm/run-image.sh; this file runs once per boot with VM_BOOT = 1, 2, 3, from the
# image's root after Debian's own initramfs, not from the bed's busybox initramfs).
#   boot 1: the stock modules; the module directory filled with the build's scsi_mod/sd_mod;
#           `fix --modules --install` with a failing initramfs hook (fails, undone), with a
#           DKMS-style copy of sd_mod in updates/dkms (refused), with a depmod.d override
#           keeping kernel/'s sd_mod (fails at the lookup, undone); then `fix --modules --install`.
#   boot 2: what the initramfs (the one update-initramfs rewrote) and the root load;
#           `check --json`; `fix --revert`.
#   boot 3: the stock modules again, nothing of numastor's left in /lib/modules or the initramfs.
# Each boot records, before it loads anything itself, which modules are already loaded (by the
# initramfs: nothing else ran yet) with their taint, and the sha256 of /boot's initramfs (the
# host lists the one it boots with cpio); then where the root's modprobe resolves scsi_mod and
# sd_mod, the installed files and numastor's state files; lsinitramfs after --install and
# --revert; and it reloads sd_mod from the root (no disk of it is in use: the root is on
# virtio-blk) to see which file the root's modprobe loads. Facts are keyed bootN.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return; VM_BOOT comes from image-init
vm_need_kmod
MODS="scsi_mod sd_mod megaraid_sas virtio_scsi nvme nvme_core virtio_blk"
# The five disks under test and the NVMe subsystem's head (with its two hidden paths, lib.sh's
# VM_MPATHS) plus the image's own three (root, /boot, payload; virtio-blk).
# shellcheck disable=SC2034 # read by guest/lib.sh (vm_wait_disks)
VM_DISKS=9
b=boot$VM_BOOT
_rd /proc/sys/kernel/osrelease
krel=$_v
initrd=/boot/initrd.img-$krel

# The guest's uptime at a point of this boot, as fact time.bootN.NAME.
phase() { # name
	vm_uptime
	vm_fact "time.$b.$1" "$_v"
	echo "numastor-vm: $b: $1 at $_v s" > /dev/console
}

# Where the root's modprobe finds scsi_mod and sd_mod, and what those files are.
resolution() { # step
	local m f
	for m in scsi_mod sd_mod; do
		f=$(modinfo -n "$m" 2>/dev/null || echo none)
		vm_fact "resolve.$m.$1" "${f#/lib/modules/"$krel"/}"
		vm_fact "resolve.$m.$1.marker" "$(modinfo -F numastor "$m" 2>/dev/null)"
		vm_fact "modules_dep.$m.$1" "$(grep -o "^[^:]*/$m.ko:" "/lib/modules/$krel/modules.dep" | tr '\n' ' ')"
	done
	vm_fact "installed.$1" "$(find "/lib/modules/$krel/updates" -type f 2>/dev/null | sort | tr '\n' ' ')"
	for m in scsi_mod sd_mod; do
		f=/lib/modules/$krel/updates/numastor/$m.ko
		[ -f "$f" ] && vm_fact "installed.$m.$1.sha256" "$(sha256sum < "$f" | cut -d' ' -f1)"
	done
	# numastor's state files wherever they are (the journal must outlive the boot; the lock
	# file in /run/numastor is no state)
	vm_fact "state_files.$1" "$(find /var/lib/numastor /run/numastor -path /var/lib/numastor/modules -prune \
		-o -type f ! -path /run/numastor/lock -print 2>/dev/null | sort | tr '\n' ' ')"
}

# The initramfs at /boot: its sha256 (it ties a boot's initramfs, which the host lists, to
# the file a step left) and, with a listing, what lsinitramfs lists of it.
initramfs() { # step [list]
	vm_fact "initrd.$1.sha256" "$(sha256sum < "$initrd" | cut -d' ' -f1)"
	[ -n "${2:-}" ] || return 0
	lsinitramfs "$initrd" > "$VM_OUT/lsinitramfs-$1.txt"
	vm_fact "initrd.$1.numastor" "$(grep '/updates/numastor/' "$VM_OUT/lsinitramfs-$1.txt" | sort | tr '\n' ' ')"
	vm_fact "initrd.$1.scsi" "$(grep -E '/(scsi_mod|sd_mod)\.ko' "$VM_OUT/lsinitramfs-$1.txt" | sort | tr '\n' ' ')"
}

# 1. Before anything of this script loads a module: what the initramfs loaded.
for m in $MODS; do
	vm_module_state "$m" "$b-initramfs"
done
vm_fact "tainted.$b-initramfs" "$(cat /proc/sys/kernel/tainted)"
# the kernel command line and the booted initramfs as the guest sees it
phase start
vm_fact "cmdline.$b" "$(cat /proc/cmdline)"
initramfs "$b"

# 2. Whatever the initramfs did not load comes from the root (usually nothing: udev in the
# initramfs loads the drivers of every device present).
phase listed
modprobe -a nvme megaraid_sas virtio_scsi sd_mod virtio_blk
vm_wait_disks 60
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
vm_disk_id "$_v"
mega=$_v
vm_fact mega.id "$mega"
resolution "$b"
vm_swap_state "$b" "$MODS" ""

# 3. sd_mod again, from the root's /lib/modules.
phase state
modprobe -r sd_mod
modprobe sd_mod
vm_wait_disks 60
vm_module_state sd_mod "$b-reloaded"
vm_swap_state "$b-reloaded" "$MODS" ""

phase reloaded
case $VM_BOOT in
1)
	vm_fact patched.scsi_mod.marker "$(modinfo -F numastor /vm/kmod/midlayer/scsi_mod.ko)"
	vm_fact patched.sd_mod.marker "$(modinfo -F numastor /vm/kmod/midlayer/sd_mod.ko)"
	for m in scsi_mod sd_mod; do
		vm_fact "manifest.$m.sha256" "$(sha256sum < "/vm/kmod/midlayer/$m.ko" | cut -d' ' -f1)"
		vm_fact "stock.$m.srcversion" "$(modinfo -F srcversion "$m")"
	done
	vm_pattern_write "$mega"
	vm_module_dir /vm/kmod/midlayer/manifest.json /vm/kmod/midlayer/scsi_mod.ko /vm/kmod/midlayer/sd_mod.ko
	# (a) an initramfs hook that fails (named to run first: mkinitramfs stops at it, before the
	# other hooks copy their binaries): mkinitramfs fails after the files and depmod; the
	# install must undo them, /boot's initramfs untouched, no journal
	mkdir -p /etc/initramfs-tools/hooks
	printf '#!/bin/sh\nexit 1\n' > /etc/initramfs-tools/hooks/00-fail
	chmod 755 /etc/initramfs-tools/hooks/00-fail
	vm_numastor hookfail fix --modules --install
	phase hookfail
	resolution hookfail
	initramfs hookfail
	vm_fact "numastor_dir.hookfail" "$(ls -A "/lib/modules/$krel/updates/numastor" 2>&1 | tr '\n' ' ')"
	vm_fact "initrd_new.hookfail" "$(ls /boot | grep numastor | tr '\n' ' ')"
	rm /etc/initramfs-tools/hooks/00-fail
	# (b) a DKMS-style copy of sd_mod (the in-tree file) under updates/dkms: refused, named
	f=$(modinfo -n sd_mod)
	mkdir -p "/lib/modules/$krel/updates/dkms"
	cp "$f" "/lib/modules/$krel/updates/dkms/${f##*/}"
	vm_fact dkms.file "updates/dkms/${f##*/}"
	depmod -a "$krel"
	vm_numastor dkms fix --modules --install
	resolution dkms
	initramfs dkms
	rm -r "/lib/modules/$krel/updates/dkms"
	# (c) a depmod.d override that keeps kernel/'s sd_mod first: no copy to name, but modprobe
	# would not load numastor's file; libkmod's lookup after depmod says so, and it is undone
	# (one depmod for the dkms copy gone and the override; depmod matches an override's
	# directory against the module's whole directory)
	mkdir -p /etc/depmod.d
	d=${f#/lib/modules/"$krel"/}
	echo "override sd_mod * ${d%/*}" > /etc/depmod.d/zz-numastor-test.conf
	depmod -a "$krel"
	vm_numastor override fix --modules --install
	phase override
	resolution override
	initramfs override
	# no depmod: the undo's left modules.dep at kernel/, with no numastor file to rank
	rm /etc/depmod.d/zz-numastor-test.conf
	resolution clean
	vm_numastor install fix --modules --install
	phase install
	vm_swap_state install "$MODS" ""
	resolution install
	initramfs install list
	;;
2)
	vm_pattern_read "$mega" "$b"
	vm_check_round
	vm_numastor revert fix --revert
	phase revert
	vm_swap_state revert "$MODS" ""
	resolution revert
	initramfs revert list
	;;
*)
	vm_pattern_read "$mega" "$b"
	vm_check_round
	;;
esac
phase end
