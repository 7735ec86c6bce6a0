#!/bin/bash
# numastor fix fails closed (issue 11, items 2 and 4), on captured trees with test-only writes
# (NUMASTOR_TEST_SYSROOT_WRITES=1):
# - any exclusion input that does not parse (irqbalance's banned list, or its older mask
#   IRQBALANCE_BANNED_CPUS, from the daemon's environ or /etc/default|sysconfig/irqbalance, cpu/isolated, cpu/nohz_full, cpu/online) makes fix and
#   fix --dry-run refuse with exit 3, naming the file and the value, and nothing is written; each
#   has a twin that parses and is honoured;
# - a journal is checked like input: a structurally wrong one is refused with exit 3 and kept
#   byte for byte, by fix and by --revert (tests/check-journal-schema.py runs the corpus through
#   the schema too); a previous value that is not a CPU list is never written;
# - numastor's state directories must be real directories, owned by root, not group- or
#   world-writable, no symlink; otherwise fix refuses naming why;
# - a previous value read that is no CPU list is never journaled, and that IRQ never written.
set -u
# python3 found through PATH once (a pyenv shim there costs 0.3 s a call), then run directly
PY=$(python3 -c 'import sys; print(sys.executable)') || PY=python3
python3() { "$PY" "$@"; }
numastor=$1
shift
# the parts to run (a mutant's kill command names the one that kills it): banned (irqbalance's
# list and mask), cpu (cpu/isolated, nohz_full, online), previous, state; default all
parts=" ${*:-banned cpu previous state} "
part() { [[ $parts == *" $1 "* ]]; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /dev/shm/numastor-fixsafe.XXXXXX 2>/dev/null || mktemp -d /tmp/numastor-fixsafe.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { # NUMASTOR_FAIL_FAST=1 (tests/mutation/run.sh): the first failure ends the run
	echo "FAIL: $*"
	fails=$((fails + 1))
	[[ ${NUMASTOR_FAIL_FAST:-0} != 1 ]] || exit 1
}
export NUMASTOR_TEST_SYSROOT_WRITES=1 NO_COLOR=1
if ! grep -q -a NUMASTOR_TEST_SYSROOT_WRITES "$numastor"; then
	echo "FAIL: $numastor was built without the test-only switches (-Dtest_hooks=true): nothing was tested"
	exit 1
fi
fixture=cloud-2n64c-8nvme-forced-node0
python3 "$here/fixtures/gen-fixtures.py" "$tmp/gen" "$fixture" >/dev/null
fresh() { # a fresh copy of the fixture at $tmp/t
	rm -rf "$tmp/t"
	cp -a "$tmp/gen/$fixture" "$tmp/t"
}
affinities() { # every IRQ's smp_affinity_list, one "N value" per line
	for f in "$1"/proc/irq/*/smp_affinity_list; do
		n=${f%/smp_affinity_list}
		echo "${n##*/} $(cat "$f")"
	done | sort -n
}
cpu=sys/devices/system/cpu

# --- exclusion inputs ---------------------------------------------------------------------
# refused WHAT MSG: fix --dry-run, fix --dry-run --json and fix (writing) all exit 3 with MSG on
# stderr, print nothing on stdout (under --json: the error document), and change no IRQ and
# write no journal
refused() {
	local what=$1 msg=$2 before
	before=$(affinities "$tmp/t")
	for args in "--dry-run" "--dry-run --json" ""; do
		# shellcheck disable=SC2086
		"$numastor" fix --sysroot "$tmp/t" $args >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ "$rc" = 3 ] || fail "$what: fix $args exited $rc, expected 3: $(head -c 300 "$tmp/err")"
		if [[ $args == *--json* ]]; then
			# under --json: the error document only (schema/numastor-error.schema.json), no plan
			python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert set(d) >= {"error", "host"} and "irqs" not in d and d["error"]["exit_code"] == 3' "$tmp/out" ||
				fail "$what: fix $args printed no error document: $(head -c 300 "$tmp/out")"
		else
			[ -s "$tmp/out" ] && fail "$what: fix $args printed a plan: $(head -c 300 "$tmp/out")"
		fi
		grep -qF -- "$msg" "$tmp/err" || fail "$what: fix $args does not say: $msg; it said: $(cat "$tmp/err")"
		grep -q "fix never places IRQs from a partial set of excluded CPUs" "$tmp/err" ||
			fail "$what: fix $args does not say why it refuses: $(cat "$tmp/err")"
	done
	[ "$(affinities "$tmp/t")" = "$before" ] || fail "$what: the refused fix changed an IRQ"
	[ -e "$tmp/t/run/numastor/journal.json" ] && fail "$what: the refused fix wrote a journal"
}
# honoured WHAT EXCLUDED ALLOWED: the twin that parses plans, never onto EXCLUDED (a cpulist)
honoured() {
	NUMASTOR_TEST_SYSROOT_WRITES=0 "$numastor" fix --sysroot "$tmp/t" --dry-run --json >"$tmp/plan.json" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 0 ] || fail "$1 (twin): fix --dry-run exited $rc: $(cat "$tmp/err")"
	python3 - "$tmp/plan.json" "$2" "$3" <<'PY' || fail "$1 (twin): the plan does not honour it"
import json, sys
def cpus(s):
    out = set()
    for part in (s or "").split(","):
        if part:
            a, _, b = part.partition("-")
            out |= set(range(int(a), int(b or a) + 1))
    return out
plan, excluded, allowed = json.load(open(sys.argv[1])), cpus(sys.argv[2]), sys.argv[3]
assert plan["allowed_cpus"] == allowed, plan["allowed_cpus"]
assert [e for e in plan["irqs"] if e["action"] == "move"], "nothing planned"
for e in plan["irqs"]:
    assert not cpus(e["target"]) & excluded, f"irq {e['irq']} planned onto {e['target']}"
PY
}

if part banned; then
# irqbalance's banned list with a trailing comma in /etc/default/irqbalance (the issue's case:
# before, it parsed as nothing banned and 12+ IRQs went onto CPUs 0-3)
fresh
echo 'IRQBALANCE_BANNED_CPULIST="0-3,"' >>"$tmp/t/etc/default/irqbalance"
refused "banned list 0-3, in /etc/default/irqbalance" \
	"IRQBALANCE_BANNED_CPULIST in /etc/default/irqbalance is '0-3,', which does not parse as a CPU list"
fresh
echo 'IRQBALANCE_BANNED_CPULIST="0-3"' >>"$tmp/t/etc/default/irqbalance"
honoured "banned list 0-3 in /etc/default/irqbalance" 0-3 4-63

# the same in the running daemon's environment (which wins over the file)
fresh
pid=$(grep -l '^irqbalance$' "$tmp"/t/proc/[0-9]*/comm | head -1 | sed 's|.*/proc/\([0-9]*\)/comm|\1|')
[ -n "$pid" ] || fail "the fixture has no irqbalance process"
printf 'LANG=C\0IRQBALANCE_BANNED_CPULIST=0-3,\0' >"$tmp/t/proc/$pid/environ"
echo 'IRQBALANCE_BANNED_CPULIST="8-9"' >>"$tmp/t/etc/default/irqbalance"
refused "banned list 0-3, in the daemon's environment" \
	"IRQBALANCE_BANNED_CPULIST in /proc/$pid/environ is '0-3,', which does not parse as a CPU list"
printf 'LANG=C\0IRQBALANCE_BANNED_CPULIST=0-3\0' >"$tmp/t/proc/$pid/environ"
honoured "banned list 0-3 in the daemon's environment" 0-3 4-63

# /etc/sysconfig/irqbalance (no /etc/default/irqbalance)
fresh
rm -f "$tmp/t/etc/default/irqbalance"
mkdir -p "$tmp/t/etc/sysconfig"
echo 'IRQBALANCE_BANNED_CPULIST=4-7,,' >"$tmp/t/etc/sysconfig/irqbalance"
refused "banned list in /etc/sysconfig/irqbalance" \
	"IRQBALANCE_BANNED_CPULIST in /etc/sysconfig/irqbalance is '4-7,,', which does not parse"
echo 'IRQBALANCE_BANNED_CPULIST=4-7' >"$tmp/t/etc/sysconfig/irqbalance"
honoured "banned list in /etc/sysconfig/irqbalance" 4-7 0-3,8-63

# the older hex mask IRQBALANCE_BANNED_CPUS, which irqbalance 1.9 reads first (then not the list)
fresh
echo 'IRQBALANCE_BANNED_CPUS=0000000g' >>"$tmp/t/etc/default/irqbalance"
refused "banned mask 0000000g in /etc/default/irqbalance" \
	"IRQBALANCE_BANNED_CPUS in /etc/default/irqbalance is '0000000g', which does not parse as a CPU mask"
fresh
echo 'IRQBALANCE_BANNED_CPUS=0000000f' >>"$tmp/t/etc/default/irqbalance"
honoured "banned mask f in /etc/default/irqbalance" 0-3 4-63
echo 'IRQBALANCE_BANNED_CPULIST=8-9' >>"$tmp/t/etc/default/irqbalance"
honoured "the mask wins over the list (irqbalance 1.9, cputree.c setup_banned_cpus)" 0-3 4-63

fi

if part cpu; then
# cpu/isolated, cpu/nohz_full, cpu/online garbled; cpu/online missing (the offline CPUs unknown)
fresh
echo "0-3," >"$tmp/t/$cpu/isolated"
refused "cpu/isolated 0-3," "/$cpu/isolated reads '0-3,', which does not parse as a CPU list"
echo "0-3" >"$tmp/t/$cpu/isolated"
honoured "cpu/isolated 0-3" 0-3 4-63
fresh
printf '2-\033[31m5\n' >"$tmp/t/$cpu/nohz_full"
refused "cpu/nohz_full garbled" "/$cpu/nohz_full reads '2-\\x1b[31m5', which does not parse as a CPU list"
echo "2-5" >"$tmp/t/$cpu/nohz_full"
honoured "cpu/nohz_full 2-5" 2-5 0-1,6-63
fresh
echo "0-62x" >"$tmp/t/$cpu/online"
refused "cpu/online garbled" "/$cpu/online reads '0-62x', which does not parse as a CPU list"
rm "$tmp/t/$cpu/online"
refused "cpu/online missing" "/$cpu/online cannot be read (No such file or directory)"
echo "0-61" >"$tmp/t/$cpu/online"
honoured "cpu/online 0-61 (62, 63 offline)" 62-63 0-61

fi

if part previous; then
# --- a previous value that is no CPU list is never journaled, nor that IRQ written ---------
fresh
before=$(affinities "$tmp/t")
echo "zz,," >"$tmp/t/proc/irq/58/smp_affinity_list"
"$numastor" fix --sysroot "$tmp/t" --json >"$tmp/out.json" 2>"$tmp/err"
python3 - "$tmp/out.json" "$tmp/t" <<'PY' || fail "an IRQ whose smp_affinity_list reads zz,, was journaled or written"
import json, sys
plan, root = json.load(open(sys.argv[1])), sys.argv[2]
e = [x for x in plan["irqs"] if x["irq"] == 58][0]
assert e["result"]["status"] == "failed", e["result"]
assert open(f"{root}/proc/irq/58/smp_affinity_list").read().strip() == "zz,,"
j = json.load(open(f"{root}/run/numastor/journal.json"))
assert 58 not in [x["irq"] for x in j["irqs"]], "irq 58 journaled with previous zz,,"
assert len(j["irqs"]) > 1, "nothing else journaled"
PY

fi

if part state; then
# --- numastor's state directories ---------------------------------------------------------
# state_refused WHAT MSG [ARGS]: fix ARGS exits 3 naming MSG, writes no IRQ and nothing outside
state_refused() {
	local before
	before=$(affinities "$tmp/t")
	"$numastor" fix --sysroot "$tmp/t" ${3:-} >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 3 ] || fail "$1: fix ${3:-} exited $rc, expected 3: $(cat "$tmp/err")"
	grep -qF -- "$2" "$tmp/err" || fail "$1: fix ${3:-} does not say: $2; it said: $(cat "$tmp/err")"
	[ "$(affinities "$tmp/t")" = "$before" ] || fail "$1: fix ${3:-} wrote an IRQ"
	[ -z "$(ls -A "$tmp/elsewhere" 2>/dev/null)" ] || fail "$1: fix ${3:-} wrote into $tmp/elsewhere: $(ls "$tmp/elsewhere")"
}
fresh
rm -rf "$tmp/elsewhere" && mkdir "$tmp/elsewhere"
rm -rf "$tmp/t/run/numastor" && ln -s "$tmp/elsewhere" "$tmp/t/run/numastor"
state_refused "run/numastor a symlink out of the tree" "refused: /run/numastor is a symlink"
state_refused "run/numastor a symlink out of the tree" "refused: /run/numastor is a symlink" --revert
rm "$tmp/t/run/numastor" && mkdir "$tmp/t/run/inside" && ln -s ../run/inside "$tmp/t/run/numastor"
state_refused "run/numastor a symlink inside the tree" "refused: /run/numastor is a symlink"
rm "$tmp/t/run/numastor" && mv "$tmp/t/run" "$tmp/t/run.real" && ln -s run.real "$tmp/t/run"
state_refused "run a symlink" "refused: /run is a symlink"
rm "$tmp/t/run" && mv "$tmp/t/run.real" "$tmp/t/run" && mkdir -p "$tmp/t/run/numastor"
chown 65534 "$tmp/t/run/numastor"
state_refused "run/numastor owned by another user" "refused: /run/numastor is owned by uid 65534, not by root"
chown 0 "$tmp/t/run/numastor" && chmod 0775 "$tmp/t/run/numastor"
state_refused "run/numastor group-writable" "refused: /run/numastor is group-writable (mode 0775)"
chmod 0757 "$tmp/t/run/numastor"
state_refused "run/numastor world-writable" "refused: /run/numastor is world-writable (mode 0757)"
chmod 0755 "$tmp/t/run/numastor"
mkdir -p "$tmp/t/var/lib" && ln -s "$tmp/elsewhere" "$tmp/t/var/lib/numastor"
state_refused "var/lib/numastor a symlink" "refused: /var/lib/numastor is a symlink" --revert
rm "$tmp/t/var/lib/numastor" && mkdir "$tmp/t/var/lib/numastor" && chmod 0777 "$tmp/t/var/lib/numastor"
state_refused "var/lib/numastor world-writable" "refused: /var/lib/numastor is world-writable" --revert
chmod 0700 "$tmp/t/var/lib/numastor"
# the twin: the real directories, root's, 0755 and 0700: fix and --revert work
# (exit 1: the fixture's irqbalance runs without numastor's policy script, and fix says so)
"$numastor" fix --sysroot "$tmp/t" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q "will move these vectors back" "$tmp/out" || fail "state twin: fix failed: $(cat "$tmp/err")"
[ -f "$tmp/t/run/numastor/journal.json" ] || fail "state twin: no journal"
"$numastor" fix --sysroot "$tmp/t" --revert >/dev/null 2>"$tmp/err" || fail "state twin: revert failed: $(cat "$tmp/err")"

fi

if [ "$fails" -gt 0 ]; then
	echo "fixsafe: $fails failed"
	exit 1
fi
echo "fixsafe: all passed"
