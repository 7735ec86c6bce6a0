#!/bin/bash
# Fetch Debian 12's irqbalance for the VM test bed, once.
#
# Into ${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}/irqbalance-<version>/root/ it puts the
# dpkg -x of irqbalance and of the libraries it links directly (libcap-ng0, libglib2.0-0,
# libnuma1, libsystemd0), so the initramfs gets them even where the host lacks them; what
# those link in turn comes from the host (build-initramfs.sh copies what ldd resolves).
# Points $VM_CACHE/irqbalance at it and prints the directory (lib.sh: vm_fetch_package).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

vm_fetch_package irqbalance usr/sbin/irqbalance libcap-ng0 libglib2.0-0 libnuma1 libsystemd0
