# Guest-side helpers for the scenarios (busybox sh, sourced by /init).
# Everything a scenario wants to hand back goes into $VM_OUT.

VM_OUT=/tmp/out
VM_DISKS=6            # nvme (pxb), nvme (root bus), megasas sd, virtio-scsi sd, virtio-blk, the subsystem's head
VM_MPATHS=2           # the head's hidden NVMe path disks (root bus, node-1 expander)
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

# Wait until process $1 holds $2 open on its standard input (at most 10 s): a reader started as
# `sleep 600 < /dev/X &` opens X in the child, after the fork, and under load the parent looks
# first (a CI run's modswap-interrupted saw no reader yet, then the reader open a moment later).
vm_wait_holding() { # pid device
	_i=0
	while [ "$(readlink "/proc/$1/fd/0" 2>/dev/null)" != "$2" ] && [ "$_i" -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

# Is module $1 built into this kernel (modules.builtin)? Is it in the initramfs (modules.dep)?
vm_builtin() {
	grep -q "/$1\.ko\$" "/lib/modules/$(uname -r)/modules.builtin"
}
vm_has_module() {
	grep -Eq "/$1\.ko(\.xz|\.zst|\.gz)?:" "/lib/modules/$(uname -r)/modules.dep"
}

# Load the storage drivers. With an argument, that nvme.ko is loaded (after nvme-core)
# instead of the stock nvme module; where the flavour builds nvme in (cloud-amd64) no other
# nvme can load: the argument is set aside, said in notes.txt and as the fact
# prefix_nvme=builtin. A driver the flavour builds in is there already. Where the kernel has
# no megaraid_sas (cloud-amd64), run-vm.sh gave the node-1 HBA's disk to an ich9-ahci, and ahci
# drives it.
vm_load_storage() {
	local _m
	if [ -n "${1:-}" ] && vm_builtin nvme; then
		echo "nvme is built into $(uname -r): the pre-fix $1 cannot load, the built-in nvme (with the fix) drives the NVMe" >> "$VM_OUT/notes.txt"
		vm_fact prefix_nvme builtin
	elif [ -n "${1:-}" ]; then
		modprobe nvme-core
		insmod "$1"
		vm_fact prefix_nvme loaded
	elif ! vm_builtin nvme; then
		modprobe nvme
	fi
	for _m in sd_mod megaraid_sas virtio_pci virtio_blk virtio_scsi; do
		if vm_builtin "$_m"; then
			continue
		elif vm_has_module "$_m"; then
			modprobe "$_m"
		elif [ "$_m" = megaraid_sas ] && vm_has_module ahci; then
			modprobe ahci
			echo "no megaraid_sas in $(uname -r): the node-1 HBA is an ich9-ahci (driver ahci)" >> "$VM_OUT/notes.txt"
		else
			echo "no $_m in $(uname -r), nor built in" >&2
			return 1
		fi
	done
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

# Wait until $VM_DISKS disks exist, each with its blk-mq queues or (a multipath head, which has
# none) under nvme-subsystem, and $VM_MPATHS hidden path disks with theirs (at most $1 seconds).
vm_wait_disks() {
	local _left=$((${1:-60} * 10)) _n=0 _p=0 _d
	while [ "$_left" -gt 0 ]; do
		_n=0 _p=0
		for _d in $(vm_disks); do
			_resolve "/sys/block/$_d"
			case $_v in
			*/nvme-subsystem/*) _n=$((_n + 1)) ;;
			*) [ -e "/sys/block/$_d/mq/0/cpu_list" ] && _n=$((_n + 1)) ;;
			esac
		done
		for _d in /sys/block/nvme*c*n*; do
			[ -e "$_d/mq/0/cpu_list" ] && _p=$((_p + 1))
		done
		[ "$_n" -ge "$VM_DISKS" ] && [ "$_p" -ge "$VM_MPATHS" ] && return 0
		sleep 0.1
		_left=$((_left - 1))
	done
	echo "only $_n of $VM_DISKS disks and $_p of $VM_MPATHS NVMe paths appeared: $(vm_disks | tr '\n' ' ')" >&2
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
	{ read -r _v < "$1"; } 2>/dev/null || :
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
	# isolcpus= (6.9 on, blk-mq leaves isolated CPUs out of a hardware queue's cpu_list)
	_i=$(cat /sys/devices/system/cpu/isolated 2> /dev/null)
	[ -z "$_i" ] || _t machine isolated_cpus "$_i"
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
	# (virtio-blk has its serial on the disk, /sys/block/vdX/serial, without a newline)
	_rd "$_b/device/serial"
	[ -n "$_v" ] || _rd "$_b/serial"
	_t disk "$1" serial "$_v"
	_rd "$_b/wwid"
	[ -n "$_v" ] || _rd "$_b/device/wwid"
	_t disk "$1" wwid "$_v"
	for _q in "$_b"/mq/*; do
		[ -d "$_q" ] || continue
		_tf "$_q/cpu_list" hctx "$1" "${_q##*/}" cpu_list
		_tf "$_q/nr_tags" hctx "$1" "${_q##*/}" nr_tags
		# Where the hctx's memory lives is recorded nowhere the bed can read for one queue
		# (alloc_traces merge identical stacks): not measured, so not counted as truth.
		_t hctx "$1" "${_q##*/}" memory_node inferred
		# blk-mq's own flags (debugfs): TAG_HCTX_SHARED = one tag set for all the queues
		_tf "/sys/kernel/debug/block/$1/hctx${_q##*/}/flags" hctx "$1" "${_q##*/}" flags
	done
	_resolve "$_b"
	case $_v in
	*/nvme-subsystem/*) vm_truth_head "$1" "$_v"; return 0 ;;
	esac
	_resolve "$_b/device"
	_dev=$_v
	if ! _pci_walk "$_dev"; then
		# no PCI function on the disk's own path (pmem, md, an NVMe-over-fabrics path): the
		# transport components met (a fabrics path's nvmeN), an md array's level and members;
		# the node and its basis are the scenario's ground truth (its guest.sh measures them)
		[ -z "$_ctl" ] || _t disk "$1" controllers "${_ctl# }"
		_t disk "$1" pci none
		if [ -d "$_b/md" ]; then
			_tf "$_b/md/level" disk "$1" md_level
			_m=
			for _q in "$_b"/slaves/*; do
				[ -e "$_q" ] && _m="$_m ${_q##*/}"
			done
			_t disk "$1" slaves "${_m# }"
		fi
		return 0
	fi
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
	# a built-in module has no initstate (6.12's virtio_pci; cloud-amd64's nvme)
	if [ -e "/sys/module/$_mod/initstate" ]; then
		_tf "/sys/module/$_mod/initstate" disk "$1" module_initstate
	else
		_t disk "$1" module_initstate builtin
	fi
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

# An NVMe multipath head $1 at sysfs directory $2 (.../nvme-subsystem/nvme-subsysS/$1): its
# subsystem and iopolicy, and its paths as the kernel links them: every hidden disk in
# /sys/block whose device link is a controller the subsystem directory links, with the head's
# wwid and nsid; where the head has a multipath/ directory (newer kernels) its entries too.
# Each path disk then gets its own records (vm_truth_disk: controller, PCI function, node,
# vectors, queues) under its own name.
vm_truth_head() { # head syspath
	local _sd="${2%/*}" _c _ctrls='' _p _paths='' _w _wid _nsid _mp=''
	_t disk "$1" subsystem "${_sd##*/}"
	_tf "$_sd/iopolicy" disk "$1" iopolicy
	_tf "$_sd/subsysnqn" disk "$1" subsysnqn
	_t disk "$1" pci none
	for _c in "$_sd"/nvme*; do
		[ -L "$_c" ] || continue
		_resolve "$_c"
		_ctrls="$_ctrls $_v"
	done
	_t disk "$1" subsystem_controllers "$(for _c in $_ctrls; do printf '%s ' "${_c##*/}"; done)"
	_rd "/sys/block/$1/wwid"
	_wid=$_v
	_rd "/sys/block/$1/nsid"
	_nsid=$_v
	for _p in /sys/block/*; do
		_rd "$_p/hidden"
		[ "$_v" = 1 ] || continue
		_resolve "$_p/device"
		_w=$_v
		case " $_ctrls " in
		*" $_w "*) ;;
		*) continue ;;
		esac
		_rd "$_p/wwid"
		[ "$_v" = "$_wid" ] || continue
		_rd "$_p/nsid"
		[ "$_v" = "$_nsid" ] || continue
		_paths="$_paths ${_p##*/}"
	done
	_t disk "$1" paths "${_paths# }"
	if [ -d "/sys/block/$1/multipath" ]; then
		for _p in "/sys/block/$1"/multipath/*; do
			[ -e "$_p" ] && _mp="$_mp ${_p##*/}"
		done
		_t disk "$1" multipath_dir "${_mp# }"
	else
		_t disk "$1" multipath_dir absent
	fi
	for _p in $_paths; do
		vm_truth_disk "$_p"
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

# --- pairing, measured ----------------------------------------------------------------

# The vectors of PCI function directory $1, appended to $_irqs.
_fn_irqs() {
	local _q
	if [ -d "$1/msi_irqs" ]; then
		for _q in "$1"/msi_irqs/*; do
			[ -e "$_q" ] && _irqs="$_irqs ${_q##*/}"
		done
	else
		_rd "$1/irq"
		_irqs="$_irqs $_v"
	fi
}

# Which vector completes the I/O a CPU submits, measured: for every disk and every online CPU,
# $VM_PAIR_READS O_DIRECT 4 KiB reads issued from that CPU (taskset), with every vector of the
# disk's PCI functions (each path's for a multipath head) read before and after. One line per
# vector and CPU:  pair <disk> <cpu> <irq> <per_cpu_count before> <per_cpu_count after>
# (compare.py takes the vector that grew as the queue's, the CPUs it grew on as where it
# completes). Nothing else does I/O meanwhile. VM_PAIR_CPUS ("0 1 12", space-separated) limits
# the CPUs that read (a machine with many CPUs under TCG); compare.py holds the queues of the
# others to the kernel's naming.
VM_PAIR_READS=64
VM_PAIR_CPUS=
vm_measure_pairing() {
	local _d _c _cpu _irqs _i _p _b _pol _sd
	for _d in $(vm_disks); do
		[ -b "/dev/$_d" ] || continue
		_irqs='' _sd=''
		_resolve "/sys/block/$_d"
		case $_v in
		*/nvme-subsystem/*)
			_sd=${_v%/*}
			for _p in /sys/block/*; do
				case ${_p##*/} in
				"${_d%n*}"c*n"${_d##*n}") ;;
				*) continue ;;
				esac
				_resolve "$_p/device"
				_pci_walk "$_v" && _fn_irqs "$_pcidev"
			done
			;;
		*)
			_resolve "/sys/block/$_d/device"
			_pci_walk "$_v" && _fn_irqs "$_pcidev"
			;;
		esac
		[ -n "$_irqs" ] || continue
		# a head's I/O goes down one path per node under iopolicy numa; round-robin sends
		# every CPU's reads down each path in turn, so that every path's queues are measured
		_pol=''
		if [ -n "$_sd" ]; then
			_rd "$_sd/iopolicy"
			_pol=$_v
			echo round-robin > "$_sd/iopolicy"
		fi
		for _c in /sys/devices/system/cpu/cpu[0-9]*; do
			_cpu=${_c##*cpu}
			_rd "$_c/online"
			[ "$_v" = 0 ] && continue
			case " ${VM_PAIR_CPUS:-$_cpu} " in
			*" $_cpu "*) ;;
			*) continue ;;
			esac
			_b=
			for _i in $_irqs; do
				_rd "/sys/kernel/irq/$_i/per_cpu_count"
				_b="$_b $_v"
			done
			taskset -c "$_cpu" dd if="/dev/$_d" of=/dev/null bs=4096 count="$VM_PAIR_READS" iflag=direct 2>/dev/null
			# shellcheck disable=SC2086 # one word per vector
			set -- $_b
			for _i in $_irqs; do
				_rd "/sys/kernel/irq/$_i/per_cpu_count"
				_t pair "$_d" "$_cpu" "$_i" "$1" "$_v"
				shift
			done
		done
		[ -z "$_pol" ] || echo "$_pol" > "$_sd/iopolicy"
	done
}

# Which path of each multipath head serves each CPU, measured: VM_PATH_READS O_DIRECT reads
# pinned to the CPU go down the path the kernel picked for the CPU's node (iopolicy numa; its
# nvme_find_path caches the pick per node on the first I/O), counted by the path disks' own stat
# (field 1, reads completed). Records "path_serves HEAD CPU PATH", then each path's numa_nodes,
# queue_depth and ana_state as the kernel prints them after the reads ("absent": no such file,
# as before about v6.15; an empty value is the kernel printing nothing, e.g. numa_nodes under
# another iopolicy).
VM_PATH_READS=${VM_PATH_READS:-16}
vm_measure_paths() {
	local _d _c _cpu _p _paths _b _n _f
	for _d in $(vm_disks); do
		_resolve "/sys/block/$_d"
		case $_v in
		*/nvme-subsystem/*) ;;
		*) continue ;;
		esac
		_paths=''
		for _p in /sys/block/*; do
			case ${_p##*/} in
			"${_d%n*}"c*n"${_d##*n}") _paths="$_paths ${_p##*/}" ;;
			esac
		done
		for _c in /sys/devices/system/cpu/cpu[0-9]*; do
			_cpu=${_c##*cpu}
			_rd "$_c/online"
			[ "$_v" = 0 ] && continue
			_b=
			for _p in $_paths; do
				read -r _n _ < "/sys/block/$_p/stat"
				_b="$_b $_n"
			done
			taskset -c "$_cpu" dd if="/dev/$_d" of=/dev/null bs=4096 count="$VM_PATH_READS" iflag=direct 2>/dev/null
			# shellcheck disable=SC2086 # one count per path
			set -- $_b
			for _p in $_paths; do
				read -r _n _ < "/sys/block/$_p/stat"
				[ "$_n" -gt "$1" ] && _t path_serves "$_d" "$_cpu" "$_p"
				shift
			done
		done
		for _p in $_paths; do
			for _f in numa_nodes queue_depth ana_state; do
				if [ -e "/sys/block/$_p/$_f" ]; then
					_tf "/sys/block/$_p/$_f" path_attr "$_p" "$_f"
				else
					_t path_attr "$_p" "$_f" absent
				fi
			done
		done
	done
}

# Under iopolicy queue-depth (where a path has the queue_depth file: about v6.15 on) numastor
# reads each path's queue depth: check --json as "check-qd", with the paths' files read right
# after it (qd.txt: path_attr records, as vm_measure_paths'); the iopolicy is put back. Nothing
# where no path has the file.
vm_queue_depth_round() {
	local _d _sd _p _old _f _paths
	for _d in $(vm_disks); do
		_resolve "/sys/block/$_d"
		case $_v in
		*/nvme-subsystem/*) _sd=${_v%/*} ;;
		*) continue ;;
		esac
		_paths=''
		for _p in /sys/block/*; do
			case ${_p##*/} in
			"${_d%n*}"c*n"${_d##*n}") [ -e "$_p/queue_depth" ] && _paths="$_paths ${_p##*/}" ;;
			esac
		done
		[ -n "$_paths" ] || continue
		_rd "$_sd/iopolicy"
		_old=$_v
		echo queue-depth > "$_sd/iopolicy" || continue
		vm_numastor check-qd check --json
		for _p in $_paths; do
			for _f in queue_depth numa_nodes; do
				_tf "/sys/block/$_p/$_f" path_attr "$_p" "$_f"
			done
		done > "$VM_OUT/qd.txt"
		_t iopolicy "${_sd##*/}" queue-depth >> "$VM_OUT/qd.txt"
		echo "$_old" > "$_sd/iopolicy"
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
	_vm_irqs_read 0
}

# Every IRQ of the machine with its counts (vm_irqs and per_cpu_count), one line each:
#   <irq> <actions> <smp_affinity_list> <effective_affinity_list> <per_cpu_count>
# A reading of where everything sits and whether it fired, for a machine whose full vm_truth
# (every queue and vector, managed-ness probed) takes seconds under TCG.
vm_irqs_counts() {
	_vm_irqs_read 1
}

# vm_irqs' reading, with each IRQ's per_cpu_count as a fifth field when $1 is 1.
_vm_irqs_read() {
	local _d _n _a _s _e
	for _d in /proc/irq/[0-9]*; do
		_n=${_d##*/}
		_rd "/sys/kernel/irq/$_n/actions"
		_a=$_v
		_rd "$_d/smp_affinity_list"
		_s=$_v
		_rd "$_d/effective_affinity_list"
		if [ "$1" = 1 ]; then
			_e=$_v
			_rd "/sys/kernel/irq/$_n/per_cpu_count"
			_t "$_n" "$_a" "$_s" "$_e" "$_v"
		else
			_t "$_n" "$_a" "$_s" "$_v"
		fi
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

# A copy of numastor's module-swap journal as $VM_OUT/NAME, when there is one.
vm_save_swap_journal() { # name
	if [ -e /var/lib/numastor/swap.json ]; then
		cp /var/lib/numastor/swap.json "$VM_OUT/$1"
	fi
}

# Seconds since boot (two decimals) into $_v.
vm_uptime() {
	_v=
	read -r _v _ < /proc/uptime
}

# --- module swap scenarios ----------------------------------------------------------------
# `numastor fix --modules` detaches disks and may bring them back under other names: these
# helpers find disks by identity, keep a pattern on them and read it back, and record what
# the scenario's expect.py needs as "KEY<tab>VALUE" lines in $VM_OUT/facts.txt (modswaplib.py).

VM_PATTERN_MB=4

# The patched modules must be in the initramfs (/vm/kmod, from tests/kmod/check-build.sh).
vm_need_kmod() {
	if [ ! -f /vm/kmod/modules/manifest.json ] || [ ! -f /vm/kmod/midlayer/manifest.json ] ||
		[ ! -f /vm/kmod/nvme-only/manifest.json ]; then
		echo "test bed: no patched modules in /vm/kmod (tests/kmod/check-build.sh did not build them)" >&2
		return 1
	fi
	# where nvme is built in (cloud-amd64) no nvme.ko is built, nor the broken copies made of it
	vm_builtin nvme && return 0
	# (a kernel that versions no symbol, 7.2, has no bad-CRC copy: faults/no-modversions says so)
	if [ ! -f /vm/kmod/prefix-modules/nvme.ko ] ||
		{ [ ! -f /vm/kmod/faults/sd_mod-badcrc.ko ] && [ ! -f /vm/kmod/faults/no-modversions ]; }; then
		echo "test bed: no patched modules in /vm/kmod (tests/kmod/check-build.sh did not build them)" >&2
		return 1
	fi
}

# One fact line (a later line of the same key wins on the host).
vm_fact() { # key value
	_t "$1" "$2" >> "$VM_OUT/facts.txt"
}

# The PCI function (bdf) of a disk into $_v (empty when it has none).
vm_disk_pci() { # disk
	local _dev
	_resolve "/sys/block/$1/device"
	_dev=$_v
	_v=
	if _pci_walk "$_dev"; then _v=${_pcidev##*/}; fi
	return 0
}

# Every NVMe controller's PCI function (the bed's two NVMe and the subsystem's two
# controllers), sorted and space-separated, into $_v.
vm_nvme_pcis() {
	local _c _all=
	for _c in /sys/class/nvme/nvme*; do
		[ -e "$_c/device" ] || continue
		_link_base "$_c/device"
		_all="$_all $_v"
	done
	_v=$(echo "$_all" | tr ' ' '\n' | sort | tr '\n' ' ')
	_v=${_v# }
	_v=${_v% }
}

# What a disk is, whatever its name, into $_v: the NVMe controller's serial; for SCSI the PCI
# function and the channel:target:lun below the host ("0000:82:00.0/2:0:0"); for others the
# PCI function.
vm_disk_id() { # disk
	local _hctl
	if [ -e "/sys/block/$1/device/serial" ]; then
		_rd "/sys/block/$1/device/serial"
		[ -n "$_v" ] && return 0
	fi
	_hctl=
	if [ -d "/sys/block/$1/device/scsi_disk" ]; then
		_link_base "/sys/block/$1/device"
		_hctl=/${_v#*:}
	fi
	vm_disk_pci "$1"
	_v=$_v$_hctl
}

# The disk whose identity (vm_disk_id) is $1 into $_v (empty when none).
vm_disk_with_id() { # id
	local _d _want="$1"
	for _d in $(vm_disks); do
		vm_disk_id "$_d"
		if [ "$_v" = "$_want" ]; then
			_v=$_d
			return 0
		fi
	done
	_v=
}

# The disk whose NVMe controller serial is $1 into $_v.
vm_disk_by_serial() { # serial
	vm_disk_with_id "$1"
}

# The SCSI host (hostN) whose driver is $1 (megaraid_sas, virtio_scsi) into $_v.
vm_scsi_host() { # proc_name
	local _h
	for _h in /sys/class/scsi_host/host*; do
		_rd "$_h/proc_name"
		if [ "$_v" = "$1" ]; then
			_v=${_h##*/}
			return 0
		fi
	done
	_v=
}

# The node-1 HBA's driver into $_v: megaraid_sas, or ahci where the kernel has none (the
# cloud flavour; run-vm.sh gives the disk to an ich9-ahci then).
vm_node1_hba_driver() {
	if vm_builtin megaraid_sas || vm_has_module megaraid_sas; then
		_v=megaraid_sas
	else
		_v=ahci
	fi
}

# The disk of the node-1 HBA (driver $1, its PCI function on node 1: q35's own ahci on the
# root bus drives no disk of the bed) into $_v.
vm_node1_hba_disk() { # driver
	local _d _pci
	for _d in $(vm_disks); do
		vm_disk_pci "$_d"
		_pci=$_v
		[ -n "$_pci" ] || continue
		_rd "/sys/bus/pci/devices/$_pci/numa_node"
		[ "$_v" = 1 ] || continue
		_link_base "/sys/bus/pci/devices/$_pci/driver"
		if [ "$_v" = "$1" ]; then
			_v=$_d
			return 0
		fi
	done
	_v=
}

# The SCSI host (hostN) a disk sits on into $_v.
vm_disk_host() { # disk
	_resolve "/sys/block/$1/device"
	_v=${_v%%/target*}
	_v=${_v##*/}
}

# The (first) disk on SCSI host $1 (hostN) into $_v.
vm_disk_on_host() { # hostN
	local _d _want="$1"
	for _d in $(vm_disks); do
		_resolve "/sys/block/$_d/device"
		case $_v in
		*"/$_want/"*) _v=$_d; return 0 ;;
		esac
	done
	_v=
}

# Write $VM_PATTERN_MB MiB of random data at the start of the disk with identity ID
# (O_DIRECT, fsync) and record its sha256 as fact pattern.ID.written.
vm_pattern_write() { # id
	local _d
	vm_disk_with_id "$1"
	_d=$_v
	[ -n "$_d" ] || { echo "vm_pattern_write: no disk $1" >&2; return 1; }
	dd if=/dev/urandom of=/tmp/pattern bs=1M count="$VM_PATTERN_MB" 2>/dev/null
	dd if=/tmp/pattern of="/dev/$_d" bs=1M oflag=direct conv=fsync 2>/dev/null
	# shellcheck disable=SC2046 # the first word is the sum
	set -- "$1" $(sha256sum /tmp/pattern)
	vm_fact "pattern.$1.written" "$2"
}

# Read the pattern back with O_DIRECT (never the page cache) from whichever disk has identity
# ID now and record its sha256 as fact pattern.ID.STEP ("no-disk" when none has).
vm_pattern_read() { # id step
	local _sum=no-disk
	vm_disk_with_id "$1"
	if [ -n "$_v" ] && [ -b "/dev/$_v" ]; then
		# shellcheck disable=SC2046 # the first word is the sum
		set -- "$1" "$2" $(dd if="/dev/$_v" bs=1M count="$VM_PATTERN_MB" iflag=direct 2>/dev/null | sha256sum)
		_sum=$3
	fi
	vm_fact "pattern.$1.$2" "$_sum"
}

# The state of one module as facts module.NAME.STEP.{state,taint,srcversion,holders}
# (state "absent" when it is not loaded).
vm_module_state() { # name step
	local _m="/sys/module/$1" _h _hs=
	if [ ! -d "$_m" ]; then
		vm_fact "module.$1.$2.state" absent
		return 0
	fi
	_rd "$_m/initstate"
	vm_fact "module.$1.$2.state" "${_v:-builtin}"
	_rd "$_m/taint"
	vm_fact "module.$1.$2.taint" "$_v"
	_v=
	[ -e "$_m/srcversion" ] && _rd "$_m/srcversion"
	vm_fact "module.$1.$2.srcversion" "$_v"
	for _h in "$_m"/holders/*; do
		[ -e "$_h" ] && _hs="$_hs ${_h##*/}"
	done
	vm_fact "module.$1.$2.holders" "${_hs# }"
}

# What a module swap may change, as facts for STEP: the MODULES' state, each PCI function's
# numa_node (pci.BDF.STEP.numa_node, "absent" when gone), every disk by identity
# (disk.ID.STEP = name, disk_path.ID.STEP / disk_ino.ID.STEP = its sysfs directory's path and
# kernfs inode, disks.STEP = the names), the journal and the kernel taint.
vm_swap_state() { # step "modules" "pci functions"
	local _m _p _d _id _names=
	for _m in $2; do
		vm_module_state "$_m" "$1"
	done
	for _p in $3; do
		_v=absent
		[ -e "/sys/bus/pci/devices/$_p/numa_node" ] && _rd "/sys/bus/pci/devices/$_p/numa_node"
		vm_fact "pci.$_p.$1.numa_node" "$_v"
	done
	for _d in $(vm_disks); do
		vm_disk_id "$_d"
		vm_fact "disk.$_v.$1" "$_d"
		# a re-probed disk has a new sysfs directory: another kernfs inode, and often another
		# path (SCSI host number, controller)
		_id=$_v
		_resolve "/sys/block/$_d"
		vm_fact "disk_path.$_id.$1" "${_v#/sys/devices/}"
		vm_fact "disk_ino.$_id.$1" "$(stat -c %i "$_v")"
		_names="$_names $_d"
	done
	vm_fact "disks.$1" "${_names# }"
	_v=absent
	[ -e /run/numastor/journal.json ] || [ -e /var/lib/numastor/swap.json ] && _v=present
	vm_fact "journal.$1" "$_v"
	# an integer sysctl answers only the first of busybox read's 1-byte reads
	vm_fact "tainted.$1" "$(cat /proc/sys/kernel/tainted)"
}

# numastor's module directory for the running kernel, filled with FILE... (root-owned,
# directories 0755, files 0644), replacing what was there; its path into $_v.
vm_module_dir() { # file...
	local _dir _p
	_rd /proc/sys/kernel/osrelease
	_dir=/var/lib/numastor/modules/$_v
	rm -rf "$_dir"
	mkdir -p "$_dir"
	# the initramfs's / is 1777 (the archive has no entry for it)
	for _p in / /var /var/lib /var/lib/numastor /var/lib/numastor/modules "$_dir"; do
		chown 0:0 "$_p"
		chmod 0755 "$_p"
	done
	cp "$@" "$_dir/"
	chown 0:0 "$_dir"/*
	chmod 0644 "$_dir"/*
	_v=$_dir
}

# The pid of the (first) task whose comm is $1 into $_v (empty when none).
vm_pid_of() { # comm
	local _p
	for _p in /proc/[0-9]*; do
		_rd "$_p/comm" 2>/dev/null || continue
		if [ "$_v" = "$1" ]; then
			_v=${_p#/proc/}
			return 0
		fi
	done
	_v=
}

# Run a shell command pinned to CPU $1 and record the pid of the shell that ran it as fact
# NAME.pid (a write to sysfs allocates in the writer's context).
vm_on_cpu() { # cpu name command
	taskset -c "$1" sh -c "echo \$\$ > /tmp/on-cpu.pid; $3"
	_rd /tmp/on-cpu.pid
	vm_fact "$2.pid" "$_v"
}

# The alloc_traces line (slub_debug=U) of one cache whose caller is FUNC and whose objects
# task PID allocated, as fact alloc.NAME = "cpus=… nodes=…" ("none" when there is none).
# Traces with identical stacks merge; the pid range tells a rescan's own line apart. With a
# MARKER the line is instead the one whose call stack holds MARKER (a function name), whatever
# its pid: a scan that runs in a kernel worker (libata's ata_scsi_hotplug) has no pid to name.
# (grep, awk: the file has thousands of lines, too many for busybox read's 1-byte reads under
# TCG.)
vm_alloc_trace() { # cache func pid name [marker]
	local _line='' _c _f
	for _c in "$1" /sys/kernel/slab/kmalloc-*; do
		# the object's size class differs by kernel (5.10's scsi_device is a kmalloc-2k): any
		# kmalloc cache's line for that call and pid
		_f=$(vm_slab_file "${_c##*/}")
		if [ -n "${5:-}" ]; then
			_line=$(awk -v f="$2" -v m="$5" '/^ *[0-9]+ /{ head = $0 }
				index($0, m) && head ~ ("^ *[0-9]+ " f "[+]") { print head; exit }' "$_f" 2>/dev/null)
		else
			_line=$(grep -E "^ *[0-9]+ $2\+.* pid=$3 " "$_f" 2>/dev/null | head -n 1)
		fi
		[ -z "$_line" ] || break
	done
	if [ -n "$_line" ]; then
		vm_fact "alloc.$4" "cpus=${_line##* cpus=}"
	else
		vm_fact "alloc.$4" none
	fi
}

# Where the kernel lists a slab cache's live objects by allocation site: debugfs alloc_traces
# (5.16 on: per call stack), else the SLUB sysfs alloc_calls of older kernels (5.10: per call
# site alone, so every live object of one site is one line).
vm_slab_file() { # cache
	if [ -e "/sys/kernel/debug/slab/$1/alloc_traces" ]; then
		echo "/sys/kernel/debug/slab/$1/alloc_traces"
	else
		echo "/sys/kernel/slab/$1/alloc_calls"
	fi
}

# A copy of one slab cache's alloc_traces as $VM_OUT/slab-CACHE-STEP.txt (for a failure's report).
vm_slab_traces() { # cache step
	cp "$(vm_slab_file "$1")" "$VM_OUT/slab-$1-$2.txt" 2>/dev/null ||
		echo "unreadable" > "$VM_OUT/slab-$1-$2.txt"
}

# What this kernel shows about interrupts, NVMe and module references, as it shows it, into
# $VM_OUT/kernel-facts.txt (`key<TAB>value`); tests/vm/README.md's per-kernel tables are made
# of these. Run last: it writes a PCI function's numa_node, which taints the kernel.
vm_kernel_facts() {
	local _o="$VM_OUT/kernel-facts.txt" _n _a _io='' _adm='' _names='' _err _head _t0 _t1 _f
	echo "release	$(uname -r)" > "$_o"
	for _n in $(cd /sys/kernel/irq && echo *); do
		_rd "/sys/kernel/irq/$_n/actions"
		_a=$_v
		case $_a in
		nvme0q0) _adm=$_n ;;
		nvme0q1) _io=$_n ;;
		esac
		case $_a in nvme0q*) _names="$_names $_a" ;; esac
	done
	echo "nvme0 vectors	${_names# }" >> "$_o"
	for _n in "io:$_io" "admin:$_adm"; do
		[ -n "${_n#*:}" ] || continue
		echo "smp_affinity mode of nvme0 ${_n%%:*} vector	$(stat -c %a "/proc/irq/${_n#*:}/smp_affinity")" >> "$_o"
		_rd "/proc/irq/${_n#*:}/smp_affinity_list"
		if { echo "$_v" > "/proc/irq/${_n#*:}/smp_affinity_list"; } 2>/tmp/.kf-err; then
			_err=accepted
		else
			_err=$(sed 's/.*: //' /tmp/.kf-err)
		fi
		echo "writing its own smp_affinity_list back to the nvme0 ${_n%%:*} vector	$_err" >> "$_o"
		if [ -d /sys/kernel/debug/irq/irqs ]; then
			echo "debugfs irqs/N of the nvme0 ${_n%%:*} vector	$(grep -o 'IRQD_[A-Z_]*' "/sys/kernel/debug/irq/irqs/${_n#*:}" | tr '\n' ' ')" >> "$_o"
		fi
	done
	if [ -d /sys/kernel/debug/irq/irqs ]; then
		echo "/sys/kernel/debug/irq (CONFIG_GENERIC_IRQ_DEBUGFS)	present" >> "$_o"
	else
		echo "/sys/kernel/debug/irq (CONFIG_GENERIC_IRQ_DEBUGFS)	absent" >> "$_o"
	fi
	echo "cpu/nohz_full	$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null || echo '(no file)')" >> "$_o"
	# does holding a multipath head open take a reference on nvme.ko?
	_head=
	for _f in /sys/block/nvme*n*; do
		_resolve "$_f"
		case $_v in */nvme-subsystem/*) _head=${_f##*/}; break ;; esac
	done
	if vm_builtin nvme; then
		echo "nvme.ko reference taken by an open multipath head	nvme is built in" >> "$_o"
	elif [ -n "$_head" ]; then
		read -r _t0 < /sys/module/nvme/refcnt
		exec 3< "/dev/$_head"
		read -r _t1 < /sys/module/nvme/refcnt
		exec 3<&-
		echo "nvme.ko reference taken by an open multipath head	refcnt $_t0 -> $_t1 with /dev/$_head open" >> "$_o"
	fi
	# an operator's numa_node store on a root-bus NVMe function
	for _f in /sys/bus/pci/drivers/nvme/0000:00:*; do
		[ -e "$_f/numa_node" ] || continue
		_t0=$(cat /proc/sys/kernel/tainted)
		echo 0 > "$_f/numa_node" 2>/dev/null || :
		_t1=$(cat /proc/sys/kernel/tainted)
		echo "tainted after writing 0 to a PCI function's numa_node	$_t0 -> $_t1 ($(dmesg | grep -o 'Overriding NUMA node.*' | tail -n 1))" >> "$_o"
		break
	done
}

# --- CPU isolation scenarios (isolation-boot, isolation-cgroup) -------------------------------
# What the kernel itself says about isolated CPUs, read in the guest; the scenarios' expect.py
# (scenarios/isolation-boot/isolib.py) hold numastor's `machine.isolation`, its isolation
# findings and fix's plan to it.

VM_CGROUP=/sys/fs/cgroup

# Mount cgroup2 at $VM_CGROUP unless something is mounted there already (the initramfs
# mounts none; a systemd machine has it there).
vm_cgroup2_mount() {
	grep -q "^[^ ]* $VM_CGROUP " /proc/mounts || mount -t cgroup2 cgroup2 "$VM_CGROUP"
}

# The kernel's word on CPU isolation, one "KEY<TAB>VALUE" line each, on stdout:
#   cmdline                        /proc/cmdline
#   cpu.online, cpu.isolated, cpu.nohz_full    /sys/devices/system/cpu/* ("(no file)" when
#                                  the kernel has none: nohz_full without CONFIG_NO_HZ_FULL)
#   cgroup2.mount                  where cgroup2 is mounted ("none")
#   cgroup.controllers             the root's cgroup.controllers
#   cgroup.root.cpus_isolated      the root's cpuset.cpus.isolated ("(no file)": before 6.7)
#   cgroup.root.cpus_effective     the root's cpuset.cpus.effective
#   cgroup.partition.REL, cgroup.effective.REL   cpuset.cpus.partition and
#                                  cpuset.cpus.effective of every cgroup below the root (REL
#                                  its path below the mount) that has them
# (cat, not read: a few files, and kernfs's seq files answer either way)
vm_isolation_truth() {
	local _f _mp='' _dev _dir _type _rest _d _rel
	_t cmdline "$(cat /proc/cmdline)"
	for _f in online isolated nohz_full; do
		if [ -e "/sys/devices/system/cpu/$_f" ]; then
			_t "cpu.$_f" "$(cat "/sys/devices/system/cpu/$_f")"
		else
			_t "cpu.$_f" "(no file)"
		fi
	done
	while read -r _dev _dir _type _rest; do
		if [ "$_type" = cgroup2 ]; then
			_mp=$_dir
			break
		fi
	done < /proc/mounts
	_t cgroup2.mount "${_mp:-none}"
	[ -n "$_mp" ] || return 0
	_t cgroup.controllers "$(cat "$_mp/cgroup.controllers")"
	for _f in isolated effective; do
		if [ -e "$_mp/cpuset.cpus.$_f" ]; then
			_t "cgroup.root.cpus_$_f" "$(cat "$_mp/cpuset.cpus.$_f")"
		else
			_t "cgroup.root.cpus_$_f" "(no file)"
		fi
	done
	# (the root has no cpuset.cpus.partition)
	find "$_mp" -name cpuset.cpus.partition | while read -r _d; do
		_d=${_d%/*}
		_rel=${_d#"$_mp"/}
		_t "cgroup.partition.$_rel" "$(cat "$_d/cpuset.cpus.partition")"
		_t "cgroup.effective.$_rel" "$(cat "$_d/cpuset.cpus.effective")"
	done
}

# Make cgroup NAME below $VM_CGROUP a cpuset partition of TYPE (isolated, root) holding CPUS:
# +cpuset into the root's cgroup.subtree_control, cpuset.cpus, then cpuset.cpus.partition,
# read back. Facts cgroup.NAME.partition (what the kernel reads back, e.g. "isolated invalid
# (...)" with its reason) and cgroup.NAME.partition_write (the write's error, "ok"); returns 1,
# saying why on stderr, when the kernel did not make it.
vm_cpuset_partition() { # name cpus type
	local _d="$VM_CGROUP/$1" _err=ok
	case " $(cat "$VM_CGROUP/cgroup.controllers") " in
	*" cpuset "*) ;;
	*)
		echo "no cpuset controller on cgroup2 (cgroup.controllers: $(cat "$VM_CGROUP/cgroup.controllers"))" >&2
		return 1
		;;
	esac
	echo +cpuset > "$VM_CGROUP/cgroup.subtree_control"
	mkdir -p "$_d"
	echo "$2" > "$_d/cpuset.cpus"
	if ! { echo "$3" > "$_d/cpuset.cpus.partition"; } 2>/tmp/.part-err; then
		_err=$(cat /tmp/.part-err)
	fi
	vm_fact "cgroup.$1.partition_write" "$_err"
	_v=$(cat "$_d/cpuset.cpus.partition")
	vm_fact "cgroup.$1.partition" "$_v"
	vm_fact "cgroup.$1.cpus_effective" "$(cat "$_d/cpuset.cpus.effective")"
	if [ "$_v" != "$3" ]; then
		echo "the kernel did not make $_d an $3 partition of CPUs $2: cpuset.cpus.partition reads '$_v' (write: $_err)" >&2
		return 1
	fi
}

# The CPUs blk-mq maps to each hardware queue, as the kernel links them: the cpuN directory of
# every software context under /sys/block/DISK/mq/N/ (isolated CPUs included, which blk-mq
# leaves out of cpu_list from 6.9 on), every disk (hidden NVMe paths too), one line each:
#   hctx_cpus <disk> <index> <cpu,cpu,...>
vm_hctx_cpus() {
	local _q _c _l _d
	for _q in /sys/block/*/mq/*; do
		[ -d "$_q" ] || continue
		_l=
		for _c in "$_q"/cpu[0-9]*; do
			[ -d "$_c" ] && _l="$_l,${_c##*/cpu}"
		done
		_d=${_q%/mq/*}
		_t hctx_cpus "${_d##*/}" "${_q##*/}" "${_l#,}"
	done
}

# Make every NVMe controller's admin vector fire (reads fire only the I/O queues'): a namespace
# rescan sends Identify commands down the admin queue. Waits a second for the scans.
vm_fire_admin() {
	local _c
	for _c in /sys/class/nvme/nvme*; do
		[ -e "$_c/rescan_controller" ] && echo 1 > "$_c/rescan_controller"
	done
	sleep 1
}

# Take CPU $1 offline and back online (the kernel moves the vectors that sat on it and brings
# its queues back); facts cpuN.offline / cpuN.online say what each write did.
vm_cpu_cycle() { # cpu
	local _f="/sys/devices/system/cpu/cpu$1/online"
	echo 0 > "$_f"
	vm_fact "cpu$1.offline" "$(cat "$_f")"
	echo 1 > "$_f"
	vm_fact "cpu$1.online" "$(cat "$_f")"
}

# The isolation scenarios' round, after their own setup: managed-ness probed by writing each
# vector's affinity back (vm_truth), every vector fired so the round reads settled affinities,
# the check round, fix --dry-run and fix with every IRQ read around each, the disks fired again
# (a move takes effect at the vector's next interrupt: x86 without interrupt remapping), a
# second check, --revert, and the disks fired once more.
vm_isolation_fix_round() {
	vm_truth > "$VM_OUT/probe.txt"
	vm_fire_disks
	vm_fire_admin
	vm_check_round
	vm_irqs > "$VM_OUT/irqs-before.txt"
	vm_numastor dryrun fix --dry-run --json
	vm_irqs > "$VM_OUT/irqs-dryrun.txt"
	vm_numastor fix fix --json
	vm_irqs > "$VM_OUT/irqs-fix.txt"
	vm_truth > "$VM_OUT/after-fix.txt"
	vm_save_journal journal-fix.json
	# a move takes effect at the vector's next interrupt (x86 without interrupt remapping)
	vm_fire_disks
	vm_fire_admin
	vm_truth > "$VM_OUT/after-io-before.txt"
	vm_numastor afterfix check --json
	vm_truth > "$VM_OUT/after-io.txt"
	vm_numastor revert fix --revert --json
	vm_irqs > "$VM_OUT/irqs-revert.txt"
	vm_truth > "$VM_OUT/after-revert.txt"
	vm_save_journal journal-revert.json
	vm_fire_disks
}

# --- numastor trace (issue 34): its figures against the kernel's own counters ------------------
# A disk with one hardware queue whose one vector user space may move (the node-1 HBA's:
# megasas-gen2, or ich9-ahci on the cloud flavour) is arranged per window: its vector placed on
# a CPU of one node (smp_affinity_list), queue/rq_affinity 1 (the default: the completion
# follows the submitter to another LLC) or 0 (it stays where the interrupt raised it), and
# O_DIRECT reads pinned with taskset to CPUs of either node while `numastor trace -j` runs in
# the background. Around every read step the guest reads what the kernel counts itself: the
# disk's /sys/block/X/stat (requests), the vector's per_cpu_count (where the interrupt fired),
# /proc/softirqs' BLOCK row (where a softirq completion ran: a single-queue device completes in
# BLOCK softirq on the interrupt's CPU, or on the submitter's after an IPI) and /proc/interrupts'
# CAL row (function-call IPIs). tests/vm/tracecheck.py holds trace's JSON to them. Records in
# $VM_OUT/trace.txt, tab-separated:
#   window W KEY VALUE          the arrangement (disks, irqs, irq_cpu, rq_affinity, end, seconds)
#                               and its outcome (rc, elapsed)
#   step W K DISK CPU COUNT     read step K: COUNT 4 KiB reads of DISK pinned to CPU
#   read W WHEN WHAT VALUE      a counter at WHEN (start, end, K.before, K.after); WHAT: stat.DISK,
#                               irq.N (per_cpu_count), softirq_block, cal (space-separated per CPU)
#   bpf KEY VALUE               the kernel's word on BPF (btf, program types, lockdown)
# and `bpftool -j prog show` listings as bpf-progs-WHEN.json.

VM_TRACE=$VM_OUT/trace.txt

# The BLOCK softirq and CAL counts per CPU (space-separated) into $_sb and $_cal.
_vm_trace_cpu_counts() {
	local _name _rest
	_sb='' _cal=''
	while read -r _name _rest; do
		case $_name in
		BLOCK:) _sb=$_rest ;;
		esac
	done < /proc/softirqs
	_cal=$(grep '^ *CAL:' /proc/interrupts)
	# shellcheck disable=SC2086 # "CAL: n n n n Function call interrupts": the numbers
	set -- $_cal
	shift
	_cal=
	while [ $# -gt 0 ]; do
		case $1 in [0-9]*) _cal="$_cal $1" ;; *) break ;; esac
		shift
	done
	_cal=${_cal# }
}

# Every counter of window W at WHEN (vm_trace_window's disks and vectors).
_vm_trace_read() { # window when
	local _d _i
	for _d in $_tdisks; do
		_rd "/sys/block/$_d/stat"
		_t read "$1" "$2" "stat.$_d" "$_v"
	done
	for _i in $_tirqs; do
		_rd "/sys/kernel/irq/$_i/per_cpu_count"
		_t read "$1" "$2" "irq.$_i" "$_v"
	done
	_vm_trace_cpu_counts
	_t read "$1" "$2" softirq_block "$_sb"
	_t read "$1" "$2" cal "$_cal"
}

# The BPF links process $1 holds into $_v (numastor trace's attached programs: four, one per
# tracepoint, contract of issue 34).
_vm_bpf_links() { # pid
	# shellcheck disable=SC2010 # the links' targets (anon_inode:bpf_link), one fork for all
	_v=$(ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'bpf[-_]link') || :
}

# Wait until process $1 holds 4 BPF links (at most $2 seconds); 1 when it ended or ran out of time.
_vm_trace_attached() { # pid seconds
	local _left=$(($2 * 10)) _s
	while [ "$_left" -gt 0 ]; do
		_s=
		{ read -r _ _ _s _ < "/proc/$1/stat"; } 2>/dev/null || :
		case $_s in '' | Z | X) return 1 ;; esac
		_vm_bpf_links "$1"
		[ "$_v" -ge 4 ] && return 0
		sleep 0.1
		_left=$((_left - 1))
	done
	return 1
}

# The kernel's list of loaded BPF programs, as bpftool prints it in JSON, into
# $VM_OUT/bpf-progs-WHEN.json (and its links into bpf-links-WHEN.json).
vm_bpf_progs() { # when
	bpftool -j prog show > "$VM_OUT/bpf-progs-$1.json" 2> "$VM_OUT/bpf-progs-$1.err" || :
	bpftool -j link show > "$VM_OUT/bpf-links-$1.json" 2> /dev/null || :
}

# The ids of the loaded BPF programs (space-separated) into $_v.
_vm_bpf_ids() {
	_v=$(bpftool prog show 2>/dev/null | sed -n 's/^\([0-9][0-9]*\): .*/\1/p' | tr '\n' ' ')
}

# Wait (at most $2 seconds) until the loaded programs' ids are $1 again: the kernel releases
# a dead process's links in a work item and their programs after an RCU grace period (7.2
# under TCG listed a tp_btf program for a moment after the kill, its link already gone).
# Prints the seconds it took, or "never".
_vm_bpf_settle() { # ids seconds
	local _left=$(($2 * 10)) _t0
	vm_uptime
	_t0=$_v
	while :; do
		_vm_bpf_ids
		if [ "$_v" = "$1" ]; then
			vm_uptime
			echo "$_t0 $_v" | awk '{ printf "%.2f\n", $2 - $1 }'
			return 0
		fi
		[ "$_left" -gt 0 ] || break
		sleep 0.1
		_left=$((_left - 1))
	done
	echo never
}

# One trace window W: the node-1 HBA's vector on IRQCPU, its rq_affinity RQ, then
# `numastor trace -d SECONDS -j DISKS` in the background and, once it has attached, each read
# step "DISK:CPU:COUNT" in turn with the counters read around it; END says how the window
# ends: natural (its -d), INT or TERM (that signal once the reads are done), KILL (kill -9
# with bpftool's program list read before, while it runs and after). trace's output goes to
# trace-W.{out,err,rc}.
vm_trace_window() { # window end seconds irqcpu rq "disks" "steps"
	local _w="$1" _end="$2" _secs="$3" _pid _rc=0 _k=0 _s _d _c _n _t0 _t1 _i _ids
	_tdisks=$6
	_irqs=
	for _d in $_tdisks; do
		vm_disk_pci "$_d"
		_fn_irqs "/sys/bus/pci/devices/$_v"
	done
	_tirqs=${_irqs# }
	for _i in $_hba_irqs; do
		echo "$4" > "/proc/irq/$_i/smp_affinity_list"
	done
	echo "$5" > "/sys/block/$_hba/queue/rq_affinity"
	# a new affinity takes effect at the vector's next interrupt (x86 without interrupt
	# remapping): one read before the window moves it
	dd if="/dev/$_hba" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null
	_t window "$_w" disks "$6"
	_t window "$_w" end "$_end"
	_t window "$_w" seconds "$_secs"
	_t window "$_w" hba "$_hba"
	_t window "$_w" hba_irqs "$_hba_irqs"
	_rd "/proc/irq/${_hba_irqs%% *}/smp_affinity_list"
	_t window "$_w" irq_affinity "$_v"
	_rd "/sys/block/$_hba/queue/rq_affinity"
	_t window "$_w" rq_affinity "$_v"
	_vm_bpf_ids
	_ids=$_v
	[ "$_end" != KILL ] || vm_bpf_progs "$_w-before"
	_vm_trace_read "$_w" start
	vm_uptime
	_t0=$_v
	# (-v: the verifier's log on stderr should the kernel refuse the program)
	# shellcheck disable=SC2086 # one argument per disk
	/usr/bin/numastor trace -v -d "$_secs" -j $_tdisks > "$VM_OUT/trace-$_w.out" 2> "$VM_OUT/trace-$_w.err" &
	_pid=$!
	if _vm_trace_attached "$_pid" 120; then
		vm_uptime
		_t window "$_w" attached_after "$_v"
		for _s in $7; do
			_k=$((_k + 1))
			_d=${_s%%:*} _n=${_s##*:} _c=${_s#*:}
			_c=${_c%%:*}
			_t step "$_w" "$_k" "$_d" "$_c" "$_n"
			_vm_trace_read "$_w" "$_k.before"
			taskset -c "$_c" dd if="/dev/$_d" of=/dev/null bs=4096 count="$_n" iflag=direct 2>/dev/null
			_vm_trace_read "$_w" "$_k.after"
		done
		case $_end in
		INT | TERM) kill -"$_end" "$_pid" ;;
		KILL)
			vm_bpf_progs "$_w-during"
			_vm_bpf_links "$_pid"
			_t window "$_w" links_during "$_v"
			kill -KILL "$_pid"
			;;
		esac
	else
		_t window "$_w" attached_after never
		kill -KILL "$_pid" 2>/dev/null || :
	fi
	wait "$_pid" || _rc=$?
	vm_uptime
	_t1=$_v
	_vm_trace_read "$_w" end
	# however it ended, the kernel's programs are the ones from before within 15 s
	_t window "$_w" programs_gone_after "$(_vm_bpf_settle "$_ids" 15)"
	[ "$_end" != KILL ] || vm_bpf_progs "$_w-after"
	_t window "$_w" rc "$_rc"
	_t window "$_w" elapsed "$_t0 $_t1"
	echo "$_rc" > "$VM_OUT/trace-$_w.rc"
}

# The trace round: the kernel's word on BPF, a refusal with BTF hidden, four windows (the
# vector on node 1 / node 0, rq_affinity 1 / 0, reads from both nodes; the node-1 NVMe's
# per-CPU managed queues beside it in the first) and a kill -9 mid-window. The CPUs are the
# stock machine's (run-vm.sh: 0-1 on node 0, 2-3 on node 1; tracecheck.py takes each CPU's
# node from the kernel's node cpulists in truth.txt and checks each arrangement is what it
# says). The HBA's vector and rq_affinity are put back at the end.
vm_trace_round() {
	local _aff _rq _c _rc _name _rest
	vm_uptime
	_t round start "$_v" >> "$VM_TRACE"
	grep -q ' /sys/kernel/security ' /proc/mounts || mount -t securityfs securityfs /sys/kernel/security || :
	{
		if [ -e /sys/kernel/btf/vmlinux ]; then _t bpf btf present; else _t bpf btf absent; fi
		_rd /sys/kernel/security/lockdown
		_t bpf lockdown "${_v:-(no file)}"
		# BPF_PROG_TYPE_TRACING (tp_btf) as the kernel's own type information names it: an
		# enumerator of enum bpf_prog_type in its BTF (bpftool's feature probe, which loads a
		# program of every type, took 3.4 s under TCG)
		if grep -q BPF_PROG_TYPE_TRACING /sys/kernel/btf/vmlinux 2>/dev/null; then
			_t bpf prog_type.TRACING in-btf
		else
			_t bpf prog_type.TRACING absent
		fi
	} >> "$VM_TRACE"
	vm_node1_hba_driver
	vm_node1_hba_disk "$_v"
	_hba=$_v
	vm_node1_hba_disk nvme
	_nvme=$_v
	if [ -z "$_hba" ] || [ -z "$_nvme" ]; then
		echo "test bed: no node-1 HBA disk ($_hba) or node-1 NVMe ($_nvme) to trace" >&2
		return 1
	fi
	vm_disk_pci "$_hba"
	_irqs=
	_fn_irqs "/sys/bus/pci/devices/$_v"
	_hba_irqs=${_irqs# }
	_rd "/proc/irq/${_hba_irqs%% *}/smp_affinity_list"
	_aff=$_v
	_rd "/sys/block/$_hba/queue/rq_affinity"
	_rq=$_v
	# no BTF: /sys/kernel/btf hidden under an empty tmpfs; trace must refuse (exit 3) and load
	# nothing
	vm_bpf_progs nobtf-before
	vm_uptime
	_t round nobtf_start "$_v" >> "$VM_TRACE"
	mount -t tmpfs -o size=1m nobtf /sys/kernel/btf
	_rc=0
	/usr/bin/numastor trace -d 1 -j "$_hba" > "$VM_OUT/trace-nobtf.out" 2> "$VM_OUT/trace-nobtf.err" || _rc=$?
	echo "$_rc" > "$VM_OUT/trace-nobtf.rc"
	umount /sys/kernel/btf
	vm_bpf_progs nobtf-after
	# (a) vector on node 1, reads from node 0 (IRQ remote) and from node 1 (all local); the
	# node-1 NVMe read from node 0 (its managed vector fires on the submitter: local); rq 1;
	# the window ends by itself
	{
		vm_trace_window w1 natural 3 2 1 "$_hba $_nvme" "$_hba:0:200 $_hba:3:100 $_nvme:1:150"
		# (b) vector on node 0, reads from node 1 (IRQ remote) and node 0; rq 1; ended by SIGINT
		vm_trace_window w2 INT 60 0 1 "$_hba" "$_hba:2:200 $_hba:1:100"
		# rq_affinity 0: the completion stays on the vector's CPU: vector on node 1, reads from
		# node 0 (completed remote) and node 1; ended by SIGTERM
		vm_trace_window w3 TERM 60 2 0 "$_hba" "$_hba:0:200 $_hba:3:100"
		# rq_affinity 0, vector on node 0, reads from node 1 (completed remote) and node 0
		vm_trace_window w4 INT 60 0 0 "$_hba" "$_hba:3:200 $_hba:0:100"
		# kill -9 mid-window: the kernel's program list before, during and after
		vm_trace_window kill KILL 60 2 1 "$_hba" "$_hba:0:50"
	} >> "$VM_TRACE"
	# put the disk back as it was
	for _c in $_hba_irqs; do echo "$_aff" > "/proc/irq/$_c/smp_affinity_list"; done
	echo "$_rq" > "/sys/block/$_hba/queue/rq_affinity"
	vm_uptime
	_t round end "$_v" >> "$VM_TRACE"
}
