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
