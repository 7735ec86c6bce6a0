#!/bin/bash
# Run the real-kernel VM test bed: every scenario under tests/vm/scenarios/ on Debian's 6.1,
# and the kernel-matrix scenarios on each other kernel line, one boot each.
#
#   run-all.sh [NUMASTOR]        (default: build/numastor)
#   run-all.sh --prepare         only what needs no numastor binary, into the cache: the kernels,
#                                the patched modules, the Debian image, irqbalance, udev, mdadm
#                                (tests/run-all.sh runs it in the background while it builds and
#                                tests; the run after it finds them ready)
#
# Environment: NUMASTOR_SKIP_VM=1 skips the suite (explicitly; otherwise a missing qemu is
# a failure); NUMASTOR_VM_KERNELS="5.10 6.1 6.12 6.12-cloud 7.2" (the default) are the kernel lines,
# each fetched once into the cache (fetch-kernel.sh); NUMASTOR_VM_SCENARIOS="stock nonroot"
# runs only those, on every line; NUMASTOR_VM_CACHE moves the kernel cache; NUMASTOR_VM_KEEP=1
# keeps the work directory even when all pass.
# Prints one line per scenario with its kernel line and time (PASS 6.12 stock (21.3s)) and a
# final "N passed, N failed".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Every scenario but the benchmarks (a file `manual` in the scenario: they print figures and
# run only when named in NUMASTOR_VM_SCENARIOS).
all_scenarios() {
	local s
	for s in "$VM_DIR"/scenarios/*/guest.sh; do
		[[ -f "$(dirname "$s")/manual" ]] || basename "$(dirname "$s")"
	done
}

# The scenarios of the kernel matrix: what every line runs (6.1, Debian 12's own, runs all).
MATRIX_SCENARIOS="stock prefix-nvme irqaffinity0 nonroot fix-irqaffinity0 fix-killed-revert modswap-nvme modswap-scsi modswap-scsi-host"
# The cloud flavour builds nvme in: no pre-fix nvme.ko can load, so prefix-nvme (which shows
# what that module does) has nothing to run; modswap-nvme shows there that the built-in nvme
# is left alone and an nvme.ko offered for it refused. It has no megaraid_sas: run-vm.sh gives
# the node-1 HBA's disk to an ich9-ahci, which the fix scenarios move and modswap-scsi(-host) measure.
CLOUD_SCENARIOS="stock irqaffinity0 nonroot fix-irqaffinity0 fix-killed-revert modswap-nvme modswap-scsi modswap-scsi-host"

# The server-shaped machine (scenarios/server: 16 of 24 possible CPUs, SMT, two sockets) runs on
# 6.1 (with all) and on 6.12, Debian 12's and Debian 13's kernels: one boot each, 28-92 s under
# TCG (measured).
SERVER_LINES="6.1 6.12"
# The CPU isolation scenarios (isolcpus= at boot, a cgroup v2 isolated partition) run on the same
# two: 6.12 reads the root's cpuset.cpus.isolated (6.7 on), 6.1 walks the partitions; 5.10 has no
# isolated partitions. 23-42 s a boot (measured).
SERVER_SCENARIOS="server isolation-boot isolation-cgroup"

kernels=${NUMASTOR_VM_KERNELS:-5.10 6.1 6.12 6.12-cloud 7.2}
for k in $kernels; do
	(vm_line "$k") || exit 1
done

# The scenarios of LINE: NUMASTOR_VM_SCENARIOS when set, else all on 6.1 and the matrix's
# elsewhere (and the server machine's on the SERVER_LINES).
line_scenarios() {
	if [[ -n "${NUMASTOR_VM_SCENARIOS:-}" ]]; then
		echo "$NUMASTOR_VM_SCENARIOS"
	elif [[ $1 == 6.1 ]]; then
		all_scenarios | tr '\n' ' '
	elif [[ $1 == *-cloud ]]; then
		echo "$CLOUD_SCENARIOS"
	elif [[ " $SERVER_LINES " == *" $1 "* ]]; then
		echo "$MATRIX_SCENARIOS $SERVER_SCENARIOS"
	else
		echo "$MATRIX_SCENARIOS"
	fi
}

count_all() {
	local k n=0
	for k in $kernels; do
		n=$((n + $(line_scenarios "$k" | wc -w)))
	done
	echo "$n"
}

if [[ "${NUMASTOR_SKIP_VM:-0}" == 1 ]]; then
	n=$(count_all)
	echo "vm: skipped ($n scenarios on $kernels) because NUMASTOR_SKIP_VM=1"
	echo "0 passed, 0 failed, $n skipped"
	exit 0
fi

# A failure before any scenario ran still ends with the summary line.
fatal() {
	vm_log "error: $*"
	echo "0 passed, $(count_all) failed"
	exit 1
}

prepare_only=0
if [[ ${1:-} == --prepare ]]; then
	prepare_only=1
	shift
fi
numastor=$(realpath -m "${1:-$SRC_ROOT/build/numastor}")
[[ -x "$numastor" ]] || ((prepare_only)) ||
	fatal "numastor binary $numastor not found (build it: meson setup build && ninja -C build)"

# qemu must run and know the devices the machine is made of.
if ! command -v qemu-system-x86_64 >/dev/null; then
	fatal "qemu-system-x86_64 not found: the VM tests cannot run (apt-get install qemu-system-x86; NUMASTOR_SKIP_VM=1 skips them)"
fi
devices=$(qemu-system-x86_64 -device help 2>&1) ||
	fatal "qemu-system-x86_64 cannot run: $devices"
for d in pxb-pcie pcie-root-port nvme megasas-gen2 virtio-scsi-pci virtio-blk-pci scsi-hd; do
	grep -q "\"$d\"" <<<"$devices" || fatal "this qemu lacks the $d device: the VM tests cannot run"
done

# irqbalance only matters to the irqbalance-policy scenario, which fails on its own without it.
"$VM_DIR/fetch-irqbalance.sh" >/dev/null || vm_log "warning: preparing irqbalance failed"
# Debian's udev likewise only matters to modswap-udev.
"$VM_DIR/fetch-udev.sh" >/dev/null || vm_log "warning: preparing udev failed (modswap-udev will fail)"
# Debian's mdadm only to md-cross-node.
"$VM_DIR/fetch-mdadm.sh" >/dev/null || vm_log "warning: preparing mdadm failed (md-cross-node will fail)"
work=$(mktemp -d "${TMPDIR:-/tmp}/numastor-vm.XXXXXX")

# One scenario's boots: one of the bed's initramfs, or (a `boots` file) that many of the
# Debian image, sharing one disk.
boot_scenario() { # name scenario-dir outdir append timeout (of each boot) initramfs
	if [[ -f "$2/boots" ]]; then
		"$VM_DIR/run-image.sh" --boots "$(<"$2/boots")" --append "$4" --timeout "$5" "$numastor" "$1" "$3"
	else
		"$VM_DIR/run-vm.sh" --append "$4" --timeout "$5" "$6" "$1" "$3"
	fi
}

passed=0 failed=0 any_retry=0
# Scenarios run NUMASTOR_VM_JOBS at a time (default: 2 on a machine with two CPUs or more, else
# 1): a TCG guest keeps one host CPU busy, so two at once halve the bed's time on two cores.
# Each scenario has its own disks, work and output directories; the image scenario's disk is an
# overlay of its own. Lines print as the scenarios end.
jobs=${NUMASTOR_VM_JOBS:-$(($(nproc 2>/dev/null || echo 1) >= 2 ? 2 : 1))}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || fatal "NUMASTOR_VM_JOBS takes a number of guests at once, not '$jobs'"

# What a failed preparation step printed (the last 20 lines), and when it printed nothing, why
# that may be: its exit status (a signal's name) and the free space of the file systems the bed
# writes to. On stdout, with the FAIL lines.
step_failed() { # what status log
	local what=$1 status=$2 log=$3 d
	echo "    $what: exit status $status$( ((status > 128)) && echo " (signal $(kill -l $((status - 128)) 2>/dev/null))")"
	if [[ -s $log ]]; then
		sed 's/^/    /' "$log" | tail -n 20
	else
		echo "    (its log $log is empty: no message was written; free space where the bed writes:)"
		for d in "${TMPDIR:-/tmp}" "$work" "$VM_CACHE"; do
			df -h --output=size,avail,target "$d" 2>/dev/null | sed -n "2s|^|    $d: size, avail, mount: |p"
		done
	fi
}

# Prepare one kernel line: its kernel fetched once, the patched modules, its initramfs and (for
# the image scenarios) the Debian disk image. A failure fails that line's scenarios, not the
# others'. Prints nothing when it went well; the FAIL lines of its scenarios when not.
prepare_line() { # line
	local line=$1 scenarios lwork name
	scenarios=$(line_scenarios "$line")
	lwork="$work/$line"
	mkdir -p "$lwork"
	export NUMASTOR_VM_KERNEL=$line
	VM_KERNEL=$line
	line_fail() {
		local n
		vm_log "error: $line: $*"
		for n in $scenarios; do
			echo "FAIL $line $n (not run: $*)"
			failed=$((failed + 1))
		done
	}
	local status=0
	"$VM_DIR/fetch-kernel.sh" "$line" > "$lwork/fetch-kernel.log" 2>&1 || status=$?
	((status == 0)) || {
		step_failed "fetch-kernel.sh $line" "$status" "$lwork/fetch-kernel.log"
		line_fail "preparing the $line kernel failed"
		return 1
	}
	# numastor's patched modules, for the module-swap scenarios: tests/kmod/check-build.sh
	# builds them against the cached kernel into $VM_CACHE/kmod-build/ (about a minute the first
	# time, with a download of linux-source; a few seconds after). Only those scenarios fail
	# without.
	case " $scenarios " in
	*" modswap-"*)
		"$SRC_ROOT/tests/kmod/check-build.sh" > "$lwork/kmod-build.log" 2>&1 ||
			vm_log "warning: tests/kmod/check-build.sh failed (see $lwork/kmod-build.log); the modswap scenarios will fail"
		;;
	esac
	# fio (and its 60-odd libraries: 15 MB more to every boot) only for the benchmark that runs it
	local with_fio=0
	case " $scenarios " in *" bench-probe-vs-fio "*) with_fio=1 ;; esac
	# Built twice at most: a CI run once failed here on 7.2 with an empty log (the tiny-tmpfs
	# test gives exactly that: no space to write even the error), so a failure says its exit
	# status and the free space where the bed writes, and a second build tells a passing
	# shortage from a lasting one.
	if ! ((prepare_only)); then
		local try
		for try in 1 2; do
			status=0
			NUMASTOR_VM_WITH_FIO=$with_fio "$VM_DIR/build-initramfs.sh" "$lwork/initramfs.gz" "$numastor" \
				> "$lwork/initramfs.log" 2>&1 || status=$?
			((status == 0)) && break
			step_failed "building the $line initramfs (try $try)" "$status" "$lwork/initramfs.log"
		done
		((status == 0)) || {
			line_fail "building the $line initramfs failed"
			return 1
		}
	fi
	# The Debian disk image, for the scenarios with a `boots` file (several boots of one image):
	# build-image.sh makes it once into the cache (a few minutes, debootstrap from the archive);
	# only those scenarios fail without it.
	for name in $scenarios; do
		[[ -f "$VM_DIR/scenarios/$name/boots" ]] || continue
		"$VM_DIR/build-image.sh" > "$lwork/build-image.log" 2>&1 ||
			vm_log "warning: tests/vm/build-image.sh failed (see $lwork/build-image.log); the image scenarios will fail"
		break
	done
}

# One scenario on one prepared line, in a subshell of its own: prints its line (and report when
# it failed); exits 0 when it passed. A retried boot leaves "$lwork/$name.retried".
run_scenario() { # line name
	local line=$1 name=$2 lwork sdir out start append vm_timeout status secs retried=
	lwork="$work/$line"
	sdir="$VM_DIR/scenarios/$name"
	out="$lwork/$name"
	export NUMASTOR_VM_KERNEL=$line
	VM_KERNEL=$line
	# A guest that hung before it sent any result (measured: 6.12 under TCG once stalled with
	# "rcu_preempt kthread timer wakeup didn't happen" on an idle vCPU), whose qemu died of a
	# signal (measured: one qemu segfaulted in SeaBIOS, 4 s into a 6.1 boot, the next boot of the
	# same scenario passed), or whose kernel trapped on an int3 of text being patched (below),
	# boots once more, with fresh disks; the line says so and keeps the
	# first console. A guest that sent results is never booted again, whatever they say; nor
	# are the image scenarios, whose disk the boots share.
	retry_hung_boot() {
		local why
		[[ ! -f "$sdir/boots" ]] || return 1
		if grep -q "guest did not finish within" "$lwork/$name.report"; then
			why="the first boot hung"
		elif why=$(grep -o -E "qemu failed with exit code (129|1[3-9][0-9]|2[0-9][0-9])" "$lwork/$name.report"); then
			why="the first $why (a signal)"
		elif grep -q -a "Oops: int3" "$out/console.log" 2>/dev/null; then
			# measured: 6.12 under multi-threaded TCG once trapped on the int3 of a jump label
			# being patched in __schedule, right after a module load, and panicked; a kernel
			# never runs into int3 of its own (BUG() is ud2, and the bed sets no kprobe)
			why="the first boot trapped on an int3 of kernel text being patched (qemu's TCG)"
		else
			return 1
		fi
		mv "$out" "$out.hung"
		retried=", booted twice: $why, its console in $out.hung"
		: > "$lwork/$name.retried"
		boot_scenario "$name" "$sdir" "$out" "$append" "$vm_timeout" "$lwork/initramfs.gz" \
			>> "$lwork/$name.report" 2>&1
	}
	start=$(date +%s%N)
	append=
	[[ -f "$sdir/cmdline" ]] && append=$(tr '\n' ' ' < "$sdir/cmdline")
	# a scenario that boots longer says how long (seconds) in its timeout file
	vm_timeout=${NUMASTOR_VM_TIMEOUT:-180}
	[[ -f "$sdir/timeout" ]] && vm_timeout=$(cat "$sdir/timeout")
	status=PASS
	if [[ ! -f "$sdir/guest.sh" ]]; then
		status=FAIL
		echo "no scenario $name (no $sdir/guest.sh)" > "$lwork/$name.report"
	elif grep -q NUMASTOR_TEST_ "$sdir/guest.sh" && ! grep -q -a NUMASTOR_TEST_ "$numastor"; then
		# a scenario that uses a test-only switch never passes on a binary that ignores it
		status=FAIL
		echo "$name uses NUMASTOR_TEST_* switches, but $numastor was built without them (-Dtest_hooks=true)" \
			> "$lwork/$name.report"
	elif [[ -f "$sdir/boots" && $line != 6.1 ]]; then
		status=FAIL
		echo "$name boots the Debian 12 image, which the bed builds for 6.1 only" > "$lwork/$name.report"
	elif ! boot_scenario "$name" "$sdir" "$out" "$append" "$vm_timeout" "$lwork/initramfs.gz" \
		> "$lwork/$name.report" 2>&1 && ! retry_hung_boot; then
		status=FAIL
	elif ! python3 "$VM_DIR/compare.py" "$out" "$sdir" > "$lwork/$name.report" 2>&1; then
		status=FAIL
	fi
	secs=$((($(date +%s%N) - start) / 1000000))
	printf '%s %s %s (%d.%ds)%s\n' "$status" "$line" "$name" $((secs / 1000)) $((secs % 1000 / 100)) "$retried"
	[[ $status == PASS ]] && return 0
	sed 's/^/    /' "$lwork/$name.report"
	echo "    (guest results and console log: $out)"
	return 1
}

t0=$SECONDS
if ((prepare_only)); then
	for k in $kernels; do prepare_line "$k" > /dev/null || :; done
	rm -rf "$work"
	echo "vm: prepared $kernels in $((SECONDS - t0)) s"
	exit 0
fi
# Every line prepared first (serially: downloads, module builds, debootstrap), then the
# scenarios of the prepared lines, the image scenarios (several boots each, the longest) first.
tasks=() long=()
for k in $kernels; do
	prepare_line "$k" || continue
	for name in $(line_scenarios "$k"); do
		if [[ -f "$VM_DIR/scenarios/$name/boots" ]]; then long+=("$k $name"); else tasks+=("$k $name"); fi
	done
done
tasks=("${long[@]}" "${tasks[@]}")
declare -A running=() # pid -> the file its output goes to
finish_one() { # wait for one scenario to end, print what it printed, count it
	local pid rc=0
	wait -n -p pid "${!running[@]}" || rc=$?
	cat "${running[$pid]}"
	if ((rc == 0)); then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	unset "running[$pid]"
}
i=0
for task in "${tasks[@]}"; do
	while ((${#running[@]} >= jobs)); do finish_one; done
	i=$((i + 1))
	# shellcheck disable=SC2086 # "line name"
	set -- $task
	( run_scenario "$1" "$2" ) > "$work/task.$i.out" 2>&1 &
	running[$!]="$work/task.$i.out"
done
while ((${#running[@]})); do finish_one; done
compgen -G "$work/*/*.retried" > /dev/null && any_retry=1

if ((failed == 0 && any_retry == 0)) && [[ "${NUMASTOR_VM_KEEP:-0}" != 1 ]]; then
	rm -rf "$work"
else
	echo "vm: work directory kept: $work"
fi
echo "vm: $((SECONDS - t0)) s on $kernels"
echo "$passed passed, $failed failed"
((failed == 0))
