#!/bin/bash
# Run the real-kernel VM test bed: every scenario under tests/vm/scenarios/, one boot each.
#
#   run-all.sh [NUMASTOR]        (default: build/numastor)
#
# Environment: NUMASTOR_SKIP_VM=1 skips the suite (explicitly; otherwise a missing qemu is
# a failure), NUMASTOR_VM_SCENARIOS="stock nonroot" runs only those, NUMASTOR_VM_CACHE moves
# the kernel cache, NUMASTOR_VM_KEEP=1 keeps the work directory even when all pass.
# Prints one line per scenario with its time and a final "N passed, N failed".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

all_scenarios() {
	local s
	for s in "$VM_DIR"/scenarios/*/guest.sh; do
		basename "$(dirname "$s")"
	done
}

if [[ "${NUMASTOR_SKIP_VM:-0}" == 1 ]]; then
	n=$(all_scenarios | wc -l)
	echo "vm: skipped ($n scenarios) because NUMASTOR_SKIP_VM=1"
	echo "0 passed, 0 failed, $n skipped"
	exit 0
fi

# A failure before any scenario ran still ends with the summary line.
fatal() {
	vm_log "error: $*"
	echo "0 passed, $(all_scenarios | wc -l) failed"
	exit 1
}

numastor=$(realpath -m "${1:-$SRC_ROOT/build/numastor}")
[[ -x "$numastor" ]] ||
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

"$VM_DIR/fetch-kernel.sh" >/dev/null || fatal "preparing the kernel failed"
# irqbalance only matters to the irqbalance-policy scenario, which fails on its own without it.
"$VM_DIR/fetch-irqbalance.sh" >/dev/null || vm_log "warning: preparing irqbalance failed"
# Debian's udev likewise only matters to modswap-udev.
"$VM_DIR/fetch-udev.sh" >/dev/null || vm_log "warning: preparing udev failed (modswap-udev will fail)"
work=$(mktemp -d "${TMPDIR:-/tmp}/numastor-vm.XXXXXX")
scenarios=${NUMASTOR_VM_SCENARIOS:-$(all_scenarios | tr '\n' ' ')}
# numastor's patched modules, for the module-swap scenarios: tests/kmod/check-build.sh builds
# them against the cached kernel into $VM_CACHE/kmod-build/ (about a minute the first time,
# with a download of linux-source; a few seconds after). Only those scenarios fail without.
case " $scenarios " in
*" modswap-"*)
	"$SRC_ROOT/tests/kmod/check-build.sh" > "$work/kmod-build.log" 2>&1 ||
		vm_log "warning: tests/kmod/check-build.sh failed (see $work/kmod-build.log); the modswap scenarios will fail"
	;;
esac
"$VM_DIR/build-initramfs.sh" "$work/initramfs.gz" "$numastor" || fatal "building the initramfs failed"
# The Debian disk image, for the scenarios with a `boots` file (several boots of one image):
# build-image.sh makes it once into the cache (a few minutes, debootstrap from the archive);
# only those scenarios fail without it.
for name in $scenarios; do
	[[ -f "$VM_DIR/scenarios/$name/boots" ]] || continue
	"$VM_DIR/build-image.sh" > "$work/build-image.log" 2>&1 ||
		vm_log "warning: tests/vm/build-image.sh failed (see $work/build-image.log); the image scenarios will fail"
	break
done

# One scenario's boots: one of the bed's initramfs, or (a `boots` file) that many of the
# Debian image, sharing one disk.
boot_scenario() { # name scenario-dir outdir append timeout (of each boot)
	if [[ -f "$2/boots" ]]; then
		"$VM_DIR/run-image.sh" --boots "$(<"$2/boots")" --append "$4" --timeout "$5" "$numastor" "$1" "$3"
	else
		"$VM_DIR/run-vm.sh" --append "$4" --timeout "$5" "$work/initramfs.gz" "$1" "$3"
	fi
}

passed=0 failed=0
for name in $scenarios; do
	sdir="$VM_DIR/scenarios/$name"
	out="$work/$name"
	start=$(date +%s%N)
	append=
	[[ -f "$sdir/cmdline" ]] && append=$(tr '\n' ' ' < "$sdir/cmdline")
	# a scenario that boots longer says how long (seconds) in its timeout file
	vm_timeout=${NUMASTOR_VM_TIMEOUT:-180}
	[[ -f "$sdir/timeout" ]] && vm_timeout=$(cat "$sdir/timeout")
	status=PASS
	if [[ ! -f "$sdir/guest.sh" ]]; then
		status=FAIL
		echo "no scenario $name (no $sdir/guest.sh)" > "$work/$name.report"
	elif grep -q NUMASTOR_TEST_ "$sdir/guest.sh" && ! grep -q -a NUMASTOR_TEST_ "$numastor"; then
		# a scenario that uses a test-only switch never passes on a binary that ignores it
		status=FAIL
		echo "$name uses NUMASTOR_TEST_* switches, but $numastor was built without them (-Dtest_hooks=true)" \
			> "$work/$name.report"
	elif ! boot_scenario "$name" "$sdir" "$out" "$append" "$vm_timeout" > "$work/$name.report" 2>&1; then
		status=FAIL
	elif ! python3 "$VM_DIR/compare.py" "$out" "$sdir" > "$work/$name.report" 2>&1; then
		status=FAIL
	fi
	secs=$(( ($(date +%s%N) - start) / 1000000 ))
	printf '%s %s (%d.%ds)\n' "$status" "$name" $((secs / 1000)) $((secs % 1000 / 100))
	if [[ $status == PASS ]]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		sed 's/^/    /' "$work/$name.report"
		echo "    (guest results and console log: $out)"
	fi
done

if ((failed == 0)) && [[ "${NUMASTOR_VM_KEEP:-0}" != 1 ]]; then
	rm -rf "$work"
else
	echo "vm: work directory kept: $work"
fi
echo "$passed passed, $failed failed"
((failed == 0))
