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
	for d in /sys/block/*; do
		[ -e "$d" ] || continue
		[ "$(cat "$d/hidden" 2>/dev/null)" = 1 ] && continue
		echo "${d##*/}"
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
	echo "only $_n of $VM_DISKS disks appeared:" $(vm_disks) >&2
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

_t() {
	local _v
	printf '%s' "$1"
	shift
	for _v in "$@"; do printf '\t%s' "$_v"; done
	printf '\n'
}
_rd() { cat "$1" 2>/dev/null | head -n 1; }

# The basename of a sysfs link (e.g. a driver or subsystem).
_link_base() { local _l; _l=$(readlink "$1" 2>/dev/null) && echo "${_l##*/}"; }

# Managed-ness of one IRQ: write its current smp_affinity_list back. The kernel refuses
# that with EIO for a managed vector (on 6.1; EPERM since 6.12); prints 1, 0 or "error: ...".
vm_irq_managed() {
	local _cur _err
	_cur=$(cat "/proc/irq/$1/smp_affinity_list")
	_err=$( { echo "$_cur" > "/proc/irq/$1/smp_affinity_list"; } 2>&1 ) && { echo 0; return; }
	case $_err in
	*"Input/output error"* | *"I/O error"* | *"Operation not permitted"*) echo 1 ;;
	*) echo "error: $_err" ;;
	esac
}

# The PCI function directory above a sysfs device directory, and the transport components
# met on the way (nvmeN, hostN, virtioN, ataN), nearest the disk first.
_pci_walk() {
	_p=$1 _ctl= _pcidev=
	while [ "$_p" != /sys/devices ] && [ "$_p" != / ]; do
		if [ "$(_link_base "$_p/subsystem")" = pci ]; then
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
	_t machine kernel_release "$(_rd /proc/sys/kernel/osrelease)"
	_t machine online_cpus "$(_rd /sys/devices/system/cpu/online)"
	_t machine possible_cpus "$(_rd /sys/devices/system/cpu/possible)"
	_t machine nodes_online "$(_rd /sys/devices/system/node/online)"
	local _n _i
	for _n in /sys/devices/system/node/node[0-9]*; do
		_i=${_n##*node}
		_t node "$_i" cpus "$(_rd "$_n/cpulist")"
		_t node "$_i" distances "$(_rd "$_n/distance")"
		_t node "$_i" memory_kb "$(awk '/MemTotal/ { print $4 }' "$_n/meminfo")"
	done
}

vm_truth_irq() { # disk irq
	local _i=/proc/irq/$2 _k=/sys/kernel/irq/$2
	_t irq "$1" "$2" managed "$(vm_irq_managed "$2")"
	_t irq "$1" "$2" actions "$(_rd "$_k/actions")"
	_t irq "$1" "$2" name "$(_rd "$_k/name")"
	_t irq "$1" "$2" chip "$(_rd "$_k/chip_name")"
	_t irq "$1" "$2" smp_affinity_list "$(_rd "$_i/smp_affinity_list")"
	_t irq "$1" "$2" effective_affinity_list "$(_rd "$_i/effective_affinity_list")"
	_t irq "$1" "$2" affinity_hint "$(_rd "$_i/affinity_hint")"
	_t irq "$1" "$2" node "$(_rd "$_i/node")"
	_t irq "$1" "$2" per_cpu_count "$(_rd "$_k/per_cpu_count")"
}

vm_truth_disk() { # disk
	local _b=/sys/block/$1 _q _dev _m _f _nodes _p _bus _irqs _drv _mod
	_t disk "$1" sysfs_path "$(readlink -f "$_b")"
	_t disk "$1" devnum "$(_rd "$_b/dev")"
	_t disk "$1" size_sectors "$(_rd "$_b/size")"
	_t disk "$1" rq_affinity "$(_rd "$_b/queue/rq_affinity")"
	_t disk "$1" scheduler "$(_rd "$_b/queue/scheduler")"
	_t disk "$1" nr_requests "$(_rd "$_b/queue/nr_requests")"
	for _q in "$_b"/mq/*; do
		[ -d "$_q" ] || continue
		_t hctx "$1" "${_q##*/}" cpu_list "$(_rd "$_q/cpu_list")"
		_t hctx "$1" "${_q##*/}" nr_tags "$(_rd "$_q/nr_tags")"
	done
	# An NVMe multipath head: the per-path devices stand for it.
	_dev=$(readlink -f "$_b/device")
	if [ -d "$_b/multipath" ]; then
		for _m in "$_b"/multipath/*; do _dev=$(readlink -f "$_m/device"); break; done
	fi
	_pci_walk "$_dev" || { _t disk "$1" pci none; return 0; }
	_f=$_pcidev
	_t disk "$1" controllers "${_ctl# }"
	_t disk "$1" pci "${_f##*/}"
	_t disk "$1" vendor "$(_rd "$_f/vendor")"
	_t disk "$1" device "$(_rd "$_f/device")"
	_t disk "$1" class "$(_rd "$_f/class")"
	_drv=$(_link_base "$_f/driver")
	_t disk "$1" driver "$_drv"
	_mod=$(_link_base "/sys/bus/pci/drivers/$_drv/module")
	_t disk "$1" module "$_mod"
	_t disk "$1" module_srcversion "$(_rd "/sys/module/$_mod/srcversion")"
	_t disk "$1" module_taint "$(_rd "/sys/module/$_mod/taint")"
	_t disk "$1" numa_node "$(_rd "$_f/numa_node")"
	_t disk "$1" local_cpulist "$(_rd "$_f/local_cpulist")"
	# PCI bridges above the function, nearest first, then the root bus.
	_nodes= _p=${_f%/*}
	while [ "$(_link_base "$_p/subsystem")" = pci ]; do
		_nodes="$_nodes $(_rd "$_p/numa_node")"
		_p=${_p%/*}
	done
	_t disk "$1" bridge_nodes "${_nodes# }"
	_bus=${_p##*/pci}
	_t disk "$1" root_bus "$_bus"
	_t disk "$1" bus_cpulistaffinity "$(_rd "$_p/pci_bus/$_bus/cpulistaffinity")"
	_irqs=
	if [ -d "$_f/msi_irqs" ]; then
		_t disk "$1" irq_type msi
		_irqs=$(ls "$_f/msi_irqs" | sort -n | tr '\n' ' ')
	else
		_t disk "$1" irq_type intx
		_irqs=$(_rd "$_f/irq")
	fi
	_t disk "$1" irqs "${_irqs% }"
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
	local _tag=$1 _rc=0
	shift
	if [ "${VM_AS_USER:-0}" = 1 ]; then
		( cd /home/nsuser && exec setpriv --reuid=1000 --regid=1000 --clear-groups -- \
			/usr/bin/numastor "$@" ) > "$VM_OUT/$_tag.out" 2> "$VM_OUT/$_tag.err" || _rc=$?
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
	vm_numastor check --json
	vm_truth > "$VM_OUT/truth.txt"
}
