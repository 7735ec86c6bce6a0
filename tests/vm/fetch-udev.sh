#!/bin/bash
# Fetch Debian 12's udev (systemd-udevd, udevadm, the rules and helpers) for the VM test
# bed, once.
#
# Into ${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}/udev-<version>/root/ it puts the dpkg -x
# of Debian's `udev` package. What its binaries link (libkmod, libblkid, libacl, libcap,
# libselinux and theirs) comes from the host, which has them with systemd
# (build-initramfs.sh copies what ldd resolves). Points $VM_CACHE/udev at it and prints the
# directory (lib.sh: vm_fetch_package).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

vm_fetch_package udev "bin/udevadm lib/udev/scsi_id"
