# Guest-side helpers for the scenarios (busybox sh, sourced by /init).
# Everything a scenario wants to hand back goes into $VM_OUT.

VM_OUT=/tmp/out
VM_DISKS=5            # nvme (pxb), nvme (root bus), megasas sd, virtio-scsi sd, virtio-blk
VM_USER=nsuser        # uid 1000

# Send $VM_OUT over the second serial port between marker lines.
vm_send_results() {
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	{
		echo "==NUMASTOR-VM-RESULTS-BEGIN=="
		tar -C "$VM_OUT" -czf - . | base64
		echo "==NUMASTOR-VM-RESULTS-END=="
	} > /dev/ttyS1
}

# Load the storage drivers. With an argument, that nvme.ko is loaded (after nvme-core)
# instead of the stock nvme module.
vm_load_storage() {
	if [ -n "${1:-}" ]; then
		modprobe nvme-core
		insmod "$1"
	else
		modprobe nvme
	fi
	modprobe -a sd_mod megaraid_sas virtio_pci virtio_blk virtio_scsi
}

# The whole disks under /sys/block (no partitions live there; hidden nvme paths are skipped).
vm_disks() {
	local _d
	for _d in /sys/block/*; do
		[ -e "$_d" ] || continue
		_rd "$_d/hidden"
		[ "$_v" = 1 ] && continue
		echo "${_d##*/}"
	done
}

# Wait until $VM_DISKS disks exist, each with its blk-mq queues (at most $1 seconds).
vm_wait_disks() {
	local _left=$((${1:-60} * 10)) _n=0 _d
	while [ "$_left" -gt 0 ]; do
		_n=0
		for _d in $(vm_disks); do
			[ -e "/sys/block/$_d/mq/0/cpu_list" ] && _n=$((_n + 1))
		done
		[ "$_n" -ge "$VM_DISKS" ] && return 0
		sleep 0.1
		_left=$((_left - 1))
	done
	echo "only $_n of $VM_DISKS disks appeared: $(vm_disks | tr '\n' ' ')" >&2
	return 1
}

# --- ground truth -------------------------------------------------------------------
# Written as tab-separated lines:  <record> <key...> <field> <value>
#   machine <field> <value>
#   node <N> <field> <value>
#   disk <name> <field> <value>
#   irq <disk> <irq> <field> <value>
#   hctx <disk> <index> <field> <value>
# Values are the sysfs/procfs contents as read (cpulists normalised on the host side).
# Under TCG every fork+exec costs, so this code uses shell builtins only: `read` for files,
# `cd -P` to resolve links, and sets variables instead of printing into $(...).

# One record line.
_t() {
	local _v
	printf '%s' "$1"
	shift
	for _v in "$@"; do printf '\t%s' "$_v"; done
	printf '\n'
}

# _rd FILE: the first line of FILE into $_v (empty when unreadable).
_rd() {
	_v=
	read -r _v < "$1" 2>/dev/null || :
}

# _tf FILE RECORD... FIELD: a record whose value is the first line of FILE.
_tf() {
	_rd "$1"
	shift
	_t "$@" "$_v"
}

# _resolve PATH: the physical path PATH leads to into $_v (empty when it does not exist).
_resolve() {
	_v=
	if cd -P "$1" 2>/dev/null; then
		_v=$PWD
		cd /
	fi
}

# _link_base LINK: the basename of a directory link's target into $_v.
_link_base() {
	_resolve "$1"
	_v=${_v##*/}
}

# Managed-ness of one IRQ into $_v: write its current smp_affinity_list back. The kernel
# refuses that with EIO for a managed vector (on 6.1; EPERM since 6.12): 1, 0 or "error: ...".
vm_irq_managed() {
	local _cur _err
	_rd "/proc/irq/$1/smp_affinity_list"
	_cur=$_v
	if { echo "$_cur" > "/proc/irq/$1/smp_affinity_list"; } 2>/tmp/.wb-err; then
		_v=0
		return
	fi
	_err=
	read -r _err < /tmp/.wb-err || :
	case $_err in
	*"Input/output error"* | *"I/O error"* | *"Operation not permitted"*) _v=1 ;;
	*) _v="error: $_err" ;;
	esac
}

# The PCI function directory above a sysfs device directory into $_pcidev, and the
# transport components met on the way (nvmeN, hostN, virtioN, ataN) into $_ctl, nearest
# the disk first.
_pci_walk() {
	local _p="$1"
	_ctl='' _pcidev=''
	while [ "$_p" != /sys/devices ] && [ -n "$_p" ]; do
		_link_base "$_p/subsystem"
		if [ "$_v" = pci ]; then
			_pcidev=$_p
			return 0
		fi
		case ${_p##*/} in
		nvme[0-9]* | host[0-9]* | virtio[0-9]* | ata[0-9]*) _ctl="$_ctl ${_p##*/}" ;;
		esac
		_p=${_p%/*}
	done
	return 1
}

vm_truth_machine() {
	local _n _i _line
	_tf /proc/sys/kernel/osrelease machine kernel_release
	_tf /sys/devices/system/cpu/online machine online_cpus
	_tf /sys/devices/system/cpu/possible machine possible_cpus
	_tf /sys/devices/system/node/online machine nodes_online
	for _n in /sys/devices/system/node/node[0-9]*; do
		_i=${_n##*node}
		# a binary attribute that answers a 1-byte read (as `read` does) with nothing
		_t node "$_i" cpus "$(cat "$_n/cpulist")"
		_tf "$_n/distance" node "$_i" distances
		# "Node N MemTotal:   X kB"
		while read -r _line; do
			# shellcheck disable=SC2086 # split into words on purpose
			case $_line in
			*MemTotal:*) set -- $_line; _t node "$_i" memory_kb "$4" ;;
			esac
		done < "$_n/meminfo"
	done
}

vm_truth_irq() { # disk irq
	local _i="/proc/irq/$2" _k="/sys/kernel/irq/$2"
	vm_irq_managed "$2"
	_t irq "$1" "$2" managed "$_v"
	_tf "$_k/actions" irq "$1" "$2" actions
	_tf "$_k/name" irq "$1" "$2" name
	_tf "$_k/chip_name" irq "$1" "$2" chip
	_tf "$_i/smp_affinity_list" irq "$1" "$2" smp_affinity_list
	_tf "$_i/effective_affinity_list" irq "$1" "$2" effective_affinity_list
	_tf "$_i/affinity_hint" irq "$1" "$2" affinity_hint
	_tf "$_i/node" irq "$1" "$2" node
	_tf "$_k/per_cpu_count" irq "$1" "$2" per_cpu_count
}

vm_truth_disk() { # disk
	local _b="/sys/block/$1" _q _dev _m _f _nodes _p _bus _irqs _drv _mod
	_resolve "$_b"
	_t disk "$1" sysfs_path "$_v"
	_tf "$_b/dev" disk "$1" devnum
	_tf "$_b/size" disk "$1" size_sectors
	_tf "$_b/queue/rq_affinity" disk "$1" rq_affinity
	_tf "$_b/queue/scheduler" disk "$1" scheduler
	_tf "$_b/queue/nr_requests" disk "$1" nr_requests
	# Identity as sysfs has it (SCSI: the sdev; NVMe: the controller; the namespace's wwid).
	_tf "$_b/device/model" disk "$1" model
	_tf "$_b/device/serial" disk "$1" serial
	_rd "$_b/wwid"
	[ -n "$_v" ] || _rd "$_b/device/wwid"
	_t disk "$1" wwid "$_v"
	for _q in "$_b"/mq/*; do
		[ -d "$_q" ] || continue
		_tf "$_q/cpu_list" hctx "$1" "${_q##*/}" cpu_list
		_tf "$_q/nr_tags" hctx "$1" "${_q##*/}" nr_tags
	done
	# An NVMe multipath head: the per-path devices stand for it.
	_resolve "$_b/device"
	_dev=$_v
	if [ -d "$_b/multipath" ]; then
		for _m in "$_b"/multipath/*; do
			_resolve "$_m/device"
			_dev=$_v
			break
		done
	fi
	_pci_walk "$_dev" || { _t disk "$1" pci none; return 0; }
	_f=$_pcidev
	_t disk "$1" controllers "${_ctl# }"
	_t disk "$1" pci "${_f##*/}"
	_tf "$_f/vendor" disk "$1" vendor
	_tf "$_f/device" disk "$1" device
	_tf "$_f/class" disk "$1" class
	_link_base "$_f/driver"
	_drv=$_v
	_t disk "$1" driver "$_drv"
	_link_base "/sys/bus/pci/drivers/$_drv/module"
	_mod=$_v
	_t disk "$1" module "$_mod"
	_tf "/sys/module/$_mod/srcversion" disk "$1" module_srcversion
	_tf "/sys/module/$_mod/taint" disk "$1" module_taint
	_tf "$_f/numa_node" disk "$1" numa_node
	_tf "$_f/local_cpulist" disk "$1" local_cpulist
	# PCI bridges above the function, nearest first, then the root bus.
	_nodes='' _p="${_f%/*}"
	while _link_base "$_p/subsystem" && [ "$_v" = pci ]; do
		_rd "$_p/numa_node"
		_nodes="$_nodes $_v"
		_p=${_p%/*}
	done
	_t disk "$1" bridge_nodes "${_nodes# }"
	_bus=${_p##*/pci}
	_t disk "$1" root_bus "$_bus"
	_tf "$_p/pci_bus/$_bus/cpulistaffinity" disk "$1" bus_cpulistaffinity
	_irqs=
	if [ -d "$_f/msi_irqs" ]; then
		_t disk "$1" irq_type msi
		for _q in "$_f"/msi_irqs/*; do
			[ -e "$_q" ] && _irqs="$_irqs ${_q##*/}"
		done
	else
		_t disk "$1" irq_type intx
		_rd "$_f/irq"
		_irqs=$_v
	fi
	_t disk "$1" irqs "${_irqs# }"
	for _q in $_irqs; do
		vm_truth_irq "$1" "$_q"
	done
}

# All ground truth, on stdout.
vm_truth() {
	local _d
	vm_truth_machine
	for _d in $(vm_disks); do
		vm_truth_disk "$_d"
	done
}

# --- numastor -------------------------------------------------------------------------

# Run numastor with the given arguments, as root or (VM_AS_USER=1) as $VM_USER; stdout,
# stderr and the exit code go to $VM_OUT/<tag>.{out,err,rc}.
vm_numastor() { # tag args...
	local _tag="$1" _rc=0
	shift
	if [ "${VM_AS_USER:-0}" = 1 ]; then
		# busybox su permutes options, so the arguments travel in a script (no quotes in them).
		{ printf 'cd && exec /usr/bin/numastor'; printf " '%s'" "$@"; echo; } > /tmp/as-user.sh
		su -s /bin/sh -c 'sh /tmp/as-user.sh' "$VM_USER" \
			> "$VM_OUT/$_tag.out" 2> "$VM_OUT/$_tag.err" || _rc=$?
	else
		/usr/bin/numastor "$@" > "$VM_OUT/$_tag.out" 2> "$VM_OUT/$_tag.err" || _rc=$?
	fi
	echo "$_rc" > "$VM_OUT/$_tag.rc"
}

# The usual round: ground truth (managed-ness probed first, so that any effect of the
# write-back on effective affinity is already there), numastor check --json, and the
# ground truth again to see that nothing moved while numastor ran.
vm_check_round() {
	vm_truth > "$VM_OUT/truth-before.txt"
	vm_numastor check check --json
	vm_truth > "$VM_OUT/truth.txt"
}

# --- fix scenarios ----------------------------------------------------------------------

# Every IRQ of the machine, one tab-separated line each:
#   <irq> <actions> <smp_affinity_list> <effective_affinity_list>
vm_irqs() {
	local _d _n _a _s
	for _d in /proc/irq/[0-9]*; do
		_n=${_d##*/}
		_rd "/sys/kernel/irq/$_n/actions"
		_a=$_v
		_rd "$_d/smp_affinity_list"
		_s=$_v
		_rd "$_d/effective_affinity_list"
		_t "$_n" "$_a" "$_s" "$_v"
	done
}

# Read a little from every disk with O_DIRECT so that each queue's vector fires: on x86
# without interrupt remapping a new affinity takes effect at the vector's next interrupt.
vm_fire_disks() {
	local _d
	for _d in $(vm_disks); do
		dd if="/dev/$_d" of=/dev/null bs=4096 count=16 iflag=direct 2>/dev/null || :
	done
}

# A copy of numastor's journal as $VM_OUT/NAME, when there is one.
vm_save_journal() { # name
	if [ -e /run/numastor/journal.json ]; then
		cp /run/numastor/journal.json "$VM_OUT/$1"
	fi
}

# Seconds since boot (two decimals) into $_v.
vm_uptime() {
	_v=
	read -r _v _ < /proc/uptime
}
