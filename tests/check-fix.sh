#!/bin/bash
# numastor fix on a captured tree with test-only writes enabled (NUMASTOR_TEST_SYSROOT_WRITES=1):
# the journal is written before the first write, every planned IRQ ends where the plan said,
# --revert restores the exact previous values, a fix killed after its first writes is fully
# reverted, a held lock makes a second fix wait and then fail clearly, and irqbalance-policy
# answers for placed IRQs and forced-node devices. The kernel's refusals are shown in tests/vm.
set -u
numastor=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/numastor-fix.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export NUMASTOR_TEST_SYSROOT_WRITES=1 NO_COLOR=1
# Everything below needs the test-only switches: a release build has none (lib/testhook.h)
if ! grep -q -a NUMASTOR_TEST_SYSROOT_WRITES "$numastor"; then
	echo "FAIL: $numastor was built without the test-only switches (NUMASTOR_TEST_SYSROOT_WRITES):"
	echo "      configure the build with -Dtest_hooks=true (tests/run-all.sh does); nothing was tested"
	exit 1
fi
fixture=cloud-2n64c-8nvme-forced-node0

fresh() { # a fresh copy of the fixture at $tmp/t (each fixture is generated once)
	rm -rf "$tmp/t"
	[ -d "$tmp/gen-$fixture/$fixture" ] ||
		python3 "$here/fixtures/gen-fixtures.py" "$tmp/gen-$fixture" "$fixture" >/dev/null
	cp -a "$tmp/gen-$fixture/$fixture" "$tmp/t"
}
affinities() { # every IRQ's smp_affinity_list, one "N value" per line
	for f in "$1"/proc/irq/*/smp_affinity_list; do
		n=${f%/smp_affinity_list}
		echo "${n##*/} $(cat "$f")"
	done | sort -n
}

fresh
before=$(affinities "$tmp/t")
"$numastor" fix --sysroot "$tmp/t" --json >"$tmp/apply.json"
rc=$?
# a captured tree's effective_affinity_list does not follow the write (no kernel behind it):
# writes read back as applied-effective-differs, which is reported but is not a failure
[ "$rc" = 0 ] || fail "fix exited $rc, expected 0"
[ -f "$tmp/t/run/numastor/journal.json" ] || fail "no journal after fix"
python3 - "$tmp/apply.json" "$tmp/t" <<'PY' || fails=$((fails + 1))
import json, sys
plan = json.load(open(sys.argv[1])); root = sys.argv[2]
assert plan["dry_run"] is False
moved = [e for e in plan["irqs"] if e["action"] == "move"]
assert moved, "nothing moved"
for e in moved:
    assert e["result"]["status"] in ("applied", "applied-effective-differs"), e
    assert e["result"]["affinity"] == e["target"], e
    got = open(f"{root}/proc/irq/{e['irq']}/smp_affinity_list").read().strip()
    assert got == e["target"], f"irq {e['irq']}: {got} != planned {e['target']}"
journal = json.load(open(f"{root}/run/numastor/journal.json"))
assert sorted(j["irq"] for j in journal["irqs"]) == sorted(e["irq"] for e in moved)
for j in journal["irqs"]:
    e = [m for m in moved if m["irq"] == j["irq"]][0]
    assert j["previous"] == e["current"] and j["placed"] == e["target"], (j, e)
PY
# check explains the fix
"$numastor" check --sysroot "$tmp/t" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
placed = [i for x in d["devices"] for p in x["paths"] for i in p["pci"]["irqs"] if i["placed_by_numastor"]]
assert placed, "check does not mark placed IRQs"
' || fail "check --json does not mark the IRQs fix placed"
"$numastor" check --sysroot "$tmp/t" | grep -q "placed by numastor fix" || fail "check text does not mark placed IRQs"
# irqbalance policy: a placed IRQ is banned; the forced-node device gets numa_node=-1
irq=$(python3 -c 'import json,sys; print([e["irq"] for e in json.load(open(sys.argv[1]))["irqs"] if e["action"]=="move"][0])' "$tmp/apply.json")
out=$("$numastor" irqbalance-policy --sysroot "$tmp/t" /sys/devices/pci0000:00/0000:00:04.0 "$irq")
grep -qx "ban=true" <<<"$out" || fail "irqbalance-policy: no ban=true for placed irq $irq: $out"
grep -qx "numa_node=-1" <<<"$out" || fail "irqbalance-policy: no numa_node=-1 for the forced device: $out"
"$numastor" irqbalance-policy --sysroot "$tmp/t" /sys/devices/pci0000:00/0000:00:04.0 99999 | grep -q ban= &&
	fail "irqbalance-policy banned an IRQ numastor never placed"
out=$("$numastor" irqbalance-policy --sysroot "$tmp/t" /sys/devices/nonexistent 1)
[ $? = 0 ] && [ -z "$out" ] || fail "irqbalance-policy with nothing to say should print nothing and exit 0: $out"
"$numastor" irqbalance-policy --sysroot "$tmp/t" /sys/devices/pci0000:00/0000:00:04.0 banana >/dev/null 2>&1
[ $? = 2 ] || fail "irqbalance-policy with a bad IRQ should exit 2"

# revert restores exactly what was there
"$numastor" fix --sysroot "$tmp/t" --revert >"$tmp/revert.txt" || fail "revert exited non-zero: $(cat "$tmp/revert.txt")"
[ "$(affinities "$tmp/t")" = "$before" ] || fail "revert did not restore the previous affinities"
[ ! -e "$tmp/t/run/numastor/journal.json" ] || fail "journal left after a full revert"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
grep -q "nothing to revert" <<<"$out" || fail "second revert: $out"

# a fix killed after its third write leaves a journal from which revert restores everything
fresh
before=$(affinities "$tmp/t")
NUMASTOR_TEST_STOP_AFTER_WRITES=3 "$numastor" fix --sysroot "$tmp/t" >/dev/null
rc=$?
[ "$rc" = 137 ] || fail "the stop-after-3-writes fix exited $rc, not 137"
changed=$(diff <(echo "$before") <(affinities "$tmp/t") | grep -c '^>')
[ "$changed" = 3 ] || fail "the killed fix changed $changed IRQs, expected 3"
# only what was really written counts as placed
placed=$("$numastor" check --sysroot "$tmp/t" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(i["placed_by_numastor"] for x in d["devices"] for p in x["paths"] for i in p["pci"]["irqs"]))')
[ "$placed" = 3 ] || fail "after a fix killed at 3 writes, check marks $placed IRQs placed, not 3"
"$numastor" fix --sysroot "$tmp/t" --revert >/dev/null || fail "revert after a killed fix failed"
[ "$(affinities "$tmp/t")" = "$before" ] || fail "revert after a killed fix did not restore everything"

# a reused IRQ number is not touched by revert
fresh
"$numastor" fix --sysroot "$tmp/t" >/dev/null
echo "eth0-rx-0" >"$tmp/t/sys/kernel/irq/$irq/actions"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
[ $? = 1 ] || fail "revert with a reused IRQ number should exit 1"
grep -q "irq $irq is now eth0-rx-0" <<<"$out" || fail "revert did not name the reused IRQ: $out"
[ ! -e "$tmp/t/run/numastor/journal.json" ] || fail "the journal still holds an IRQ that no longer exists"

# one fix at a time: a held lock makes the second wait, then fail with a clear message
fresh
mkdir -p "$tmp/t/run/numastor"
(flock 9; echo 4242 >&9; sleep 4) 9>"$tmp/t/run/numastor/lock" &
holder=$!
sleep 0.5
start=$(date +%s)
out=$("$numastor" fix --sysroot "$tmp/t" --lock-timeout 1 2>&1)
rc=$?
[ "$rc" = 3 ] || fail "fix under a held lock exited $rc, expected 3"
grep -q "another numastor fix (pid 4242) holds /run/numastor/lock" <<<"$out" || fail "lock message: $out"
[ $(($(date +%s) - start)) -ge 1 ] || fail "fix did not wait for the lock"
wait "$holder"
# two fixes at once: both finish, the journal stays whole and names each IRQ once
"$numastor" fix --sysroot "$tmp/t" >/dev/null &
"$numastor" fix --sysroot "$tmp/t" >/dev/null
rc2=$?
wait $!
rc1=$?
[ "$rc1" -le 1 ] && [ "$rc2" -le 1 ] || fail "a concurrent fix failed ($rc1, $rc2)"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
irqs = [e["irq"] for e in j["irqs"]]
assert len(irqs) == len(set(irqs)), "an IRQ is journaled twice"
' "$tmp/t/run/numastor/journal.json" || fail "concurrent fixes broke the journal"
"$numastor" fix --sysroot "$tmp/t" --revert >/dev/null || fail "revert after concurrent fixes"

# the lock says what its holder does: "PID irqs" for a fix (left behind by the killed one)
fresh
NUMASTOR_TEST_STOP_AFTER_WRITES=1 "$numastor" fix --sysroot "$tmp/t" >/dev/null
grep -qxE '[0-9]+ irqs' "$tmp/t/run/numastor/lock" || fail "the lock of a fix reads '$(cat "$tmp/t/run/numastor/lock")', not 'PID irqs'"
"$numastor" fix --sysroot "$tmp/t" --revert >/dev/null || fail "revert after the killed fix"

# hot-plug (the unit's fix --hotplug): a module swap holds the lock ("PID modules", held by
# flock(1)) for 3 s and changes an IRQ meanwhile, as a swap does. A plain fix gives up after
# --lock-timeout naming the swap; fix --hotplug waits for the swap however long it takes,
# then plans afresh (the IRQ's previous value in the journal is the one the swap left),
# applies, and says nothing with exit 0. Another fix holding the lock is waited for only
# --lock-timeout, hot-plug or not. (On the reverted tree of the killed fix above.)
irq=$(NUMASTOR_TEST_SYSROOT_WRITES=0 "$numastor" fix --sysroot "$tmp/t" --json |
	python3 -c 'import json,sys; print([e["irq"] for e in json.load(sys.stdin)["irqs"] if e["action"]=="move"][0])')
mkdir -p "$tmp/t/run/numastor"
hold() { # WHAT SECS: hold the lock as numastor would, changing $irq to 1 before letting go
	rm -f "$tmp/held"
	# (the holder empties the file before letting go, as numastor's own does)
	(flock 9; echo "4242 $1" >&9; touch "$tmp/held"; sleep "$2"; echo 1 >"$tmp/t/proc/irq/$irq/smp_affinity_list"; truncate -s 0 /dev/fd/9) \
		9>"$tmp/t/run/numastor/lock" &
	while [ ! -e "$tmp/held" ]; do sleep 0.05; done
}
hold modules 3
out=$("$numastor" fix --sysroot "$tmp/t" --lock-timeout 1 2>&1)
[ $? = 3 ] || fail "a plain fix under a module swap's lock did not give up with exit 3"
grep -q "another numastor fix (pid 4242, swapping modules) holds /run/numastor/lock; gave up after 1 s" <<<"$out" ||
	fail "a plain fix under a module swap's lock: $out"
wait
hold modules 3
start=$(date +%s)
"$numastor" fix --sysroot "$tmp/t" --lock-timeout 1 --hotplug >"$tmp/hp.out" 2>"$tmp/hp.err"
rc=$?
took=$(($(date +%s) - start))
wait
[ "$rc" = 0 ] || fail "fix --hotplug under a module swap exited $rc, expected 0: $(cat "$tmp/hp.err")"
# (the fixture runs irqbalance without numastor's policy: that advice, once, is all it may say)
if [ -s "$tmp/hp.out" ] || grep -v -q '^numastor fix: irqbalance (pid [0-9]*) runs without' "$tmp/hp.err"; then
	fail "fix --hotplug was not quiet: $(cat "$tmp/hp.out" "$tmp/hp.err")"
fi
[ "$took" -ge 2 ] || fail "fix --hotplug did not wait for the swap (took $took s, the holder held 3 s)"
python3 - "$tmp/t" "$irq" <<'PY' || fail "fix --hotplug did not plan after the swap"
import json, sys
root, irq = sys.argv[1], int(sys.argv[2])
j = [e for e in json.load(open(f"{root}/run/numastor/journal.json"))["irqs"] if e["irq"] == irq]
assert j and j[0]["previous"] == "1", f"irq {irq} journaled as {j}: not planned from what the swap left (1)"
got = open(f"{root}/proc/irq/{irq}/smp_affinity_list").read().strip()
assert got == j[0]["placed"], f"irq {irq} is at {got}, not placed at {j[0]['placed']}"
PY
[ -s "$tmp/t/run/numastor/lock" ] && fail "the lock still names a holder after fix --hotplug: $(cat "$tmp/t/run/numastor/lock")"
hold irqs 4
out=$("$numastor" fix --sysroot "$tmp/t" --lock-timeout 1 --hotplug 2>&1)
[ $? = 3 ] || fail "fix --hotplug waited past --lock-timeout for another fix"
grep -q "another numastor fix (pid 4242, placing interrupts) holds /run/numastor/lock; gave up after 1 s" <<<"$out" ||
	fail "fix --hotplug under another fix's lock: $out"
wait
"$numastor" fix --sysroot "$tmp/t" --hotplug --dry-run >/dev/null 2>&1
[ $? = 3 ] || fail "fix --hotplug --dry-run should be refused"

# never onto isolated, nohz_full, offline or irqbalance-banned CPUs
fresh
echo "0-3" >"$tmp/t/sys/devices/system/cpu/isolated"
echo "4-5" >"$tmp/t/sys/devices/system/cpu/nohz_full"
echo "0-62" >"$tmp/t/sys/devices/system/cpu/online"
mkdir -p "$tmp/t/etc/default" && echo 'IRQBALANCE_BANNED_CPULIST="6-7"' >"$tmp/t/etc/default/irqbalance"
NUMASTOR_TEST_SYSROOT_WRITES=0 "$numastor" fix --sysroot "$tmp/t" --json >"$tmp/excluded.json"
python3 - "$tmp/excluded.json" <<'PY' || fails=$((fails + 1))
import json, sys
plan = json.load(open(sys.argv[1]))
def cpus(s):
    out = set()
    for part in (s or "").split(","):
        if part:
            a, _, b = part.partition("-")
            out |= set(range(int(a), int(b or a) + 1))
    return out
excluded = set(range(0, 8)) | {63}
assert plan["allowed_cpus"] == "8-62", plan["allowed_cpus"]
moved = [e for e in plan["irqs"] if e["action"] == "move"]
assert moved, "nothing planned"
for e in plan["irqs"]:
    assert not cpus(e["target"]) & excluded, f"irq {e['irq']} planned onto {e['target']}"
    if e["action"] == "skip":
        assert "no allowed CPU" in e["reason"], e
# hctx 0 and 1 serve only CPUs 0-7: nothing allowed there, skipped with that reason
assert any(e["action"] == "skip" and e["hw_queue"] in (0, 1) for e in plan["irqs"]), "queues on excluded CPUs not skipped"
PY

# --rq-affinity=2 where the vectors are kernel-managed: journaled and reverted like the rest
fixture=managed-2n-nvme-confined
fresh
rq=$tmp/t/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/nvme/nvme0/nvme0n1/queue/rq_affinity
[ "$(cat "$rq")" = 1 ] || fail "managed fixture: rq_affinity is $(cat "$rq"), expected 1"
"$numastor" fix --sysroot "$tmp/t" --rq-affinity=2 >/dev/null
[ "$(cat "$rq")" = 2 ] || fail "fix --rq-affinity=2 left rq_affinity at $(cat "$rq")"
"$numastor" fix --sysroot "$tmp/t" --revert >/dev/null || fail "revert of rq_affinity failed"
[ "$(cat "$rq")" = 1 ] || fail "revert left rq_affinity at $(cat "$rq")"
"$numastor" fix --sysroot "$tmp/t" --rq-affinity=3 >/dev/null 2>&1
[ $? = 3 ] || fail "--rq-affinity=3 should be refused with exit 3"
fixture=cloud-2n64c-8nvme-forced-node0

# without the test switch a captured tree is never written
fresh
before=$(affinities "$tmp/t")
NUMASTOR_TEST_SYSROOT_WRITES=0 "$numastor" fix --sysroot "$tmp/t" >/dev/null
[ "$(affinities "$tmp/t")" = "$before" ] || fail "fix --sysroot wrote without the test switch"
[ ! -e "$tmp/t/run/numastor/journal.json" ] || fail "fix --sysroot wrote a journal without the test switch"
# applying on the live system needs root
if [ "$(id -u)" = 0 ]; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$numastor" fix 2>&1)
	[ $? = 3 ] && grep -q "needs root" <<<"$out" || fail "unprivileged fix: $out"
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$numastor" fix --dry-run >/dev/null ||
		fail "unprivileged fix --dry-run failed"
fi

if [ "$fails" -gt 0 ]; then
	echo "fix: $fails failed"
	exit 1
fi
echo "fix: all passed"
