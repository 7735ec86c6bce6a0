# Shared settings for the VM test bed scripts (sourced, not run).
# shellcheck shell=bash

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this
SRC_ROOT=$(cd "$VM_DIR/../.." && pwd)
# The kernel cache lives outside the source tree; reruns reuse it.
VM_CACHE=${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}

vm_log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
vm_die() { vm_log "error: $*"; exit 1; }

# The prepared kernel directory (made by fetch-kernel.sh): $VM_CACHE/current.
vm_kernel_dir() {
	local d="$VM_CACHE/current"
	[[ -f "$d/.ready" ]] || vm_die "no prepared kernel in $VM_CACHE (run tests/vm/fetch-kernel.sh)"
	readlink -f "$d"
}

# numastor's patched modules as tests/kmod/check-build.sh built them for RELEASE, copied into
# DEST (the guest's /vm/kmod; the scenarios copy them into /var/lib/numastor/modules/<release>/):
#   modules/         scsi_mod.ko, sd_mod.ko and manifest.json (the nvme fix is upstream)
#   prefix-modules/  nvme.ko patched and built against the pre-fix source (the marker)
#   nvme-only/       manifest.json of the nvme series alone: nothing to build
#   faults/          deliberately broken copies (fault-modules.py)
# Nothing is copied when the build is missing (vm_need_kmod in the guest says so).
vm_stage_kmod() { # release dest
	local kmod_build="$VM_CACHE/kmod-build/$1" dest=$2 d
	for d in modules prefix-modules nvme-only; do
		[[ -f "$kmod_build/$d/manifest.json" ]] || continue
		mkdir -p "$dest/$d"
		find "$kmod_build/$d" -maxdepth 1 -type f \( -name manifest.json -o -name '*.ko' \) \
			-exec cp -t "$dest/$d" {} +
	done
	if [[ -f "$kmod_build/modules/sd_mod.ko" && -f "$kmod_build/prefix-modules/nvme.ko" ]]; then
		mkdir -p "$dest/faults"
		python3 "$VM_DIR/fault-modules.py" "$kmod_build" "$dest/faults" ||
			vm_die "making the broken module copies failed"
	fi
}

# Debian's PACKAGE (the candidate version apt knows) and the EXTRA packages it needs beyond the
# host's libraries, dpkg -x'd once into $VM_CACHE/PACKAGE-<version>/root/, with $VM_CACHE/PACKAGE
# pointing at it; each CHECK path (relative to root/) must be an executable there. Prints the
# directory. A rerun finds .ready and does nothing; NUMASTOR_VM_REFRESH=1 looks for a newer
# version. What the binaries link beyond EXTRA comes from the host (build-initramfs.sh copies
# what ldd resolves).
vm_fetch_package() { # package "check paths" [extra packages...]
	local pkg=$1 checks=$2 ver dir deb c
	shift 2
	if [[ -f "$VM_CACHE/$pkg/.ready" && "${NUMASTOR_VM_REFRESH:-0}" != 1 ]]; then
		readlink -f "$VM_CACHE/$pkg"
		return 0
	fi
	mkdir -p "$VM_CACHE" || vm_die "cannot create the cache $VM_CACHE (set NUMASTOR_VM_CACHE)"
	ver=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	if [[ ( -z "$ver" || "$ver" == "(none)" ) && $(id -u) == 0 ]]; then
		apt-get update -q >&2 || true
		ver=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	fi
	[[ -n "$ver" && "$ver" != "(none)" ]] || vm_die "apt-cache knows no $pkg (run apt-get update)"
	dir="$VM_CACHE/$pkg-$ver"
	if [[ -f "$dir/.ready" ]]; then
		ln -sfn "${dir##*/}" "$VM_CACHE/$pkg"
		echo "$dir"
		return 0
	fi
	vm_log "preparing $pkg $ver in $dir"
	rm -rf "$dir" && mkdir -p "$dir/debs" "$dir/root"
	(cd "$dir/debs" && apt-get download -q "$pkg=$ver" "$@" 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || vm_die "apt-get download failed"
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root"
	done
	rm -rf "$dir/debs"
	for c in $checks; do
		[[ -x "$dir/root/$c" ]] || vm_die "unexpected package layout: no $c in $pkg"
	done
	echo "$ver" > "$dir/version"
	touch "$dir/.ready"
	ln -sfn "${dir##*/}" "$VM_CACHE/$pkg"
	vm_log "prepared $pkg $ver"
	echo "$dir"
}
