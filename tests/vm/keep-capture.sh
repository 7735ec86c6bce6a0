#!/bin/bash
# Keep one kernel line's stock capture as a fixture that every test run replays
# (tests/check-captures.py): the guest's snapshot with the ground truth read around it.
#
#   keep-capture.sh RESULT_DIR NAME     e.g. keep-capture.sh /tmp/numastor-vm.X/6.12/stock 6.12
#
# RESULT_DIR is a passed stock scenario's results (NUMASTOR_VM_KEEP=1 tests/vm/run-all.sh keeps
# them); NAME becomes tests/fixtures/captures/NAME/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
(($# == 2)) || vm_die "usage: keep-capture.sh RESULT_DIR NAME"
res=$1 name=$2
[[ -f "$res/capture/snapshot.tar.gz" ]] || vm_die "$res has no capture/snapshot.tar.gz (a stock scenario's results?)"
[[ "$(cat "$res/scenario.rc" 2>/dev/null)" == 0 ]] || vm_die "$res: the scenario did not finish (scenario.rc)"
python3 "$VM_DIR/compare.py" "$res" "$VM_DIR/scenarios/stock" >/dev/null ||
	vm_die "$res does not pass its own comparison: no fixture is kept from a failed run"
dest="$SRC_ROOT/tests/fixtures/captures/$name"
rm -rf "$dest" && mkdir -p "$dest"
cp "$res"/capture/{snapshot.tar.gz,truth.txt,truth-before.txt,pairing.txt} "$res/scenario.rc" "$res/kernel-facts.txt" "$dest/"
[[ ! -f "$res/notes.txt" ]] || cp "$res/notes.txt" "$dest/"
echo "$dest"
