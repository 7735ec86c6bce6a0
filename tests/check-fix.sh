#!/bin/bash
# numastor fix on a captured tree with test-only writes enabled (NUMASTOR_TEST_SYSROOT_WRITES=1):
# the journal is written before the first write, every planned IRQ ends where the plan said,
# --revert restores the exact previous values, a fix killed after its first writes is fully
# reverted, a held lock makes a second fix wait and then fail clearly, and irqbalance-policy
# answers for placed IRQs and forced-node devices. The kernel's refusals are shown in tests/vm.
set -u
# python3 found through PATH once (a pyenv shim there costs 0.3 s a call), then run directly
PY=$(python3 -c 'import sys; print(sys.executable)') || PY=python3
python3() { "$PY" "$@"; }
numastor=$1
shift
# the parts to run (a mutant's kill command names the one that kills it): apply (fix, revert,
# a killed fix, the lock, hot-plug, exclusions, rq_affinity), identity (revert keyed by identity,
# other boots, old journals), rest (irqbalance-policy's manifest, the test switch, root); default all
parts=" ${*:-apply identity rest} "
part() { [[ $parts == *" $1 "* ]]; }
here=$(cd "$(dirname "$0")" && pwd)
# on tmpfs where there is one: the tests copy a 4,000-file fixture a dozen times
tmp=$(mktemp -d /dev/shm/numastor-fix.XXXXXX 2>/dev/null || mktemp -d /tmp/numastor-fix.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { # NUMASTOR_FAIL_FAST=1 (tests/mutation/run.sh): the first failure ends the run
	echo "FAIL: $*"
	fails=$((fails + 1))
	[[ ${NUMASTOR_FAIL_FAST:-0} != 1 ]] || exit 1
}
# fix's text wraps its sentences at 80 columns (issue 32): read them whole, each line's break a space
flat() { printf '%s\n' "$1" | tr '\n' ' ' | tr -s ' '; }
export NUMASTOR_TEST_SYSROOT_WRITES=1 NO_COLOR=1
# Everything below needs the test-only switches: a release build has none (lib/base/testhook.h)
if ! grep -q -a NUMASTOR_TEST_SYSROOT_WRITES "$numastor"; then
	echo "FAIL: $numastor was built without the test-only switches (NUMASTOR_TEST_SYSROOT_WRITES):"
	echo "      configure the build with -Dtest_hooks=true (tests/run-all.sh does); nothing was tested"
	exit 1
fi
fixture=cloud-2n64c-8nvme-forced-node0

fresh() { # a fresh copy of the fixture at $tmp/t (each fixture generated once)
	rm -rf "$tmp/t"
	[ -d "$tmp/gen/$fixture" ] || python3 "$here/fixtures/gen-fixtures.py" "$tmp/gen" "$fixture" >/dev/null
	cp -a "$tmp/gen/$fixture" "$tmp/t"
}
affinities() { # every IRQ's smp_affinity_list, one "N value" per line
	for f in "$1"/proc/irq/*/smp_affinity_list; do
		n=${f%/smp_affinity_list}
		echo "${n##*/} $(cat "$f")"
	done | sort -n
}

if part apply; then
fresh
before=$(affinities "$tmp/t")
"$numastor" fix --sysroot "$tmp/t" --json >"$tmp/apply.json"
rc=$?
# a captured tree's effective_affinity_list does not follow the write (no kernel behind it):
# writes read back as applied-effective-differs, which is reported but is not a failure; exit
# 1 because the fixture's irqbalance runs without numastor's policy script and will move the
# vectors back (tests/check-fix-irqbalance.sh)
[ "$rc" = 1 ] || fail "fix exited $rc, expected 1 (irqbalance without the policy script)"
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
"$numastor" check --sysroot "$tmp/t" --verbose | tr "\n" " " | tr -s " " | grep -q "placed by numastor fix" || fail "check text does not mark placed IRQs"
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
[ $? = 3 ] || fail "irqbalance-policy with a bad IRQ should exit 3"

# revert restores exactly what was there
"$numastor" fix --sysroot "$tmp/t" --revert >"$tmp/revert.txt" || fail "revert exited non-zero: $(cat "$tmp/revert.txt")"
[ "$(affinities "$tmp/t")" = "$before" ] || fail "revert did not restore the previous affinities"
[ ! -e "$tmp/t/run/numastor/journal.json" ] || fail "journal left after a full revert"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
grep -q "nothing to revert" <<<"$(flat "$out")" || fail "second revert: $out"

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
grep -q "irq $irq is now eth0-rx-0" <<<"$(flat "$out")" || fail "revert did not name the reused IRQ: $out"
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
grep -q "another numastor fix (pid 4242) holds /run/numastor/lock" <<<"$(flat "$out")" || fail "lock message: $out"
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
grep -q "another numastor fix (pid 4242, swapping modules) holds /run/numastor/lock; gave up after 1 s" <<<"$(flat "$out")" ||
	fail "a plain fix under a module swap's lock: $out"
wait
hold modules 3
start=$(date +%s)
"$numastor" fix --sysroot "$tmp/t" --lock-timeout 1 --hotplug >"$tmp/hp.out" 2>"$tmp/hp.err"
rc=$?
took=$(($(date +%s) - start))
wait
# (exit 1: the fixture's irqbalance runs without numastor's policy script)
[ "$rc" = 1 ] || fail "fix --hotplug under a module swap exited $rc, expected 1: $(cat "$tmp/hp.err")"
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
grep -q "another numastor fix (pid 4242, placing interrupts) holds /run/numastor/lock; gave up after 1 s" <<<"$(flat "$out")" ||
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
fi

if part identity; then
# Revert keyed by identity. An IRQ entry is its PCI function and action name: it applies only to
# the IRQ now in that function's msi_irqs with that name; a disk is its identity, not its name.
pcidir=$tmp/t/sys/devices/pci0000:00
aff() { cat "$tmp/t/proc/irq/$1/smp_affinity_list"; }
journal_val() { # journal_val PCI NAME FIELD
	python3 -c 'import json,sys; print([e[sys.argv[4]] for e in json.load(open(sys.argv[1]))["irqs"] if e["pci"] == sys.argv[2] and e["name"] == sys.argv[3]][0])' \
		"$tmp/t/run/numastor/journal.json" "$@"
}
placed_marks() { # the "pci name" of every IRQ check marks placed_by_numastor
	"$numastor" check --sysroot "$tmp/t" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for x in d["devices"]:
    for p in x["paths"]:
        for i in p["pci"]["irqs"]:
            if i["placed_by_numastor"]:
                print(p["pci"]["address"], i["name"])' | sort -u
}

# an IRQ number reused by another device's vector, even one with the same action name (the
# controllers renumbered by a reload): never written. Its twin on the same function is restored.
fresh
"$numastor" fix --sysroot "$tmp/t" >/dev/null
[ "$(journal_val 0000:00:04.0 nvme0q0 irq)" = 57 ] || fail "reused: the fixture's nvme0q0 of 0000:00:04.0 is not irq 57"
placed57=$(aff 57)
prev58=$(journal_val 0000:00:04.0 nvme0q1 previous)
mv "$pcidir/0000:00:04.0/msi_irqs/57" "$pcidir/0000:00:05.0/msi_irqs/57"
marks=$(placed_marks)
grep -qx "0000:00:05.0 nvme0q0" <<<"$marks" && fail "reused: check marks another device's irq 57 placed by numastor"
grep -qx "0000:00:04.0 nvme0q1" <<<"$marks" || fail "reused: check no longer marks nvme0q1 of 0000:00:04.0 placed"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
rc=$?
[ "$rc" = 1 ] || fail "reused: revert exited $rc, expected 1 (an entry left alone)"
[ "$(aff 57)" = "$placed57" ] || fail "reused: revert wrote $(aff 57) onto irq 57, now another device's vector"
[ "$(aff 58)" = "$prev58" ] || fail "reused: the twin irq 58 was not restored to $prev58: $(aff 58)"
grep -q "irq 57 (nvme0q0 of 0000:00:04.0): stale, not touched: irq 57 is nvme0q0 but no longer one of 0000:00:04.0's vectors" <<<"$(flat "$out")" ||
	fail "reused: revert did not report the stale entry: $out"
[ ! -e "$tmp/t/run/numastor/journal.json" ] || fail "reused: the journal keeps an entry that can never apply"

# a vector whose number changed (same function and action under a new number): restored there,
# and the old number (now another IRQ, holding the same mask) is not touched
fresh
"$numastor" fix --sysroot "$tmp/t" >/dev/null
placed58=$(aff 58)
prev58=$(journal_val 0000:00:04.0 nvme0q1 previous)
prev59=$(journal_val 0000:00:04.0 nvme0q2 previous)
cp -a "$tmp/t/proc/irq/58" "$tmp/t/proc/irq/999"
cp -a "$tmp/t/sys/kernel/irq/58" "$tmp/t/sys/kernel/irq/999"
mv "$pcidir/0000:00:04.0/msi_irqs/58" "$pcidir/0000:00:04.0/msi_irqs/999"
echo "eth0-rx-0" >"$tmp/t/sys/kernel/irq/58/actions"
grep -qx "0000:00:04.0 nvme0q1" <<<"$(placed_marks)" || fail "renumbered: check does not mark nvme0q1 (now irq 999) placed"
"$numastor" fix --sysroot "$tmp/t" --revert --json >"$tmp/renum.json"
rc=$?
[ "$rc" = 0 ] || fail "renumbered: revert exited $rc, expected 0"
[ "$(aff 999)" = "$prev58" ] || fail "renumbered: nvme0q1 under its new number 999 is $(aff 999), not restored to $prev58"
[ "$(aff 58)" = "$placed58" ] || fail "renumbered: revert wrote the old number 58 (now eth0-rx-0): $(aff 58)"
[ "$(aff 59)" = "$prev59" ] || fail "renumbered: the twin irq 59 was not restored"
python3 - "$tmp/renum.json" <<'PY' || fail "renumbered: revert JSON"
import json, sys
d = json.load(open(sys.argv[1]))
e = [x for x in d["reverted"] if x["name"] == "nvme0q1" and x["pci"] == "0000:00:04.0"][0]
assert e["irq"] == 999 and e["status"] == "restored" and e["restored"] is True, e
assert "irq 58 when placed" in e["what"], e
assert d["failed"] == 0 and d["left_alone"] == 0 and d["other_boot"] is False, d
PY

# a value changed since by someone else: left alone, noted (text and JSON); its twins restored
fresh
"$numastor" fix --sysroot "$tmp/t" >/dev/null
prev61=$(journal_val 0000:00:04.0 nvme0q4 previous)
[ "$(journal_val 0000:00:04.0 nvme0q3 irq)" = 60 ] || fail "changed: nvme0q3 is not irq 60"
cp -a "$tmp/t" "$tmp/t2"
echo 9 >"$tmp/t/proc/irq/60/smp_affinity_list"
echo 9 >"$tmp/t2/proc/irq/60/smp_affinity_list"
grep -q "0000:00:04.0 nvme0q3" <<<"$(placed_marks)" && fail "changed: check marks irq 60 placed though it holds another mask"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
rc=$?
[ "$rc" = 1 ] || fail "changed: revert exited $rc, expected 1"
[ "$(aff 60)" = 9 ] || fail "changed: revert overwrote irq 60, changed since by someone else: $(aff 60)"
[ "$(aff 61)" = "$prev61" ] || fail "changed: the twin irq 61 was not restored"
grep -q "irq 60 (nvme0q3 of 0000:00:04.0): stale, not touched: it is at 9 now, not at .* where numastor placed it: changed since by someone else" <<<"$(flat "$out")" ||
	fail "changed: no note for irq 60: $out"
grep -q "1 left alone" <<<"$(flat "$out")" || fail "changed: summary does not count it: $out"
# the same in JSON
"$numastor" fix --sysroot "$tmp/t2" --revert --json >"$tmp/changed.json"
python3 - "$tmp/changed.json" <<'PY' || fail "changed: revert JSON"
import json, sys
d = json.load(open(sys.argv[1]))
e = [x for x in d["reverted"] if x["name"] == "nvme0q3"][0]
assert e["status"] == "changed-since" and e["restored"] is False and "changed since" in e["problem"], e
assert e["irq"] == 60, e
assert d["left_alone"] == 1 and d["failed"] == 0, d
assert sum(x["status"] == "restored" for x in d["reverted"]) == len(d["reverted"]) - 1, d
PY
rm -rf "$tmp/t2"

# a journal from another boot: nothing reverted, reported, exit non-zero, the file kept, and a new
# fix refuses to add to it. Its twin, the same boot_id, reverts normally.
fresh
mkdir -p "$tmp/t/proc/sys/kernel/random"
echo 11111111-2222-3333-4444-555555555555 >"$tmp/t/proc/sys/kernel/random/boot_id"
before=$(affinities "$tmp/t")
"$numastor" fix --sysroot "$tmp/t" >/dev/null
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["boot_id"] == "11111111-2222-3333-4444-555555555555"' \
	"$tmp/t/run/numastor/journal.json" || fail "boot: the journal does not record the boot_id"
after=$(affinities "$tmp/t")
cp -a "$tmp/t" "$tmp/sameboot"
echo 99999999-8888-7777-6666-555555555555 >"$tmp/t/proc/sys/kernel/random/boot_id"
cp "$tmp/t/run/numastor/journal.json" "$tmp/journal-boot.json"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
rc=$?
[ "$rc" = 1 ] || fail "boot: revert of another boot's journal exited $rc, expected 1"
[ "$(affinities "$tmp/t")" = "$after" ] || fail "boot: revert wrote something from another boot's journal"
cmp -s "$tmp/t/run/numastor/journal.json" "$tmp/journal-boot.json" || fail "boot: the journal of another boot was not kept as it was"
grep -q "was written in another boot (boot_id 11111111-2222-3333-4444-555555555555; this boot is 99999999-8888-7777-6666-555555555555): nothing of it was reverted" <<<"$(flat "$out")" ||
	fail "boot: revert does not say the journal is from another boot: $out"
grep -q "then remove the file" <<<"$(flat "$out")" || fail "boot: revert does not say what to do: $out"
"$numastor" fix --sysroot "$tmp/t" --revert --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["other_boot"] is True and d["journal_boot_id"] == "11111111-2222-3333-4444-555555555555", d
assert d["reverted"] and all(x["status"] == "other-boot" and not x["restored"] for x in d["reverted"]), d
assert d["left_alone"] == len(d["reverted"]), d
' || fail "boot: revert --json of another boot's journal"
[ -z "$(placed_marks)" ] || fail "boot: check marks IRQs placed from another boot's journal"
out=$("$numastor" fix --sysroot "$tmp/t" 2>&1)
[ $? = 3 ] && grep -q "from another boot" <<<"$out" || fail "boot: fix added to another boot's journal: $out"
[ "$(affinities "$tmp/t")" = "$after" ] || fail "boot: the refused fix wrote"
"$numastor" fix --sysroot "$tmp/sameboot" --revert >/dev/null || fail "boot: the same boot's revert failed"
[ "$(affinities "$tmp/sameboot")" = "$before" ] || fail "boot: the same boot's revert did not restore everything"
rm -rf "$tmp/sameboot"

# a journal of the old format (version 1: IRQs by number, disks by name) is refused whole
fresh
mkdir -p "$tmp/t/run/numastor"
echo '{"version": 1, "boot_id": null, "irqs": [{"irq": 57, "name": "nvme0q0", "previous": "5", "placed": "0"}],
 "rq_affinity": [], "module_groups": [], "installed": []}' >"$tmp/t/run/numastor/journal.json"
cp "$tmp/t/run/numastor/journal.json" "$tmp/journal-v1.json"
before=$(affinities "$tmp/t")
out=$("$numastor" fix --sysroot "$tmp/t" --revert 2>&1)
rc=$?
[ "$rc" = 3 ] || fail "v1: revert of a version 1 journal exited $rc, expected 3"
grep -q "is a version 1 journal" <<<"$(flat "$out")" && grep -q "Nothing was reverted and the file is kept" <<<"$(flat "$out")" ||
	fail "v1: message: $out"
[ "$(affinities "$tmp/t")" = "$before" ] || fail "v1: revert wrote from a version 1 journal"
cmp -s "$tmp/t/run/numastor/journal.json" "$tmp/journal-v1.json" || fail "v1: the version 1 journal was changed"
out=$("$numastor" fix --sysroot "$tmp/t" 2>&1)
[ $? = 3 ] && [ "$(affinities "$tmp/t")" = "$before" ] || fail "v1: fix wrote over a version 1 journal: $out"
cmp -s "$tmp/t/run/numastor/journal.json" "$tmp/journal-v1.json" || fail "v1: fix changed the version 1 journal"

# a disk renamed (the driver reloaded: nvme0n1 is now nvme1n1, and another disk took the name
# nvme0n1): rq_affinity restored on the disk by identity, the impostor untouched
fixture=managed-2n-nvme-confined
fresh
ctl=$tmp/t/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/nvme/nvme0
"$numastor" fix --sysroot "$tmp/t" --rq-affinity=2 >/dev/null
[ "$(cat "$ctl/nvme0n1/queue/rq_affinity")" = 2 ] || fail "renamed: fix did not set rq_affinity"
python3 -c 'import json,sys; e = json.load(open(sys.argv[1]))["rq_affinity"][0]; assert e["disk"] == "wwid:eui.0025388a01000000" and e["device"] == "nvme0n1", e' \
	"$tmp/t/run/numastor/journal.json" || fail "renamed: the journal does not key rq_affinity by identity"
mv "$ctl/nvme0n1" "$ctl/nvme1n1"
rm "$tmp/t/sys/block/nvme0n1"
ln -s ../devices/pci0000:80/0000:80:01.0/0000:81:00.0/nvme/nvme0/nvme1n1 "$tmp/t/sys/block/nvme1n1"
cp -a "$ctl/nvme1n1" "$ctl/nvme0n1"
echo eui.0025388a010000ff >"$ctl/nvme0n1/wwid"
ln -s ../devices/pci0000:80/0000:80:01.0/0000:81:00.0/nvme/nvme0/nvme0n1 "$tmp/t/sys/block/nvme0n1"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
rc=$?
[ "$rc" = 0 ] || fail "renamed: revert exited $rc: $out"
[ "$(cat "$ctl/nvme1n1/queue/rq_affinity")" = 1 ] || fail "renamed: nvme1n1 (the journaled disk) not restored: $(cat "$ctl/nvme1n1/queue/rq_affinity")"
[ "$(cat "$ctl/nvme0n1/queue/rq_affinity")" = 2 ] || fail "renamed: revert wrote the impostor now named nvme0n1"
grep -q "nvme1n1 rq_affinity (wwid:eui.0025388a01000000, nvme0n1 when placed): restored 1" <<<"$(flat "$out")" || fail "renamed: report: $out"
# rq_affinity changed since: left alone; the disk gone (its name now another's): reported
fresh
"$numastor" fix --sysroot "$tmp/t" --rq-affinity=2 >/dev/null
echo 0 >"$ctl/nvme0n1/queue/rq_affinity"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
[ $? = 1 ] && [ "$(cat "$ctl/nvme0n1/queue/rq_affinity")" = 0 ] || fail "rq changed since: overwritten: $out"
grep -q "it is 0 now, not 2 as numastor set it: changed since by someone else" <<<"$(flat "$out")" || fail "rq changed since: note: $out"
fresh
"$numastor" fix --sysroot "$tmp/t" --rq-affinity=2 >/dev/null
echo eui.00000000000000aa >"$ctl/nvme0n1/wwid"
out=$("$numastor" fix --sysroot "$tmp/t" --revert)
[ $? = 1 ] && [ "$(cat "$ctl/nvme0n1/queue/rq_affinity")" = 2 ] || fail "rq gone: another disk under the name was written: $out"
grep -q "no disk is wwid:eui.0025388a01000000 now" <<<"$(flat "$out")" || fail "rq gone: note: $out"
fixture=cloud-2n64c-8nvme-forced-node0
fi

if part rest; then
# irqbalance-policy judges a node as check does: with the module build's manifest saying the
# kernel has the nvme fix, a first-memory-node NVMe on a node-less bus was set, not forced,
# and gets no numa_node=-1; without the manifest (5.10: it may force) it does
python3 "$here/fixtures/gen-fixtures.py" "$tmp/gen" node-set-manifest-upstream forced-sibling-other-node >/dev/null
out=$("$numastor" irqbalance-policy --sysroot "$tmp/gen/node-set-manifest-upstream" /sys/devices/pci0000:00/0000:00:04.0 99)
grep -q "numa_node=-1" <<<"$(flat "$out")" && fail "irqbalance-policy: numa_node=-1 for a node the manifest says nvme cannot force: $out"
out=$("$numastor" irqbalance-policy --sysroot "$tmp/gen/forced-sibling-other-node" /sys/devices/pci0000:00/0000:00:04.0 99)
grep -qx "numa_node=-1" <<<"$out" || fail "irqbalance-policy: no numa_node=-1 for the forced NVMe beside a NIC on node 1: $out"

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
fi

if [ "$fails" -gt 0 ]; then
	echo "fix: $fails failed"
	exit 1
fi
echo "fix: all passed"
