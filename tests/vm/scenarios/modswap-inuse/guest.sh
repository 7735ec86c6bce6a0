# numastor fix --modules with a disk in use in ways that /proc/self/mountinfo and the
# modules' reference counts do not show. The bed's standard machine has an NVMe namespace
# shared by two controllers of one subsystem (run-vm.sh: one on the root bus, one behind the
# node-1 expander): on Debian's 6.1 it is a multipath head nvmeXnY whose users take no nvme.ko
# reference. Each case: the use set up, the
# state (vm_swap_state), `fix --modules --dry-run --json` (the plan and its refusals), `fix
# --modules` (must be refused, nothing changed), the state again, the use undone:
#   btrfs      a btrfs on the multipath head, mounted (mountinfo shows an anonymous 0:NN)
#   netns      ext4 on the megasas disk mounted only inside another mount namespace (unshare -m)
#   reader     a process holding the head open read-only (no mount, no claim)
#   loop       loop0 bound to the head (losetup /dev/loop0 /dev/HEAD: no holder link, no
#              claim, no nvme.ko reference); its twin loop1 on a file of the megasas disk
#   nvmet      an nvmet bdev namespace on the head (configfs mounted at /sys/kernel/config);
#              then configfs unmounted with nvmet loaded: the plan refuses as unknown
#   dmlinear   dm-linear (dmsetup) on a partition of the root-bus NVMe
#   swap       swap on a partition of the virtio-scsi disk
#   zram       the megasas disk as a zram writeback device: an in-kernel exclusive claim that
#              no mount, holder link, swap or descriptor shows
#   recheck    the plan made with nothing in use, then (NUMASTOR_TEST_PAUSE_BEFORE_SWAP) the
#              head opened by a process before the swap starts: the recheck before the removal
# Ground truth is the kernel's own files and the tools' output, recorded as facts.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
MODULES="nvme nvme_core scsi_mod sd_mod megaraid_sas virtio_scsi"

# numastor's module directory for the nvme group (the patched nvme.ko) or the SCSI group.
nvme_dir() { vm_module_dir /vm/kmod/prefix-modules/manifest.json /vm/kmod/prefix-modules/nvme.ko; }
scsi_dir() { vm_module_dir /vm/kmod/midlayer/manifest.json /vm/kmod/midlayer/scsi_mod.ko /vm/kmod/midlayer/sd_mod.ko; }

# The entries of a directory, space-separated.
entries() { # dir
	local _e _all=
	for _e in "$1"/*; do
		[ -e "$_e" ] || [ -L "$_e" ] && _all="$_all ${_e##*/}"
	done
	echo "${_all# }"
}

# The head: the disk under nvme-subsystem; its per-path disks and controllers.
find_head() {
	local _i _d
	_i=0
	while [ "$_i" -lt 300 ]; do
		for _d in /sys/block/nvme*; do
			case "$(readlink -f "$_d")" in
			*/nvme-subsystem/*) head=${_d##*/}; return 0 ;;
			esac
		done
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "no NVMe multipath head appeared" >&2
	return 1
}

# Try one case: state, plan, the swap, state (STEP-before, STEP-plan, STEP, STEP-after).
attempt() { # step
	vm_swap_state "$1-before" "$MODULES" ""
	vm_fact "mounts.$1" "$(cut -d' ' -f1,2,3 /proc/mounts | tr '\n' ';')"
	vm_numastor "$1-plan" fix --modules --dry-run --json
	vm_numastor "$1" fix --modules
	vm_swap_state "$1" "$MODULES" ""
}

# the usual five disks and the head (which vm_wait_disks counts), with both of its paths
vm_load_storage
vm_wait_disks 60
modprobe -a ext4 btrfs dm_mod
find_head
vm_fact head "$head"
vm_fact head.path "$(readlink -f "/sys/block/$head")"
paths=
for d in /sys/block/nvme*c*n*; do
	[ -e "$d" ] && paths="$paths ${d##*/}"
done
vm_fact head.paths "${paths# }"
vm_fact head.pcis "$(for p in $paths; do basename "$(readlink -f "/sys/block/$p/device/device")"; done | tr '\n' ' ')"
vm_fact head.nvme_refcnt.idle "$(cat /sys/module/nvme/refcnt)"
vm_disk_by_serial NSROOT0001
rootnvme=$_v
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
mega=$_v
vm_scsi_host virtio_scsi
vm_disk_on_host "$_v"
vscsi=$_v
vm_fact rootnvme "$rootnvme"
vm_fact mega "$mega"
vm_fact vscsi "$vscsi"

# btrfs on the head.
nvme_dir
mkfs.btrfs -q -f "/dev/$head" > /dev/null
mkdir -p /mnt/b
mount -t btrfs "/dev/$head" /mnt/b
echo data > /mnt/b/file
for u in /sys/fs/btrfs/*/devices; do
	[ -d "$u" ] || continue
	fsid=${u%/devices}
	vm_fact btrfs.uuid "${fsid##*/}"
	vm_fact btrfs.members "$(entries "$u")"
done
vm_fact btrfs.mountinfo "$(grep ' /mnt/b ' /proc/self/mountinfo)"
vm_fact btrfs.nvme_refcnt "$(cat /sys/module/nvme/refcnt)"
attempt btrfs
vm_fact btrfs.file "$(cat /mnt/b/file)"
umount /mnt/b

# ext4 on the megasas disk, mounted only in another mount namespace.
scsi_dir
mke2fs -q "/dev/$mega"
mkdir -p /mnt/ns
rm -f /tmp/ns-ready
unshare -m --propagation private sh -c \
	"mount -t ext4 /dev/$mega /mnt/ns && echo ready > /tmp/ns-ready && exec sleep 600" &
nspid=$!
i=0
while [ ! -e /tmp/ns-ready ] && [ "$i" -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
vm_fact netns.pid "$nspid"
vm_fact netns.ns "$(readlink "/proc/$nspid/ns/mnt")"
vm_fact netns.our_ns "$(readlink /proc/self/ns/mnt)"
vm_fact netns.their_mount "$(grep -c " /mnt/ns " "/proc/$nspid/mountinfo")"
vm_fact netns.our_mount "$(grep -c " /mnt/ns " /proc/self/mountinfo || :)"
attempt netns
kill "$nspid"
wait "$nspid" || :

# A process reading the head (no mount, no claim).
nvme_dir
# shellcheck disable=SC2217 # holding the disk open is the point
sleep 600 < "/dev/$head" &
reader=$!
# the child opens the head after the fork: wait for it (under load the parent reads first)
i=0
while [ "$(readlink "/proc/$reader/fd/0")" != "/dev/$head" ] && [ "$i" -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
vm_fact reader.pid "$reader"
vm_fact reader.fd0 "$(readlink "/proc/$reader/fd/0")"
vm_fact reader.nvme_refcnt "$(cat /sys/module/nvme/refcnt)"
attempt reader
kill "$reader"
wait "$reader" || :

# loop0 on the head; the twin, loop1 on a file of the megasas disk (another group's disk).
modprobe loop
mke2fs -q "/dev/$mega"
mkdir -p /mnt/l
mount -t ext4 "/dev/$mega" /mnt/l
dd if=/dev/zero of=/mnt/l/img bs=1024 count=4096 2> /dev/null
losetup /dev/loop0 "/dev/$head"
losetup /dev/loop1 /mnt/l/img
vm_fact loop.backing0 "$(cat /sys/block/loop0/loop/backing_file)"
vm_fact loop.backing1 "$(cat /sys/block/loop1/loop/backing_file)"
vm_fact loop.holders "$(entries "/sys/block/$head/holders")"
vm_fact loop.nvme_refcnt "$(cat /sys/module/nvme/refcnt)"
attempt loop
vm_fact loop.backing0.after "$(cat /sys/block/loop0/loop/backing_file 2> /dev/null)"
vm_fact loop.read.after "$(dd if=/dev/loop0 bs=4096 count=1 2> /dev/null | wc -c)"
losetup -d /dev/loop0
losetup -d /dev/loop1
umount /mnt/l
rmmod loop

# An nvmet bdev namespace on the head (not enabled for any port: a namespace holds its disk
# open all the same), then configfs unmounted while nvmet is loaded.
if modprobe nvmet 2> /dev/null; then
	grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
	sub=/sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.numastor:inuse
	mkdir "$sub"
	mkdir "$sub/namespaces/1"
	echo "/dev/$head" > "$sub/namespaces/1/device_path"
	echo 1 > "$sub/namespaces/1/enable"
	vm_fact nvmet.device_path "$(cat "$sub/namespaces/1/device_path")"
	vm_fact nvmet.enable "$(cat "$sub/namespaces/1/enable")"
	vm_fact nvmet.holders "$(entries "/sys/block/$head/holders")"
	attempt nvmet
	vm_fact nvmet.enable.after "$(cat "$sub/namespaces/1/enable")"
	echo 0 > "$sub/namespaces/1/enable"
	rmdir "$sub/namespaces/1"
	rmdir "$sub"
	umount /sys/kernel/config
	vm_fact nvmet.unmounted "$(grep -c ' /sys/kernel/config ' /proc/mounts || :) $(cat /sys/module/nvmet/refcnt)"
	vm_numastor nvmet-unknown-plan fix --modules --dry-run --json
	rmmod nvmet
	vm_fact nvmet.after "$([ -e /sys/module/nvmet ] && echo loaded || echo gone)"
else
	vm_fact nvmet.device_path "(no nvmet module)"
fi

# dm-linear on a partition of the root-bus NVMe.
printf 'n\np\n1\n\n+16M\nw\n' | fdisk "/dev/$rootnvme" > /dev/null 2>&1 || :
i=0
while [ ! -e "/sys/block/$rootnvme/${rootnvme}p1" ] && [ "$i" -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
DM_DISABLE_UDEV=1 dmsetup create --noudevsync inuse-lin --table "0 16384 linear /dev/${rootnvme}p1 0"
vm_fact dmlinear.holders "$(entries "/sys/block/$rootnvme/${rootnvme}p1/holders")"
vm_fact dmlinear.name "$(cat /sys/block/dm-0/dm/name)"
attempt dmlinear
DM_DISABLE_UDEV=1 dmsetup remove --noudevsync inuse-lin

# Swap on a partition of the virtio-scsi disk.
scsi_dir
printf 'n\np\n1\n\n+16M\nw\n' | fdisk "/dev/$vscsi" > /dev/null 2>&1 || :
i=0
while [ ! -e "/sys/block/$vscsi/${vscsi}1" ] && [ "$i" -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
mkswap "/dev/${vscsi}1" > /dev/null
swapon "/dev/${vscsi}1"
vm_fact swap.swaps "$(tail -n +2 /proc/swaps | cut -d' ' -f1 | tr '\n' ' ')"
attempt swap
swapoff "/dev/${vscsi}1"

# The megasas disk as zram's writeback device: claimed inside the kernel only.
modprobe zram
echo "/dev/$mega" > /sys/block/zram0/backing_dev
vm_fact zram.backing_dev "$(cat /sys/block/zram0/backing_dev)"
vm_fact zram.holders "$(entries "/sys/block/$mega/holders")"
attempt zram
echo 1 > /sys/block/zram0/reset
vm_fact zram.after "$(cat /sys/block/zram0/backing_dev)"

# The recheck: the plan with nothing in use, then the head opened before the swap starts.
nvme_dir
vm_swap_state recheck-before "$MODULES" ""
NUMASTOR_TEST_PAUSE_BEFORE_SWAP=10 /usr/bin/numastor fix --modules \
	> "$VM_OUT/recheck.out" 2> "$VM_OUT/recheck.err" &
fixpid=$!
i=0
while ! grep -q "every check passed" "$VM_OUT/recheck.out" && [ "$i" -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
# shellcheck disable=SC2217 # holding the disk open is the point
sleep 600 < "/dev/$head" &
reader=$!
vm_wait_holding "$reader" "/dev/$head"
vm_fact recheck.pid "$reader"
vm_fact recheck.planned "$(grep -c "every check passed" "$VM_OUT/recheck.out")"
rc=0
wait "$fixpid" || rc=$?
echo "$rc" > "$VM_OUT/recheck.rc"
vm_swap_state recheck "$MODULES" ""
kill "$reader"
wait "$reader" || :

# The bed's ground truth knows no multipath head (one path per disk), no partitions and no
# zram: take the two controllers, the partition tables and zram away, then the usual check
# round over the rest.
for p in $paths; do
	bdf=$(basename "$(readlink -f "/sys/block/$p/device/device")")
	[ -e "/sys/bus/pci/devices/$bdf/remove" ] && echo 1 > "/sys/bus/pci/devices/$bdf/remove"
done
i=0
while [ -e "/sys/block/$head" ] && [ "$i" -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
for d in "$rootnvme" "$vscsi"; do
	dd if=/dev/zero of="/dev/$d" bs=512 count=1 conv=fsync 2> /dev/null
	blockdev --rereadpt "/dev/$d"
done
rmmod zram
vm_check_round
