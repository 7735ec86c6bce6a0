#!/bin/bash
# Fetch Debian 12's udev (systemd-udevd, udevadm, the rules and helpers) for the VM test
# bed, once.
#
# Into ${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}/udev-<version>/root/ it puts the dpkg -x
# of Debian's `udev` package. What its binaries link (libkmod, libblkid, libacl, libcap,
# libselinux and theirs) comes from the host, which has them with systemd
# (build-initramfs.sh copies what ldd resolves). Points $VM_CACHE/udev at it and prints the
# directory. A rerun finds .ready and does nothing; NUMASTOR_VM_REFRESH=1 looks for a newer
# version.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

candidate_version() {
	apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p'
}

main() {
	if [[ -f "$VM_CACHE/udev/.ready" && "${NUMASTOR_VM_REFRESH:-0}" != 1 ]]; then
		readlink -f "$VM_CACHE/udev"
		return 0
	fi
	mkdir -p "$VM_CACHE" || vm_die "cannot create the cache $VM_CACHE (set NUMASTOR_VM_CACHE)"
	local ver
	ver=$(candidate_version udev)
	if [[ ( -z "$ver" || "$ver" == "(none)" ) && $(id -u) == 0 ]]; then
		apt-get update -q >&2 || true
		ver=$(candidate_version udev)
	fi
	[[ -n "$ver" && "$ver" != "(none)" ]] || vm_die "apt-cache knows no udev (run apt-get update)"
	local dir="$VM_CACHE/udev-$ver"
	if [[ -f "$dir/.ready" ]]; then
		ln -sfn "${dir##*/}" "$VM_CACHE/udev"
		echo "$dir"
		return 0
	fi
	vm_log "preparing udev $ver in $dir"
	rm -rf "$dir" && mkdir -p "$dir/debs" "$dir/root"
	(cd "$dir/debs" && apt-get download -q "udev=$ver" 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || vm_die "apt-get download failed"
	local deb
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root"
	done
	rm -rf "$dir/debs"
	[[ -x "$dir/root/bin/udevadm" && -x "$dir/root/lib/udev/scsi_id" ]] ||
		vm_die "unexpected package layout: no bin/udevadm or lib/udev/scsi_id"
	echo "$ver" > "$dir/version"
	touch "$dir/.ready"
	ln -sfn "${dir##*/}" "$VM_CACHE/udev"
	vm_log "prepared udev $ver"
	echo "$dir"
}

main "$@"
