#!/bin/bash
# Run kbuild's make for a kernel line inside that line's build root (tests/vm/lib.sh's
# vm_in_buildroot: a debootstrapped Debian whose compiler is the one the line's headers call,
# gcc-10 for 5.10), with the given directories bind-mounted at their own paths.
#
#   make-in-buildroot.sh LINE DIR[:DIR...] MAKE-ARGUMENTS...
#
# tests/kmod/check-build.sh hands it to kmod-patches/build-modules.sh as
# --make "make-in-buildroot.sh LINE KERNEL-DIR:BUILD-DIR" for a line whose VM_BUILDROOT is not
# "host"; build-modules.sh runs everything else (extraction, patching, stripping) here.
set -euo pipefail
(($# >= 2)) || {
	echo "usage: $0 LINE DIR[:DIR...] MAKE-ARGUMENTS..." >&2
	exit 2
}
# shellcheck source-path=SCRIPTDIR source=../vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"
line=$1 dirs=${2//:/ }
shift 2
vm_line "$line"
vm_in_buildroot "$dirs" make "$@"
