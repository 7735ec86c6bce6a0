#!/bin/bash
# Fetch and prepare Debian 12's own kernel for the VM test bed, once.
#
# Into ${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}/<kernel release>/ it puts:
#   root/      the dpkg -x of linux-image, linux-headers (arch + common), linux-kbuild and
#              busybox-static, with modules.dep made by depmod -b
#   src/       the few parts of linux-source needed (drivers/nvme/host, scripts/extract-vmlinux)
#   vmlinux    the uncompressed kernel (PVH entry) or, failing that, a copy of the bzImage
#   prefix-nvme/nvme.ko   the nvme driver with the seed-000 fix reversed (prefix-nvme.patch)
# and points $VM_CACHE/current at it. A rerun finds current/.ready and does nothing; set
# NUMASTOR_VM_REFRESH=1 to look for a newer kernel in the apt archive.
# Prints the prepared directory on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The newest Debian 12 generic amd64 kernel ABI the apt archive knows, e.g. 6.1.0-57-amd64.
newest_kernel_release() {
	apt-cache pkgnames linux-image-6.1.0- 2>/dev/null |
		sed -n 's/^linux-image-\(6\.1\.0-[0-9]*-amd64\)$/\1/p' | sort -V | tail -n 1
}

candidate_version() {
	apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p'
}

# Build the pre-fix nvme.ko out of tree against the extracted headers.
build_prefix_nvme() {
	local kdir=$1 krel=$2 b="$1/prefix-nvme"
	rm -rf "$b" && mkdir -p "$b"
	cp "$kdir"/src/drivers/nvme/host/{pci.c,nvme.h,trace.h} "$b/"
	(cd "$b" && patch -p4 --quiet --forward < "$VM_DIR/prefix-nvme.patch") ||
		vm_die "prefix-nvme.patch does not apply to $krel's drivers/nvme/host/pci.c"
	printf 'obj-m := nvme.o\nnvme-y := pci.o\n' > "$b/Kbuild"
	make -s -C "$kdir/root/usr/src/linux-headers-$krel" M="$b" -j"$(nproc)" modules >"$b/build.log" 2>&1 ||
		{ cat "$b/build.log" >&2; vm_die "building the pre-fix nvme.ko failed"; }
	[[ -f "$b/nvme.ko" ]] || vm_die "no nvme.ko after the build (see $b/build.log)"
}

main() {
	if [[ -f "$VM_CACHE/current/.ready" && "${NUMASTOR_VM_REFRESH:-0}" != 1 ]]; then
		readlink -f "$VM_CACHE/current"
		return 0
	fi
	mkdir -p "$VM_CACHE" || vm_die "cannot create the cache $VM_CACHE (set NUMASTOR_VM_CACHE)"
	local krel ver
	krel=$(newest_kernel_release)
	if [[ -z "$krel" && $(id -u) == 0 ]]; then
		# A fresh machine's apt lists may be empty.
		apt-get update -q >&2 || true
		krel=$(newest_kernel_release)
	fi
	[[ -n "$krel" ]] || vm_die "apt-cache knows no linux-image-6.1.0-NN-amd64 (run apt-get update)"
	ver=$(candidate_version "linux-image-$krel")
	[[ -n "$ver" && "$ver" != "(none)" ]] || vm_die "no candidate version for linux-image-$krel"
	local kdir="$VM_CACHE/$krel"
	if [[ -f "$kdir/.ready" ]]; then
		ln -sfn "$krel" "$VM_CACHE/current"
		echo "$kdir"
		return 0
	fi
	vm_log "preparing $krel ($ver) in $kdir"
	rm -rf "$kdir" && mkdir -p "$kdir/debs" "$kdir/root" "$kdir/src"

	# Same Debian version for every kernel package; busybox-static at its candidate.
	(cd "$kdir/debs" && apt-get download -q \
		"linux-image-$krel=$ver" "linux-headers-$krel=$ver" \
		"linux-headers-${krel%-amd64}-common=$ver" "linux-kbuild-6.1=$ver" \
		"linux-source-6.1=$ver" busybox-static 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) ||
		vm_die "apt-get download failed"

	local deb
	for deb in "$kdir"/debs/*.deb; do
		case ${deb##*/} in
		linux-source-*) ;;
		*) dpkg -x "$deb" "$kdir/root" ;;
		esac
	done
	# Only the parts of the source tarball the bed needs.
	dpkg-deb --fsys-tarfile "$kdir"/debs/linux-source-6.1_*.deb |
		tar -xO ./usr/src/linux-source-6.1.tar.xz |
		tar -xJ -C "$kdir/src" --strip-components=1 \
			linux-source-6.1/drivers/nvme/host linux-source-6.1/scripts/extract-vmlinux
	rm -rf "$kdir/debs"

	[[ -f "$kdir/root/lib/modules/$krel/kernel/drivers/nvme/host/nvme.ko" ]] ||
		vm_die "unexpected package layout: no nvme.ko in linux-image-$krel"
	depmod -b "$kdir/root" "$krel"

	# The headers' Makefile includes the common tree by absolute path: point it here.
	printf 'include %s/Makefile\n' "$kdir/root/usr/src/linux-headers-${krel%-amd64}-common" \
		> "$kdir/root/usr/src/linux-headers-$krel/Makefile"
	build_prefix_nvme "$kdir" "$krel"

	# The uncompressed vmlinux boots about 5 s faster under TCG (PVH entry).
	if sh "$kdir/src/scripts/extract-vmlinux" "$kdir/root/boot/vmlinuz-$krel" > "$kdir/vmlinux.tmp" 2>/dev/null &&
		readelf -n "$kdir/vmlinux.tmp" 2>/dev/null | grep -q 'Xen'; then
		mv "$kdir/vmlinux.tmp" "$kdir/vmlinux"
	else
		vm_log "no PVH vmlinux could be extracted; booting the bzImage"
		rm -f "$kdir/vmlinux.tmp"
		cp "$kdir/root/boot/vmlinuz-$krel" "$kdir/vmlinux"
	fi
	echo "$krel" > "$kdir/release"
	touch "$kdir/.ready"
	ln -sfn "$krel" "$VM_CACHE/current"
	vm_log "prepared $krel"
	echo "$kdir"
}

main "$@"
