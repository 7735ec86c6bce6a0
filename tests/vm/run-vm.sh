#!/bin/bash
# Boot the test guest once under qemu (TCG) and bring its results back.
#
#   run-vm.sh [--append "kernel args"] [--timeout SECONDS] [--disks DIR] [--qemu ARG]...
#             INITRAMFS SCENARIO OUTDIR
#
# The machine: two NUMA nodes (CPUs 0-1 on node 0, 2-3 on node 1), a pxb-pcie expander on
# node 1 holding an NVMe and a megasas-gen2 HBA (scsi-hd; an ich9-ahci with an ide-hd where
# the kernel has no megaraid_sas: the cloud flavour), and on the root bus pcie.0 an NVMe,
# a virtio-scsi HBA (scsi-hd) and a virtio-blk disk. Disk images are small sparse raw files in
# a temporary directory. The guest runs SCENARIO and sends a base64 tar of its /tmp/out over
# the second serial port; it is unpacked into OUTDIR (console.log is the first serial port).
# --disks DIR keeps the disk images in DIR (made when missing, kept afterwards: boots of one
# run share them); each --qemu ARG is appended to qemu's arguments (run-image.sh's disks).
#
# A scenario may add devices to that machine: scenarios/SCENARIO/qemu-args holds extra qemu
# arguments, whitespace-separated (no argument contains a space), '#' starting a comment;
# @DISKS@/NAME.img in them is a fresh 256 MiB sparse image in the temporary directory (room
# for a btrfs). The two scsi-hd disks have ids mega-hd and vscsi-hd, so that a scenario can
# set their properties: "-set device.mega-hd.wwn=0x5000c500aa000001".
#
# A scenario may also add properties to the machine and its memory: scenarios/SCENARIO/machine
# holds lines "machine PROPS" (appended to -machine q35) and "memory PROPS" (appended to
# -m 2G), '#' starting a comment; pmem's "machine nvdimm=on" and "memory slots=2,maxmem=4G"
# make room for its nvdimm. It may also replace the CPU topology and the NUMA layout: "smp
# ARGS" replaces -smp's value (4,sockets=2,cores=2,threads=1), "cpu MODEL[,PROPS]" adds -cpu,
# and "numa ARGS" lines (each one -numa ARGS, in order) replace the two -numa node lines
# (node 0 = CPUs 0-1, node 1 = CPUs 2-3); the memory backends m0 and m1 (1G each) stay for
# them to name; "accel PROPS" is appended to -accel tcg. The server scenario's machine: "smp
# 16,maxcpus=24,sockets=2,cores=6,threads=2" with "numa cpu,node-id=N,socket-id=N" per socket.
# Every other scenario's machine stays as it is.
#
# Every machine has the bed's NVMe subsystem too: qemu's nvme-subsys with two nvme controllers
# of one serial (NSMPATH0001) sharing namespace 1, one on the root bus pcie.0 and one behind the
# node-1 expander (a third root port); on 6.1 the namespace is a multipath head nvmeSnH with
# hidden path disks nvmeScCnH. A scenario that must not have it says why in a file
# scenarios/SCENARIO/no-nvme-subsys (its content is the reason).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

append=
timeout_s=${NUMASTOR_VM_TIMEOUT:-180}
disks=
extra=()
while (($#)); do
	case $1 in
	--append) append=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--disks) disks=$2; shift 2 ;;
	--qemu) extra+=("$2"); shift 2 ;;
	--) shift; break ;;
	-*) vm_die "unknown option $1" ;;
	*) break ;;
	esac
done
(($# == 3)) || vm_die "usage: run-vm.sh [--append ARGS] [--timeout S] [--disks DIR] [--qemu ARG]... INITRAMFS SCENARIO OUTDIR"
initrd=$1 scenario=$2 outdir=$3

kdir=$(vm_kernel_dir)
command -v qemu-system-x86_64 >/dev/null || vm_die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
mkdir -p "$outdir"
if [[ -z "$disks" ]]; then
	disks=$(mktemp -d "${TMPDIR:-/tmp}/numastor-vm-disks.XXXXXX")
	trap 'rm -rf "$disks"' EXIT
fi
mkdir -p "$disks"
for d in nvme-pxb nvme-root mega vscsi vblk; do
	[[ -e "$disks/$d.img" ]] || truncate -s 64M "$disks/$d.img"
done
drive() { echo "file=$disks/$1.img,if=none,id=$1,format=raw,cache=unsafe"; }
mpath_args=()
if [[ ! -f "$VM_DIR/scenarios/$scenario/no-nvme-subsys" ]]; then
	[[ -e "$disks/nvme-mp.img" ]] || truncate -s 256M "$disks/nvme-mp.img"
	# shellcheck disable=SC2054 # the commas belong to qemu option values
	mpath_args=(
		-device nvme-subsys,id=mpsubsys,nqn=nqn.2026-12.numastor:mpath
		-device nvme,id=mpctrl1,serial=NSMPATH0001,subsys=mpsubsys,bus=pcie.0
		-device pcie-root-port,id=rp3,bus=pxb1,chassis=3
		-device nvme,id=mpctrl2,serial=NSMPATH0001,subsys=mpsubsys,bus=rp3
		-drive "$(drive nvme-mp)" -device nvme-ns,drive=nvme-mp,nsid=1,shared=on,bus=mpctrl1
	)
fi
extra_args=()
extra_file="$VM_DIR/scenarios/$scenario/qemu-args"
if [[ -f "$extra_file" ]]; then
	while read -r line; do
		line=${line%%#*}
		for arg in $line; do
			arg=${arg//@DISKS@/$disks}
			while [[ "$arg" =~ $disks/([A-Za-z0-9_-]+)\.img && ! -e "$disks/${BASH_REMATCH[1]}.img" ]]; do
				truncate -s 256M "$disks/${BASH_REMATCH[1]}.img"
			done
			extra_args+=("$arg")
		done
	done < "$extra_file"
fi

machine_props=q35 memory_props=2G smp_props=4,sockets=2,cores=2,threads=1 accel_props=tcg
# shellcheck disable=SC2054 # the commas belong to qemu option values
numa_args=(-numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1)
cpu_args=() scenario_numa=()
machine_file="$VM_DIR/scenarios/$scenario/machine"
if [[ -f "$machine_file" ]]; then
	while read -r key props; do
		props=${props%%#*}
		case $key in
		'' | '#'*) ;;
		machine) machine_props+=",${props// /}" ;;
		memory) memory_props+=",${props// /}" ;;
		smp) smp_props=${props// /} ;;
		cpu) cpu_args=(-cpu "${props// /}") ;;
		numa) scenario_numa+=(-numa "${props// /}") ;;
		accel) accel_props+=",${props// /}" ;;
		*) vm_die "$machine_file: unknown line '$key $props' (machine, memory, smp, cpu, numa or accel)" ;;
		esac
	done < "$machine_file"
fi
((${#scenario_numa[@]} == 0)) || numa_args=("${scenario_numa[@]}")

# The node-1 HBA: megasas-gen2 where the kernel has megaraid_sas; the cloud flavour has none,
# and there an ich9-ahci (libata, one unmanaged MSI vector as megasas has) takes its place
# with the same disk, so that the fix and module-swap scenarios keep a node-1 SCSI host whose
# vector user space may move. The disk keeps the id mega-hd.
if vm_kernel_has_module "$kdir" megaraid_sas; then
	# shellcheck disable=SC2054 # the commas belong to qemu option values
	hba_args=(-device megasas-gen2,id=mega0,bus=rp2
		-drive "$(drive mega)" -device scsi-hd,id=mega-hd,drive=mega,bus=mega0.0)
else
	# shellcheck disable=SC2054 # the commas belong to qemu option values
	hba_args=(-device ich9-ahci,id=ahci0,bus=rp2
		-drive "$(drive mega)" -device ide-hd,id=mega-hd,drive=mega,bus=ahci0.0,serial=NSAHCI0001)
fi

# shellcheck disable=SC2054 # the commas belong to qemu option values
qemu_args=(
	-accel "$accel_props" -nographic -nodefaults -no-reboot -monitor none
	-machine "$machine_props" "${cpu_args[@]}" -smp "$smp_props" -m "$memory_props"
	-object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=1G
	"${numa_args[@]}"
	-kernel "$kdir/vmlinux" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 quiet numastor_vm.scenario=$scenario $append"
	-serial "file:$outdir/console.log" -serial "file:$outdir/results.b64"
	# Node 1: a PCIe expander bus with two root ports: an NVMe and a megasas HBA (or ahci).
	-device pxb-pcie,id=pxb1,bus_nr=128,numa_node=1,bus=pcie.0
	-device pcie-root-port,id=rp1,bus=pxb1,chassis=1
	-drive "$(drive nvme-pxb)" -device nvme,drive=nvme-pxb,serial=NSPXB0001,bus=rp1
	-device pcie-root-port,id=rp2,bus=pxb1,chassis=2
	"${hba_args[@]}"
	# Root bus (no node from firmware): NVMe, virtio-scsi, virtio-blk.
	-drive "$(drive nvme-root)" -device nvme,drive=nvme-root,serial=NSROOT0001,bus=pcie.0
	-device virtio-scsi-pci,id=vscsi0,bus=pcie.0
	-drive "$(drive vscsi)" -device scsi-hd,id=vscsi-hd,drive=vscsi,bus=vscsi0.0
	-drive "$(drive vblk)" -device virtio-blk-pci,drive=vblk,bus=pcie.0
	"${mpath_args[@]}"
	"${extra_args[@]}"
	"${extra[@]}"
)

# On failure, the end of the guest's console says most.
console_tail() {
	echo "--- last lines of the guest console ($outdir/console.log):" >&2
	tr -d '\r' < "$outdir/console.log" | tail -n 25 >&2
}

rc=0
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 "${qemu_args[@]}" \
	</dev/null >"$outdir/qemu.log" 2>&1 || rc=$?
if ((rc == 124 || rc == 137)); then
	console_tail
	vm_die "guest did not finish within ${timeout_s}s (killed)"
elif ((rc != 0)); then
	cat "$outdir/qemu.log" >&2
	vm_die "qemu failed with exit code $rc (see $outdir/qemu.log)"
fi

# The results: everything between the markers, base64 of a gzip'd tar.
tr -d '\r' < "$outdir/results.b64" |
	sed -n '/^==NUMASTOR-VM-RESULTS-BEGIN==$/,/^==NUMASTOR-VM-RESULTS-END==$/p' > "$outdir/results.framed"
grep -q '^==NUMASTOR-VM-RESULTS-END==$' "$outdir/results.framed" ||
	{ console_tail; vm_die "no complete results from the guest"; }
sed '1d;$d' "$outdir/results.framed" | base64 -d | tar -xz -C "$outdir" ||
	vm_die "the guest's results do not unpack"
rm -f "$outdir/results.framed"
