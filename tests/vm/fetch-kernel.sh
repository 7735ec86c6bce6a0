#!/bin/bash
# Fetch and prepare one of Debian's kernels for the VM test bed, once.
#
#   fetch-kernel.sh [LINE]      (LINE: 5.10, 6.1, 6.12, 6.12-cloud or 7.2; default
#                                $NUMASTOR_VM_KERNEL, else 6.1; tests/vm/lib.sh's vm_line)
#
# Into ${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}/<kernel release>/ it puts:
#   root/      the dpkg -x of linux-image, linux-headers (arch + common), linux-kbuild and
#              busybox-static, with modules.dep made by depmod -b
#   src/       the few parts of linux-source needed (drivers/nvme/host, scripts/extract-vmlinux)
#   vmlinux    the uncompressed kernel (PVH entry) or, failing that, a copy of the bzImage
#   prefix-nvme/nvme.ko   the nvme driver with the seed-000 fix reversed (prefix-nvme-LINE.patch),
#              built out of tree against the headers, in the line's build root (vm_in_buildroot);
#              prefix-nvme/builtin instead where the flavour builds nvme in (cloud-amd64)
#   line       the line it was fetched as
# and points $VM_CACHE/current-LINE at it. The
# packages come from this machine's apt (6.1: bookworm) or from the bed's private apt
# configuration under $VM_CACHE/apt/SUITE (5.10: bullseye; 6.12: trixie; 7.2: sid), never
# from a change to the machine's sources. A rerun finds current-LINE/.ready and does nothing;
# set NUMASTOR_VM_REFRESH=1 to look for a newer kernel in the archive.
# Prints the prepared directory on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

line=${1:-$VM_KERNEL}
vm_line "$line"

# The newest kernel release of the line the archive knows, e.g. 6.1.0-57-amd64.
newest_kernel_release() {
	vm_line_apt apt-cache pkgnames linux-image- 2>/dev/null |
		sed -En "s/^linux-image-($VM_IMAGE_RE)\$/\1/p" | sort -V | tail -n 1
}

candidate_version() {
	vm_line_apt apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p'
}

# The linux-kbuild package of a release: per line up to 6.1 (linux-kbuild-6.1), per release
# since (linux-kbuild-6.12.95+deb12).
kbuild_package() {
	local base
	base=$(vm_release_base "$1")
	if [[ $base =~ ^([0-9]+\.[0-9]+)\.0-[0-9]+$ ]]; then
		echo "linux-kbuild-${BASH_REMATCH[1]}"
	else
		echo "linux-kbuild-$base"
	fi
}

# Build the pre-fix nvme.ko out of tree against the extracted headers.
build_prefix_nvme() {
	local kdir=$1 krel=$2 b="$1/prefix-nvme" patch="$VM_DIR/prefix-nvme-${line%-cloud}.patch"
	[[ -f $patch ]] || vm_die "no $patch: the bed cannot make a pre-fix nvme for $line"
	rm -rf "$b" && mkdir -p "$b"
	cp "$kdir"/src/drivers/nvme/host/{pci.c,nvme.h,trace.h} "$b/"
	(cd "$b" && patch -p4 --quiet --forward < "$patch") ||
		vm_die "${patch##*/} does not apply to $krel's drivers/nvme/host/pci.c"
	printf 'obj-m := nvme.o\nnvme-y := pci.o\n' > "$b/Kbuild"
	vm_in_buildroot "$kdir" make -s -C "$kdir/root/usr/src/linux-headers-$krel" M="$b" -j"$(nproc)" modules \
		>"$b/build.log" 2>&1 || { cat "$b/build.log" >&2; vm_die "building the pre-fix nvme.ko failed"; }
	[[ -f "$b/nvme.ko" ]] || vm_die "no nvme.ko after the build (see $b/build.log)"
}

point_at() { # release
	ln -sfn "$1" "$VM_CACHE/current-$line"
}

main() {
	# (a prepared kernel of another suite, e.g. 6.12 before it was trixie's, is fetched anew)
	if [[ -f "$VM_CACHE/current-$line/.ready" && "${NUMASTOR_VM_REFRESH:-0}" != 1 ]] &&
		grep -Eqx "$VM_IMAGE_RE" "$VM_CACHE/current-$line/release" 2>/dev/null; then
		readlink -f "$VM_CACHE/current-$line"
		return 0
	fi
	mkdir -p "$VM_CACHE" || vm_die "cannot create the cache $VM_CACHE (set NUMASTOR_VM_CACHE)"
	local krel ver
	if [[ $VM_SUITE != host && "${NUMASTOR_VM_REFRESH:-0}" == 1 ]]; then
		vm_apt "$VM_SUITE" apt-get update || vm_die "apt-get update of the private $VM_SUITE lists failed"
	fi
	krel=$(newest_kernel_release)
	if [[ -z "$krel" && $VM_SUITE == host && $(id -u) == 0 ]]; then
		# A fresh machine's apt lists may be empty.
		apt-get update -q >&2 || true
		krel=$(newest_kernel_release)
	fi
	[[ -n "$krel" ]] || vm_die "apt-cache knows no linux-image matching $VM_IMAGE_RE in ${VM_SUITE/host/this machine\'s sources} (run apt-get update)"
	ver=$(candidate_version "linux-image-$krel")
	[[ -n "$ver" && "$ver" != "(none)" ]] || vm_die "no candidate version for linux-image-$krel"
	local kdir="$VM_CACHE/$krel" base
	base=$(vm_release_base "$krel")
	if [[ -f "$kdir/.ready" ]]; then
		point_at "$krel"
		echo "$kdir"
		return 0
	fi
	vm_log "preparing $krel ($ver, line $line) in $kdir"
	rm -rf "$kdir" && mkdir -p "$kdir/debs" "$kdir/root" "$kdir/src"

	# Same Debian version for every kernel package; busybox-static at this machine's candidate.
	# From 7.x (sid) linux-image-RELEASE is an empty package: the kernel is in linux-binary-,
	# the modules in linux-modules-, the System.map and config in linux-base-.
	local split=()
	if [[ -n $(vm_line_apt apt-cache pkgnames "linux-binary-$krel" 2>/dev/null | grep -x "linux-binary-$krel") ]]; then
		split=("linux-binary-$krel=$ver" "linux-modules-$krel=$ver" "linux-base-$krel=$ver")
	fi
	(cd "$kdir/debs" && vm_line_apt apt-get download -q \
		"linux-image-$krel=$ver" "${split[@]}" "linux-headers-$krel=$ver" \
		"linux-headers-$base-common=$ver" "$(kbuild_package "$krel")=$ver" \
		"linux-source-$VM_SRCLINE=$ver" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) ||
		vm_die "apt-get download of the $krel packages failed"
	(cd "$kdir/debs" && apt-get download -q busybox-static 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || vm_die "apt-get download busybox-static failed"

	local deb
	for deb in "$kdir"/debs/*.deb; do
		case ${deb##*/} in
		linux-source-*) ;;
		*) dpkg -x "$deb" "$kdir/root" ;;
		esac
	done
	# 6.12 installs its modules under /usr/lib/modules (merged /usr): reach them where the
	# other lines keep them, so that depmod -b and modprobe -d find them alike.
	if [[ -d "$kdir/root/usr/lib/modules/$krel" && ! -e "$kdir/root/lib/modules" ]]; then
		mkdir -p "$kdir/root/lib"
		ln -s ../usr/lib/modules "$kdir/root/lib/modules"
	fi
	# Only the parts of the source tarball the bed needs.
	dpkg-deb --fsys-tarfile "$kdir"/debs/linux-source-"$VM_SRCLINE"_*.deb |
		tar -xO "./usr/src/linux-source-$VM_SRCLINE.tar.xz" |
		tar -xJ -C "$kdir/src" --strip-components=1 \
			"linux-source-$VM_SRCLINE/drivers/nvme/host" "linux-source-$VM_SRCLINE/scripts/extract-vmlinux"
	rm -rf "$kdir/debs"

	depmod -b "$kdir/root" "$krel"

	# The headers' Makefile names the common tree (and from 7.x its own, KBUILD_OUTPUT=) by
	# absolute path: point them here.
	sed -i "s#/usr/src/#$kdir/root/usr/src/#g" "$kdir/root/usr/src/linux-headers-$krel/Makefile"
	grep -q "^include $kdir/root/usr/src/linux-headers-$base-common/Makefile" \
		"$kdir/root/usr/src/linux-headers-$krel/Makefile" ||
		vm_die "unexpected headers Makefile in linux-headers-$krel (no include of the common tree)"
	# The cloud flavour builds nvme in: no module to replace, so no pre-fix one to load.
	if grep -qx 'kernel/drivers/nvme/host/nvme.ko' "$kdir/root/lib/modules/$krel/modules.builtin"; then
		mkdir -p "$kdir/prefix-nvme"
		echo "nvme is built into $krel" > "$kdir/prefix-nvme/builtin"
	elif compgen -G "$kdir/root/lib/modules/$krel/kernel/drivers/nvme/host/nvme.ko*" >/dev/null; then
		build_prefix_nvme "$kdir" "$krel"
	else
		vm_die "unexpected package layout: no nvme.ko in linux-image-$krel, nor built in"
	fi

	# The uncompressed vmlinux boots about 5 s faster under TCG (PVH entry). From 7.x (sid) the
	# package keeps the kernel as /usr/lib/modules/RELEASE/vmlinuz, not /boot/vmlinuz-RELEASE.
	local vmlinuz="$kdir/root/boot/vmlinuz-$krel"
	[[ -f $vmlinuz ]] || vmlinuz="$kdir/root/usr/lib/modules/$krel/vmlinuz"
	[[ -f $vmlinuz ]] || vm_die "unexpected package layout: no vmlinuz in /boot or /usr/lib/modules/$krel"
	if sh "$kdir/src/scripts/extract-vmlinux" "$vmlinuz" > "$kdir/vmlinux.tmp" 2>/dev/null &&
		readelf -n "$kdir/vmlinux.tmp" 2>/dev/null | grep -q 'Xen'; then
		mv "$kdir/vmlinux.tmp" "$kdir/vmlinux"
	else
		vm_log "no PVH vmlinux could be extracted; booting the bzImage"
		rm -f "$kdir/vmlinux.tmp"
		cp "$vmlinuz" "$kdir/vmlinux"
	fi
	echo "$krel" > "$kdir/release"
	echo "$line" > "$kdir/line"
	touch "$kdir/.ready"
	point_at "$krel"
	vm_log "prepared $krel"
	echo "$kdir"
}

main
