#!/bin/bash
# Build the test bed's initramfs (gzip'd newc cpio).
#
#   build-initramfs.sh OUTPUT [NUMASTOR]     (NUMASTOR defaults to build/numastor)
#
# It holds busybox-static, the storage modules of the prepared kernel with their
# dependencies (and a matching modules.dep), the pre-fix nvme.ko as /vm/prefix-nvme/nvme.ko,
# numastor as /usr/bin/numastor with the shared libraries it links (copied from this system),
# the guest scripts (/init, /vm/guest/) and every scenario's guest side (/vm/scenarios/).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Storage modules the guest may load; their dependencies come along.
MODULES=(nvme sd_mod megaraid_sas virtio_blk virtio_scsi virtio_pci sg)

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
for m in "${MODULES[@]}"; do
	modprobe -d "$kdir/root" -S "$krel" --show-depends "$m" ||
		vm_die "module $m not found in $krel"
done | awk '$1 == "insmod" { print $2 }' | sort -u | while read -r ko; do
	rel=${ko#"$kdir/root/"}
	mkdir -p "$stage/$(dirname "$rel")"
	cp "$ko" "$stage/$rel"
done
cp "$kdir/root/lib/modules/$krel"/modules.{builtin,builtin.modinfo,order} "$stage/lib/modules/$krel/"
depmod -b "$stage" "$krel"
cp "$kdir/prefix-nvme/nvme.ko" "$stage/vm/prefix-nvme/nvme.ko"

# numastor and the shared libraries it links, from this system. Libraries go to the
# default search directory under their soname, so a build-tree rpath does not matter.
cp "$numastor" "$stage/usr/bin/numastor"
if ldd "$numastor" >/dev/null 2>&1; then
	ldd "$numastor" | while read -r name arrow path _; do
		if [[ "$arrow" == "=>" && "$path" == /* ]]; then
			cp -L "$path" "$stage/lib/x86_64-linux-gnu/$name"
		elif [[ "$name" == /* ]]; then
			# The dynamic loader, at the absolute path the binary names.
			mkdir -p "$stage/$(dirname "$name")"
			cp -L "$name" "$stage/$name"
		elif [[ "$arrow" == "=>" && "$path" == "not" ]]; then
			vm_die "numastor needs $name, which ldd cannot find"
		fi
	done
fi

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
