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
