#!/bin/bash
# Build the test bed's initramfs (gzip'd newc cpio).
#
#   build-initramfs.sh OUTPUT [NUMASTOR]     (NUMASTOR defaults to build/numastor)
#
# It holds busybox-static, the storage modules of the prepared kernel with their
# dependencies (and a matching modules.dep), the pre-fix nvme.ko as /vm/prefix-nvme/nvme.ko,
# numastor as /usr/bin/numastor with the shared libraries it links (copied from this system)
# and the irqbalance policy wrapper as /usr/libexec/numastor/irqbalance-policy, flock(1),
# Debian's irqbalance as /usr/sbin/irqbalance when fetch-irqbalance.sh prepared it, kmod's
# depmod as /usr/sbin/depmod, numastor's patched modules as tests/kmod/check-build.sh built
# them (/vm/kmod/, see below), the guest scripts (/init, /vm/guest/) and every scenario's
# guest side (/vm/scenarios/).
set -eEuo pipefail
. "$(dirname "$0")/lib.sh"
# A command that fails without a word of its own (set -e ends the script) is named here.
trap 'vm_log "error: line $LINENO: \"$BASH_COMMAND\" failed with status $?"' ERR

# Storage modules the guest may load; their dependencies come along. ext4 (which mounts
# busybox mke2fs's ext2) is for the module-swap refusals: a mounted disk; btrfs, dm_mod and
# zram (a writeback backing device is an in-kernel exclusive claim) for modswap-inuse; loop
# (with zram and dm_mod) for modswap-udev: disks the hot-plug rule must not ask for. ahci
# drives the node-1 HBA where the kernel has no megaraid_sas (run-vm.sh). nvme-tcp and
# nvmet-tcp (the NVMe/TCP host and target) with virtio_net for nvme-tcp, nfit and nd_pmem
# (qemu's nvdimm) for pmem, raid1 (md) for md-cross-node.
MODULES=(nvme sd_mod megaraid_sas ahci virtio_blk virtio_scsi virtio_pci sg ext4 btrfs dm_mod zram loop
	virtio_net nvme-tcp nvmet-tcp nfit nd_pmem raid1)

(($# >= 1 && $# <= 2)) || vm_die "usage: build-initramfs.sh OUTPUT [NUMASTOR]"
output=$1
numastor=${2:-$SRC_ROOT/build/numastor}
[[ -x "$numastor" ]] || vm_die "numastor binary $numastor is missing or not executable (build it: meson setup build && ninja -C build)"

kdir=$(vm_kernel_dir)
krel=$(cat "$kdir/release")
stage=$(mktemp -d "${TMPDIR:-/tmp}/numastor-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,root,etc,home/nsuser,lib64} \
	"$stage/lib/x86_64-linux-gnu" "$stage/lib/modules/$krel" "$stage/vm/prefix-nvme"

# busybox and its applet links.
cp "$kdir/root/bin/busybox" "$stage/bin/busybox"
for applet in $("$stage/bin/busybox" --list-full); do
	[[ -e "$stage/$applet" ]] || ln -s /bin/busybox "$stage/$applet"
done

# Modules with their dependencies, and depmod's indexes for exactly this set
# (busybox modprobe and numastor's libkmod both read them).
# A flavour may build one in (cloud-amd64: nvme, virtio_pci) or leave one out (cloud-amd64:
# megaraid_sas); the guest loads what the initramfs has (vm_load_storage) and counts its disks
# by what it loaded.
for m in "${MODULES[@]}"; do
	modprobe -d "$kdir/root" -S "$krel" --show-depends "$m" 2>/dev/null ||
		vm_log "$krel has no module $m, nor built in: the guest goes without it"
done | awk '$1 == "insmod" { print $2 }' | sort -u | while read -r ko; do
	rel=${ko#"$kdir/root/"}
	mkdir -p "$stage/$(dirname "$rel")"
	cp "$ko" "$stage/$rel"
done
cp "$kdir/root/lib/modules/$krel"/modules.{builtin,builtin.modinfo,order} "$stage/lib/modules/$krel/"
# 6.12's modules stay xz-compressed as Debian ships them (busybox's modprobe and numastor's
# libkmod both load them so; measured).
depmod -b "$stage" "$krel"
if [[ -f "$kdir/prefix-nvme/nvme.ko" ]]; then
	cp "$kdir/prefix-nvme/nvme.ko" "$stage/vm/prefix-nvme/nvme.ko"
fi

# A binary and the shared libraries it links: libraries go to the default search directory
# under their soname (a build-tree rpath does not matter), the first copy of a soname wins.
# LIBPATH (optional) is searched before this system's libraries.
add_binary() { # SRC DEST [LIBPATH]
	local src=$1 dest=$2 libpath=${3:-} name arrow path _
	mkdir -p "$stage/$(dirname "$dest")"
	rm -f "$stage/$dest" # never through a busybox applet link
	cp "$src" "$stage/$dest"
	LD_LIBRARY_PATH=$libpath ldd "$src" >/dev/null 2>&1 || return 0 # static
	LD_LIBRARY_PATH=$libpath ldd "$src" | while read -r name arrow path _; do
		if [[ "$arrow" == "=>" && "$path" == /* ]]; then
			[[ -e "$stage/lib/x86_64-linux-gnu/$name" ]] || cp -L "$path" "$stage/lib/x86_64-linux-gnu/$name"
		elif [[ "$name" == /* ]]; then
			# The dynamic loader, at the absolute path the binary names.
			mkdir -p "$stage/$(dirname "$name")"
			[[ -e "$stage/$name" ]] || cp -L "$name" "$stage/$name"
		elif [[ "$arrow" == "=>" && "$path" == "not" ]]; then
			vm_die "${src##*/} needs $name, which ldd cannot find"
		fi
	done
}

# numastor, from this system, and the policy wrapper `meson install` puts in libexecdir
# (irqbalance-policy.in with numastor's guest path).
add_binary "$numastor" /usr/bin/numastor
# libarchive, which numastor dlopens for `snapshot` and `check --snapshot` (ldd does not list it),
# with the libraries it links.
libarchive=$(ldconfig -p | awk '$1 == "libarchive.so.13" && /x86-64/ { print $NF; exit }')
[[ -n "$libarchive" ]] || vm_die "numastor's snapshots need libarchive.so.13 (the package libarchive13), not found here"
add_binary "$libarchive" /lib/x86_64-linux-gnu/libarchive.so.13
mkdir -p "$stage/usr/libexec/numastor"
sed 's|@sbindir@|/usr/bin|g; s|@libexecdir@|/usr/libexec|g' "$SRC_ROOT/data/irqbalance-policy.in" \
	> "$stage/usr/libexec/numastor/irqbalance-policy"
chmod 0755 "$stage/usr/libexec/numastor/irqbalance-policy"
# flock(1) from util-linux (busybox has none), for holding numastor's lock from the shell.
add_binary "$(command -v flock)" /usr/bin/flock
# bpftool (Debian's, from this system) when the system has it: the trace checks read the
# kernel's own list of loaded BPF programs with it (`bpftool prog show`: what numastor trace
# loaded, and that a killed trace left nothing behind) and its feature probe (whether the
# kernel has BPF_PROG_TYPE_TRACING). numastor's libbpf comes with numastor above (ldd).
if bpftool=$(PATH=$PATH:/usr/sbin:/sbin command -v bpftool); then
	add_binary "$bpftool" /usr/sbin/bpftool
fi
# tests/bench/probe-vs-fio.sh, and fio with NUMASTOR_VM_WITH_FIO=1 (run-all.sh sets it for the
# bench-probe-vs-fio scenario: its libraries add 15 MB to the initramfs)
if [[ "${NUMASTOR_VM_WITH_FIO:-0}" == 1 ]] && command -v fio >/dev/null; then
	add_binary "$(command -v fio)" /usr/bin/fio
fi
mkdir -p "$stage/vm/bench"
cp "$SRC_ROOT/tests/bench/probe-vs-fio.sh" "$stage/vm/bench/probe-vs-fio.sh"
# Debian's irqbalance, when fetch-irqbalance.sh has prepared it (the irqbalance-policy
# scenario needs it and says so when it is missing).
ibdir="$VM_CACHE/irqbalance"
if [[ -f "$ibdir/.ready" ]]; then
	ibdir=$(readlink -f "$ibdir")
	add_binary "$ibdir/root/usr/sbin/irqbalance" /usr/sbin/irqbalance \
		"$ibdir/root/lib/x86_64-linux-gnu:$ibdir/root/usr/lib/x86_64-linux-gnu"
fi

# Debian's systemd-udevd and udevadm, when fetch-udev.sh has prepared them (modswap-udev
# runs the daemon and says so when it is missing), with scsi_id and the rules the disks need
# (no 80-drivers.rules: the scenarios load their drivers themselves), and numastor's hot-plug
# rule where `meson install` puts it.
udevdir="$VM_CACHE/udev"
if [[ -f "$udevdir/.ready" ]]; then
	udevdir=$(readlink -f "$udevdir")
	add_binary "$udevdir/root/bin/udevadm" /bin/udevadm
	mkdir -p "$stage/lib/systemd" "$stage/lib/udev/rules.d" "$stage/etc/udev/rules.d"
	ln -s /bin/udevadm "$stage/lib/systemd/systemd-udevd"
	add_binary "$udevdir/root/lib/udev/scsi_id" /lib/udev/scsi_id
	for r in 50-udev-default.rules 60-block.rules 60-persistent-storage.rules; do
		cp "$udevdir/root/lib/udev/rules.d/$r" "$stage/lib/udev/rules.d/"
	done
	cp "$SRC_ROOT/data/90-numastor.rules" "$stage/lib/udev/rules.d/"
fi

# For modswap-inuse, from this system's Debian packages: mkfs.btrfs (btrfs-progs), dmsetup
# (dmsetup: without udev it makes /dev/mapper nodes itself with DM_DISABLE_UDEV=1), and
# util-linux's unshare and mkswap in place of busybox's applets.
if mkfs_btrfs=$(PATH=$PATH:/usr/sbin:/sbin command -v mkfs.btrfs); then
	add_binary "$mkfs_btrfs" /usr/sbin/mkfs.btrfs
fi
if dmsetup=$(PATH=$PATH:/usr/sbin:/sbin command -v dmsetup); then
	add_binary "$dmsetup" /usr/sbin/dmsetup
fi
add_binary "$(command -v unshare)" /usr/bin/unshare
# iproute2's ip (this system's Debian package) in place of busybox's, which knows no network
# namespaces: nvme-tcp moves the target's NIC into one (`ip netns add`, `ip link set ... netns`)
# and asks the route to the target (`ip route get`).
add_binary "$(PATH=$PATH:/usr/sbin:/sbin command -v ip)" /sbin/ip
add_binary "$(PATH=$PATH:/usr/sbin:/sbin command -v mkswap)" /usr/sbin/mkswap

# Debian's mdadm, when fetch-mdadm.sh has prepared it (md-cross-node builds its arrays with it
# and says so when it is missing).
mdadmdir="$VM_CACHE/mdadm"
if [[ -f "$mdadmdir/.ready" ]]; then
	mdadmdir=$(readlink -f "$mdadmdir")
	add_binary "$mdadmdir/root/sbin/mdadm" /sbin/mdadm
fi

# kmod's depmod (Debian's kmod, from this system): what `numastor fix --modules --install`
# runs. It writes the binary indexes numastor's libkmod reads and puts updates/ first;
# busybox's depmod writes only the text modules.dep.
add_binary "$(PATH=$PATH:/usr/sbin:/sbin command -v depmod)" /usr/sbin/depmod

# numastor's patched modules (tests/kmod/check-build.sh builds them into the cache): the
# scenarios copy them into /var/lib/numastor/modules/<release>/ themselves.
#   /vm/kmod/modules/         the build: scsi_mod.ko, sd_mod.ko, the HBA drivers, manifest.json
#   /vm/kmod/midlayer/        the same manifest cut down to scsi_mod.ko and sd_mod.ko
#   /vm/kmod/prefix-modules/  nvme.ko patched and built against the pre-fix source (the marker)
#   /vm/kmod/nvme-only/       manifest.json of the nvme series alone: nothing to build
#   /vm/kmod/faults/          deliberately broken copies (fault-modules.py)
vm_stage_kmod "$krel" "$stage/vm/kmod"

# Guest scripts and scenarios.
cp -r "$VM_DIR/guest" "$stage/vm/guest"
mkdir -p "$stage/vm/scenarios"
for s in "$VM_DIR"/scenarios/*/guest.sh; do
	name=$(basename "$(dirname "$s")")
	cp "$s" "$stage/vm/scenarios/$name.sh"
done
cp "$VM_DIR/guest/init" "$stage/init"
chmod 0755 "$stage/init" "$stage"/vm/guest/* "$stage"/vm/scenarios/*

# Users: root, and nsuser (uid 1000) for the unprivileged runs.
printf 'root:x:0:0:root:/root:/bin/sh\nnsuser:x:1000:1000:numastor test user:/home/nsuser:/bin/sh\n' > "$stage/etc/passwd"
printf 'root:x:0:\nnsuser:x:1000:\n' > "$stage/etc/group"
chmod 1777 "$stage/tmp"

(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$output.tmp"
mv "$output.tmp" "$output"
