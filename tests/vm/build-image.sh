#!/bin/bash
# Build the VM bed's Debian 12 disk image once, beside the kernels in the cache.
#
#   build-image.sh            (prints the image directory; a rerun finds .ready and returns)
#
# Into ${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}/image-<kernel release>/ it puts:
#   root.raw      ext4 (no partition table), the root file system: debootstrap --variant=minbase
#                 bookworm plus initramfs-tools, kmod, busybox, e2fsprogs, zstd and the libraries
#                 numastor links, and the very linux-image .deb the bed's kernel comes from,
#                 installed with dpkg inside the chroot (its postinst runs update-initramfs -c;
#                 MODULES=list with the bed's storage and root drivers, see below)
#   boot.raw      ext4, the /boot file system (vmlinuz, initrd.img, config, System.map), kept
#                 apart so that the host reads the initramfs with debugfs between boots
#   linux-image-<release>_<version>_amd64.deb   the package installed
#   env           ROOT_UUID, BOOT_UUID, KREL, KVER, MIRROR, SUITE (sourced by run-image.sh)
#   libs.txt      every file name in the image's library directories (which sonames it has)
#   packages.txt  dpkg -l of the image
# Both images are made with mkfs.ext4 -d (no loop device, no mount) and left read-only (0444):
# each run boots a qcow2 overlay of root.raw and a copy of boot.raw. No network at guest run
# time: the guest boots /usr/lib/numastor-vm/init (below), which installs the run's payload.
# Debian's archive (the mirror this machine's apt uses) is the only network; needs root
# (debootstrap mounts /proc in the chroot). NUMASTOR_VM_REFRESH=1 rebuilds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SUITE=bookworm
# What the image holds beyond minbase: the initramfs machinery the scenario is about, the
# tools lsinitramfs and the guest scripts use, and numastor's run-time libraries (so that the
# run's payload brings only the binary).
# (libbpf1: numastor trace's; an image built before it lacks it, and run-image.sh's payload then
# brings the host's copy, as for any library the image's libs.txt does not list)
PACKAGES=(initramfs-tools kmod linux-base busybox e2fsprogs zstd cpio udev
	libkmod2 libudev1 libjson-c5 libnuma1 libarchive13 libbpf1)

# The URI the machine's apt fetches SUITE from (its sources, whatever their format).
# shellcheck disable=SC2016 # apt-get expands $(CODENAME) itself
apt_mirror() {
	apt-get indextargets --format '$(CODENAME) $(ORIGIN) $(REPO_URI)' 2>/dev/null |
		awk -v s="$SUITE" '$1 == s && $2 == "Debian" { print $3; exit }'
}

kdir=$("$VM_DIR/fetch-kernel.sh") || vm_die "tests/vm/fetch-kernel.sh failed"
krel=$(<"$kdir/release")
img="$VM_CACHE/image-$krel"
if [[ -f "$img/.ready" && "${NUMASTOR_VM_REFRESH:-0}" != 1 ]]; then
	echo "$img"
	exit 0
fi
[[ $(id -u) == 0 ]] || vm_die "building the image needs root (debootstrap); run it once as root"
PATH=$PATH:/usr/sbin:/sbin
for t in debootstrap mkfs.ext4 debugfs dpkg-deb apt-get; do
	command -v "$t" >/dev/null || vm_die "needs $t (tools/install-deps)"
done
headers="$kdir/root/usr/src/linux-headers-$krel"
kver=$(sed -n 's/^#define LINUX_PACKAGE_ID " *Debian \([^ "]*\)".*/\1/p' "$headers/include/generated/package.h")
[[ -n "$kver" ]] || vm_die "cannot tell the Debian version of $krel from $headers"
mirror=$(apt_mirror)
[[ -n "$mirror" ]] || vm_die "this machine's apt has no Debian $SUITE source (apt-get indextargets)"

t0=$SECONDS
vm_log "building the Debian $SUITE image for $krel ($kver) from $mirror in $img"
rm -rf "$img" && mkdir -p "$img"
stage="$img/stage"
mkdir -p "$stage"
cleanup() {
	local m
	for m in "$stage/proc" "$stage/sys" "$stage/dev/pts"; do
		mountpoint -q "$m" 2>/dev/null && umount "$m"
	done
	rm -rf "$stage"
}
trap cleanup EXIT

# The kernel package itself: the same .deb fetch-kernel.sh unpacked, checked by its vmlinuz.
(cd "$img" && apt-get download -q "linux-image-$krel=$kver" 2>&1 |
	grep -v '^W: Download is performed unsandboxed' >&2) || vm_die "apt-get download linux-image-$krel=$kver failed"
deb=$(echo "$img"/linux-image-"$krel"_*.deb)
[[ -f "$deb" ]] || vm_die "no linux-image-$krel .deb after the download"
cmp -s <(dpkg-deb --fsys-tarfile "$deb" | tar -xO "./boot/vmlinuz-$krel") "$kdir/root/boot/vmlinuz-$krel" ||
	vm_die "$deb's vmlinuz is not the cached kernel's ($kdir): refresh the kernel cache first"

include=$(IFS=,; echo "${PACKAGES[*]}")
# The downloaded packages are kept (a rebuild downloads nothing new).
mkdir -p "$VM_CACHE/debootstrap-debs"
debootstrap --variant=minbase --include="$include" --cache-dir="$VM_CACHE/debootstrap-debs" \
	"$SUITE" "$stage" "$mirror" \
	> "$img/debootstrap.log" 2>&1 || { tail -n 30 "$img/debootstrap.log" >&2; vm_die "debootstrap failed (see $img/debootstrap.log)"; }

root_uuid=$(cat /proc/sys/kernel/random/uuid)
boot_uuid=$(cat /proc/sys/kernel/random/uuid)
cat > "$stage/etc/fstab" <<EOF
# <file system>  <mount point>  <type>  <options>  <dump>  <pass>
UUID=$root_uuid  /      ext4  errors=remount-ro  0  1
UUID=$boot_uuid  /boot  ext4  defaults           0  2
EOF
echo numastor-vm > "$stage/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tnumastor-vm\n' > "$stage/etc/hosts"
# No swap or hibernation image to look for at boot.
echo RESUME=none > "$stage/etc/initramfs-tools/conf.d/resume"
# The initramfs holds the drivers of this machine's storage and root, listed (MODULES=list, one
# of initramfs-tools' documented modes) rather than Debian's default MODULES=most: "most" makes
# a 30 MB initramfs of 126 MB (every SCSI, network and file system driver) that under TCG on a
# loaded 2-core machine takes minutes to unpack at boot and to rebuild with update-initramfs;
# the listed one carries the same nvme, scsi_mod, sd_mod, HBA and virtio drivers, which is what
# the scenario is about. Dependencies (scsi_mod, nvme-core) come along through modprobe.
echo MODULES=list > "$stage/etc/initramfs-tools/conf.d/numastor-vm"
printf '%s\n' virtio_pci virtio_blk virtio_scsi nvme megaraid_sas sd_mod ext4 >> "$stage/etc/initramfs-tools/modules"

# The kernel, with dpkg in the chroot: its postinst runs update-initramfs -c -k $krel.
cp "$deb" "$stage/tmp/"
mount -t proc proc "$stage/proc"
mount -t sysfs sysfs "$stage/sys"
LC_ALL=C DEBIAN_FRONTEND=noninteractive chroot "$stage" dpkg -i "/tmp/${deb##*/}" \
	> "$img/dpkg-kernel.log" 2>&1 || { tail -n 30 "$img/dpkg-kernel.log" >&2; vm_die "dpkg -i ${deb##*/} in the chroot failed"; }
chroot "$stage" dpkg -l > "$img/packages.txt"
umount "$stage/sys" "$stage/proc"
rm -f "$stage/tmp/${deb##*/}"
[[ -f "$stage/boot/initrd.img-$krel" ]] || vm_die "the kernel's postinst made no /boot/initrd.img-$krel"
cmp -s "$stage/boot/vmlinuz-$krel" "$kdir/root/boot/vmlinuz-$krel" || vm_die "the installed vmlinuz is not the cached one"

# The generic first step of every boot (the run's own init comes in its payload): the payload
# is a tar on the virtio-blk disk with serial NSPAYLOAD; a new run's is unpacked into / once,
# then /vm/init runs as PID 1.
mkdir -p "$stage/usr/lib/numastor-vm"
cat > "$stage/usr/lib/numastor-vm/init" <<'EOF'
#!/bin/sh
# PID 1 of the numastor VM image (made by tests/vm/build-image.sh): install the run's payload
# (a tar on the virtio-blk disk with serial NSPAYLOAD) when it is another run's, then run its
# /vm/init. Debian's initramfs has moved /proc, /sys and /dev here.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
for s in /sys/block/*/serial; do
	# virtio-blk's serial has no newline
	[ "$(cat "$s" 2>/dev/null)" = NSPAYLOAD ] || continue
	dev=${s%/serial}
	dev=/dev/${dev##*/}
	id=$(tar -xOf "$dev" ./vm/run-id 2>/dev/null)
	if [ -n "$id" ] && [ "$id" != "$(cat /vm/run-id 2>/dev/null)" ]; then
		mount -o remount,rw /
		rm -rf /vm
		tar -xpf "$dev" -C / && sync
		echo "numastor-vm: installed the payload of run $id from $dev"
	fi
done
[ -x /vm/init ] && exec /vm/init
echo "numastor-vm: no payload (/vm/init)"
echo o > /proc/sysrq-trigger
sleep 30
EOF
chmod 0755 "$stage/usr/lib/numastor-vm/init"

# Which library files the image has: run-image.sh adds to the payload only what is missing.
(cd "$stage" && find lib usr/lib lib64 -maxdepth 2 \( -type f -o -type l \) -name '*.so*' 2>/dev/null |
	sed 's|.*/||' | sort -u) > "$img/libs.txt"

# The two file systems. /boot's content goes to its own image; the root keeps /boot empty.
mkdir -p "$img/bootfs"
mv "$stage"/boot/* "$img/bootfs/"
bsize=$(du -sm "$img/bootfs" | cut -f1)
rsize=$(du -sm "$stage" | cut -f1)
mkfs.ext4 -q -F -L nsvmboot -U "$boot_uuid" -d "$img/bootfs" "$img/boot.raw" "$((bsize * 3 + 64))M" ||
	vm_die "mkfs.ext4 of /boot failed"
mkfs.ext4 -q -F -L nsvmroot -U "$root_uuid" -d "$stage" "$img/root.raw" "$((rsize + 768))M" ||
	vm_die "mkfs.ext4 of / failed"
rm -rf "$img/bootfs"
chmod 0444 "$img/root.raw" "$img/boot.raw"
cat > "$img/env" <<EOF
KREL=$krel
KVER=$kver
ROOT_UUID=$root_uuid
BOOT_UUID=$boot_uuid
MIRROR=$mirror
SUITE=$SUITE
EOF
touch "$img/.ready"
vm_log "image ready in $((SECONDS - t0)) s: root ${rsize} MiB, /boot ${bsize} MiB"
echo "$img"
