#!/bin/bash
# Boot the Debian disk image (build-image.sh) several times in a row on the bed's machine, one
# disk for all the boots of a run, and bring each boot's results back.
#
#   run-image.sh [--append "kernel args"] [--timeout SECONDS] [--boots N] NUMASTOR SCENARIO OUTDIR
#
# The machine is run-vm.sh's (two nodes; NVMe and megasas behind the node-1 expander; NVMe,
# virtio-scsi and virtio-blk on the root bus; their disks are kept for the whole run) plus three
# virtio-blk disks on the root bus, none of them storage under test:
#   serial NSSYSROOT  the root file system: a qcow2 overlay of the cached root.raw (read-only)
#   serial NSSYSBOOT  /boot: a copy of the cached boot.raw (raw, so that debugfs reads it)
#   serial NSPAYLOAD  read-only, a tar: this run's numastor (/usr/bin/numastor) with the
#                     libraries the image lacks (/usr/local/lib), the guest scripts and the
#                     scenario (/vm/), the patched modules (/vm/kmod/); the image's
#                     /usr/lib/numastor-vm/init unpacks it at the run's first boot
# virtio-blk depends on none of the modules a swap replaces (nvme, scsi_mod, sd_mod), so the
# root stays whatever numastor does, and Debian's initramfs carries virtio_blk.
# Before each boot the initramfs is copied out of /boot with debugfs (the one update-initramfs
# last wrote) and booted with the cached PVH vmlinux, the same kernel package as the image's:
#   root=UUID=<root> rw init=/usr/lib/numastor-vm/init numastor_vm.boot=N
# Boot N's results go to OUTDIR/bootN/ (as run-vm.sh's); then OUTDIR gets each boot's files
# (a later boot's win), facts.txt of every boot in order plus the host's own facts
# (host.initrd.bootN.sha256 and .numastor/.scsi, the initramfs's files under updates/numastor/
# and its scsi_mod/sd_mod: what was booted, listed with cpio), scenario.log of every boot and scenario.rc,
# the first non-zero one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

append=
timeout_s=${NUMASTOR_VM_TIMEOUT:-300}
boots=1
while (($#)); do
	case $1 in
	--append) append=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--boots) boots=$2; shift 2 ;;
	--) shift; break ;;
	-*) vm_die "unknown option $1" ;;
	*) break ;;
	esac
done
(($# == 3)) || vm_die "usage: run-image.sh [--append ARGS] [--timeout S] [--boots N] NUMASTOR SCENARIO OUTDIR"
numastor=$1 scenario=$2 outdir=$3
[[ -x "$numastor" ]] || vm_die "numastor binary $numastor is missing"
[[ -f "$VM_DIR/scenarios/$scenario/guest.sh" ]] || vm_die "no scenario $scenario"
PATH=$PATH:/usr/sbin:/sbin
for t in debugfs qemu-img cpio zstd; do
	command -v "$t" >/dev/null || vm_die "needs $t (tools/install-deps)"
done

img=$("$VM_DIR/build-image.sh") || vm_die "building the Debian image failed"
# shellcheck source=/dev/null # written by build-image.sh
. "$img/env"
mkdir -p "$outdir"
outdir=$(realpath "$outdir")
run=$(mktemp -d "${TMPDIR:-/tmp}/numastor-image.XXXXXX")
trap 'rm -rf "$run"' EXIT

# The run's disks: the root as an overlay (the cached image stays untouched), /boot copied.
qemu-img create -q -f qcow2 -F raw -b "$img/root.raw" "$run/root.qcow2"
cp --sparse=always "$img/boot.raw" "$run/boot.raw"
chmod 0644 "$run/boot.raw"

# The payload: a tar of what the guest installs into / at the run's first boot.
p="$run/payload"
mkdir -p "$p/usr/bin" "$p/usr/local/lib" "$p/vm/scenarios"
cp "$numastor" "$p/usr/bin/numastor"
# Libraries numastor links that the image has not got (by file name, from build-image.sh's list).
ldd "$numastor" | while read -r name arrow path _; do
	[[ "$arrow" == "=>" && "$path" == /* ]] || continue
	grep -qxF "$name" "$img/libs.txt" || cp -L "$path" "$p/usr/local/lib/$name"
done
cp -r "$VM_DIR/guest" "$p/vm/guest"
cp "$VM_DIR/guest/image-init" "$p/vm/init"
cp "$VM_DIR/scenarios/$scenario/guest.sh" "$p/vm/scenarios/$scenario.sh"
vm_stage_kmod "$KREL" "$p/vm/kmod"
date +%s%N > "$p/vm/run-id"
chmod 0755 "$p/vm/init" "$p/vm/guest"/* "$p/vm/scenarios"/*
(cd "$p" && tar --owner=0 --group=0 -cf "$run/payload.tar" ./usr ./vm)

drives=()
disk() { # file format serial [readonly]
	local ro=${4:+,readonly=on}
	drives+=(--qemu -drive --qemu "file=$1,if=none,id=${3,,},format=$2,cache=unsafe$ro"
		--qemu -device --qemu "virtio-blk-pci,drive=${3,,},serial=$3,bus=pcie.0")
}
disk "$run/root.qcow2" qcow2 NSSYSROOT
disk "$run/boot.raw" raw NSSYSBOOT
disk "$run/payload.tar" raw NSPAYLOAD ro

# The files of an initramfs as cpio lists them (what lsinitramfs does for an archive without
# an early microcode part; its compression from its magic): the host's own reading of what it
# boots, beside the guest's lsinitramfs of /boot.
initrd_list() { # file
	local magic
	magic=$(od -An -tx1 -N4 "$1" | tr -d ' ')
	case $magic in
	28b52ffd) zstd -dc "$1" ;;
	1f8b*) gzip -dc "$1" ;;
	fd377a58) xz -dc "$1" ;;
	3037303730*|30373037) cat "$1" ;;
	*) echo "unknown initramfs format (magic $magic)"; return 1 ;;
	esac | cpio -t --quiet
}

rc=0
: > "$outdir/host-facts.txt"
for ((n = 1; n <= boots; n++)); do
	b="$outdir/boot$n"
	mkdir -p "$b"
	# The initramfs update-initramfs last wrote, as the kernel will get it.
	debugfs -R "dump /initrd.img-$KREL $run/initrd-$n.img" "$run/boot.raw" 2>"$b/debugfs.log" ||
		vm_die "debugfs could not read /boot/initrd.img-$KREL (see $b/debugfs.log)"
	[[ -s "$run/initrd-$n.img" ]] || vm_die "no /boot/initrd.img-$KREL before boot $n"
	printf 'host.initrd.boot%d.sha256\t%s\n' "$n" "$(sha256sum < "$run/initrd-$n.img" | cut -d' ' -f1)" \
		>> "$outdir/host-facts.txt"
	initrd_list "$run/initrd-$n.img" > "$b/initrd-list.txt" ||
		vm_die "cannot list the initramfs of boot $n (see $b/initrd-list.txt)"
	printf 'host.initrd.boot%d.numastor\t%s\n' "$n" "$(grep '/updates/numastor/' "$b/initrd-list.txt" | sort | tr '\n' ' ')" \
		>> "$outdir/host-facts.txt"
	printf 'host.initrd.boot%d.scsi\t%s\n' "$n" "$(grep -E '/(scsi_mod|sd_mod)\.ko' "$b/initrd-list.txt" | sort | tr '\n' ' ')" \
		>> "$outdir/host-facts.txt"
	start=$(date +%s%N)
	if ! "$VM_DIR/run-vm.sh" --timeout "$timeout_s" --disks "$run/storage" "${drives[@]}" \
		--append "root=UUID=$ROOT_UUID rw init=/usr/lib/numastor-vm/init numastor_vm.boot=$n $append" \
		"$run/initrd-$n.img" "$scenario" "$b"; then
		vm_log "boot $n of $boots failed"
		rc=1
		break
	fi
	ms=$((($(date +%s%N) - start) / 1000000))
	printf 'host.boot%d.seconds\t%d.%d\n' "$n" $((ms / 1000)) $((ms % 1000 / 100)) >> "$outdir/host-facts.txt"
done

# One result directory for compare.py: each boot's files, the facts of all boots in order.
: > "$outdir/facts.txt"
: > "$outdir/scenario.log"
src=
for ((n = 1; n <= boots; n++)); do
	b="$outdir/boot$n"
	[[ -f "$b/scenario.rc" ]] || continue
	find "$b" -mindepth 1 -maxdepth 1 ! -name facts.txt ! -name scenario.log ! -name scenario.rc \
		-exec cp -r -t "$outdir" {} +
	[[ -f "$b/facts.txt" ]] && cat "$b/facts.txt" >> "$outdir/facts.txt"
	{ echo "== boot $n"; cat "$b/scenario.log" 2>/dev/null; } >> "$outdir/scenario.log"
	r=$(<"$b/scenario.rc")
	[[ -z "$src" && "$r" != 0 ]] && src="$r (boot $n)"
done
cat "$outdir/host-facts.txt" >> "$outdir/facts.txt"
if ((rc != 0)); then
	echo "${src:-boot failed}" > "$outdir/scenario.rc"
else
	echo "${src:-0}" > "$outdir/scenario.rc"
fi
exit "$rc"
