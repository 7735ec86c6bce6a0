#!/bin/bash
# Fetch Debian 12's mdadm for the VM test bed, once.
#
# Into ${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}/mdadm-<version>/root/ it puts the dpkg -x
# of Debian's `mdadm` package (the md-cross-node scenario builds its RAID1 arrays with it);
# what it links (libudev1, libc) comes from the host (build-initramfs.sh copies what ldd
# resolves). Points $VM_CACHE/mdadm at it and prints the directory (lib.sh: vm_fetch_package).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

vm_fetch_package mdadm sbin/mdadm
