#!/bin/bash
# numastor fix against the kernel's refusals, on captured trees with test-only writes
# (NUMASTOR_TEST_SYSROOT_WRITES=1) and a faked errno for every IRQ affinity write
# (NUMASTOR_TEST_IRQ_WRITE_ERRNO, lib/base/testhook.h): the errno is classified by kernel (EIO is
# the refusal below 6.12, EPERM from 6.12; any other EPERM is a permission error, failed and
# not skipped), a vector of unknown managed-ness is written only where the write itself is the
# probe (below 6.12), and its previous value is journaled before that write. The kernel's own
# answers (EIO on 5.10/6.1, EPERM on 6.12) were measured in tests/vm (kernel-facts.md).
set -u
numastor=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /dev/shm/numastor-refusals.XXXXXX 2>/dev/null || mktemp -d /tmp/numastor-refusals.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export NUMASTOR_TEST_SYSROOT_WRITES=1 NO_COLOR=1
if ! grep -q -a NUMASTOR_TEST_IRQ_WRITE_ERRNO "$numastor"; then
	echo "FAIL: $numastor was built without the test-only switches (-Dtest_hooks=true): nothing was tested"
	exit 1
fi
python3 "$here/fixtures/gen-fixtures.py" "$tmp/gen" hba-mpt3sas-61-managed-unknown hba-mpt3sas-612-unsettable >/dev/null

# run FIXTURE ERRNO: a fresh copy at $tmp/t, fix --json into $tmp/out.json, exit code in $rc
run() {
	rm -rf "$tmp/t"
	cp -a "$tmp/gen/$1" "$tmp/t"
	NUMASTOR_TEST_IRQ_WRITE_ERRNO=$2 "$numastor" fix --sysroot "$tmp/t" --json >"$tmp/out.json" 2>"$tmp/err"
	rc=$?
}
# expect DEVICE STATUS CLASS: every planned move of DEVICE ended so
expect() {
	python3 - "$tmp/out.json" "$tmp/t" "$@" <<'PY'
import json, sys
plan, root, dev, status, cls = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
moves = [e for e in plan["irqs"] if e["device"] == dev and e["action"] == "move"]
assert moves, f"{dev}: nothing planned to move"
for e in moves:
    r = e["result"]
    assert r["status"] == status and r["error_class"] == cls, (e["irq"], r)
    got = open(f"{root}/proc/irq/{e['irq']}/smp_affinity_list").read().strip()
    assert got == e["current"], f"irq {e['irq']} changed to {got} although the write failed"
# the previous value of every write was journaled before it
j = json.load(open(f"{root}/run/numastor/journal.json"))
prev = {x["irq"]: x["previous"] for x in j["irqs"]}
for e in moves:
    assert prev.get(e["irq"]) == e["current"], (e["irq"], prev.get(e["irq"]), e["current"])
PY
}

# 6.1, managed-ness unknown: the write is the probe; EIO says kernel-managed (skipped, exit 0)
run hba-mpt3sas-61-managed-unknown EIO
[ "$rc" = 0 ] || fail "6.1 EIO: fix exited $rc, expected 0: $(cat "$tmp/err")"
expect sda skipped managed || fail "6.1 EIO: not classified as the kernel's refusal"
# 6.1: EPERM is not how this kernel refuses: a permission error, failed (exit 1)
run hba-mpt3sas-61-managed-unknown EPERM
[ "$rc" = 1 ] || fail "6.1 EPERM: fix exited $rc, expected 1"
expect sda failed permission || fail "6.1 EPERM: hidden as managed"
# 6.12: EPERM is the refusal (skipped), EIO is not (failed)
run hba-mpt3sas-612-unsettable EPERM
[ "$rc" = 0 ] || fail "6.12 EPERM: fix exited $rc, expected 0"
expect sdb skipped managed || fail "6.12 EPERM: not classified as the kernel's refusal"
run hba-mpt3sas-612-unsettable EIO
[ "$rc" = 1 ] || fail "6.12 EIO: fix exited $rc, expected 1"
expect sdb failed other || fail "6.12 EIO: classified as managed"
# 6.12: the vectors user space may not set (0444) are never written, whatever their managed-ness
python3 - "$tmp/out.json" <<'PY' || fail "6.12: a 0444 vector was planned to move"
import json, sys
for e in json.load(open(sys.argv[1]))["irqs"]:
    if e["device"] == "sda":
        assert e["action"] == "skip" and e["result"]["status"] == "skipped", e
PY
# a journal revert after a refused probe leaves everything as it was
run hba-mpt3sas-61-managed-unknown EIO
"$numastor" fix --sysroot "$tmp/t" --revert >"$tmp/rev" 2>&1 || fail "revert after refused probes: $(cat "$tmp/rev")"

if [ "$fails" -gt 0 ]; then
	echo "refusals: $fails failed"
	exit 1
fi
echo "refusals: all passed"
