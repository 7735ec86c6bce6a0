#!/bin/bash
# Keep one kernel line's capture as a fixture that every test run replays
# (tests/check-captures.py): the guest's snapshot with the ground truth read around it.
#
#   keep-capture.sh RESULT_DIR NAME [SCENARIO]
#       e.g. keep-capture.sh /tmp/numastor-vm.X/6.12/stock 6.12
#            keep-capture.sh /tmp/numastor-vm.X/6.1/server 6.1-server server
#
# RESULT_DIR is a passed scenario's results (NUMASTOR_VM_KEEP=1 tests/vm/run-all.sh keeps them):
# stock (the default) or another scenario whose guest.sh takes the capture as stock's does
# (capture/: truth-before.txt, snapshot.tar.gz, truth.txt, pairing.txt), such as server. NAME
# becomes tests/fixtures/captures/NAME/; a SCENARIO other than stock is named in its file
# `scenario`, and the replay holds the report to that scenario's expectations. A kept text file
# larger than 32 KiB (the server machine's ground truth: 24 queues per NVMe, 16 CPUs' pairing)
# is kept gzip'd as FILE.gz (check-captures.py reads either).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
(($# == 2 || $# == 3)) || vm_die "usage: keep-capture.sh RESULT_DIR NAME [SCENARIO]"
res=$1 name=$2 scenario=${3:-stock}
[[ -d "$VM_DIR/scenarios/$scenario" ]] || vm_die "no scenario $scenario"
[[ -f "$res/capture/snapshot.tar.gz" ]] || vm_die "$res has no capture/snapshot.tar.gz (a $scenario scenario's results?)"
[[ "$(cat "$res/scenario.rc" 2>/dev/null)" == 0 ]] || vm_die "$res: the scenario did not finish (scenario.rc)"
python3 "$VM_DIR/compare.py" "$res" "$VM_DIR/scenarios/$scenario" >/dev/null ||
	vm_die "$res does not pass its own comparison: no fixture is kept from a failed run"
dest="$SRC_ROOT/tests/fixtures/captures/$name"
rm -rf "$dest" && mkdir -p "$dest"
cp "$res"/capture/{snapshot.tar.gz,truth.txt,truth-before.txt,pairing.txt} "$res/scenario.rc" "$dest/"
for f in kernel-facts.txt notes.txt topology.txt; do
	[[ ! -f "$res/$f" ]] || cp "$res/$f" "$dest/"
done
# the measured paths of the multipath head (issue 33; older captures have none)
for f in paths.txt; do
	[[ ! -f "$res/capture/$f" ]] || cp "$res/capture/$f" "$dest/"
done
[[ $scenario == stock ]] || echo "$scenario" > "$dest/scenario"
for f in "$dest"/*.txt; do
	(($(stat -c %s "$f") <= 32768)) || gzip -9n "$f"
done
echo "$dest"
