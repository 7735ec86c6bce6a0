#!/bin/bash
# Fetch Debian 12's irqbalance for the VM test bed, once.
#
# Into ${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}/irqbalance-<version>/root/ it puts the
# dpkg -x of irqbalance and of the libraries it links directly (libcap-ng0, libglib2.0-0,
# libnuma1, libsystemd0), so the initramfs gets them even where the host lacks them; what
# those link in turn comes from the host (build-initramfs.sh copies what ldd resolves).
# Points $VM_CACHE/irqbalance at it and prints the directory. A rerun finds .ready and does
# nothing; NUMASTOR_VM_REFRESH=1 looks for a newer version.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

LIBS=(libcap-ng0 libglib2.0-0 libnuma1 libsystemd0)

candidate_version() {
	apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p'
}

main() {
	if [[ -f "$VM_CACHE/irqbalance/.ready" && "${NUMASTOR_VM_REFRESH:-0}" != 1 ]]; then
		readlink -f "$VM_CACHE/irqbalance"
		return 0
	fi
	mkdir -p "$VM_CACHE" || vm_die "cannot create the cache $VM_CACHE (set NUMASTOR_VM_CACHE)"
	local ver
	ver=$(candidate_version irqbalance)
	if [[ ( -z "$ver" || "$ver" == "(none)" ) && $(id -u) == 0 ]]; then
		apt-get update -q >&2 || true
		ver=$(candidate_version irqbalance)
	fi
	[[ -n "$ver" && "$ver" != "(none)" ]] || vm_die "apt-cache knows no irqbalance (run apt-get update)"
	local dir="$VM_CACHE/irqbalance-$ver"
	if [[ -f "$dir/.ready" ]]; then
		ln -sfn "${dir##*/}" "$VM_CACHE/irqbalance"
		echo "$dir"
		return 0
	fi
	vm_log "preparing irqbalance $ver in $dir"
	rm -rf "$dir" && mkdir -p "$dir/debs" "$dir/root"
	(cd "$dir/debs" && apt-get download -q "irqbalance=$ver" "${LIBS[@]}" 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || vm_die "apt-get download failed"
	local deb
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root"
	done
	rm -rf "$dir/debs"
	[[ -x "$dir/root/usr/sbin/irqbalance" ]] || vm_die "unexpected package layout: no usr/sbin/irqbalance"
	echo "$ver" > "$dir/version"
	touch "$dir/.ready"
	ln -sfn "${dir##*/}" "$VM_CACHE/irqbalance"
	vm_log "prepared irqbalance $ver"
	echo "$dir"
}

main "$@"
