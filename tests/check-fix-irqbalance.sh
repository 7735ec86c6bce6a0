#!/bin/bash
# numastor fix and irqbalance, on a captured tree with test-only writes
# (NUMASTOR_TEST_SYSROOT_WRITES=1) and a stand-in systemctl (NUMASTOR_TEST_SYSTEMCTL) that logs
# its calls and, on try-restart, "restarts" the fixture's irqbalance (pid 812) with or without
# the policy script as the drop-in link says:
# - irqbalance running without numastor's policy script: fix places and exits 1, saying that
#   irqbalance will move the vectors back (text, --quiet's stderr, JSON undoes_placement);
#   --dry-run exits 0;
# - --irqbalance=policy: journals, links the drop-in, reloads systemd, restarts irqbalance, and
#   exits 0 since irqbalance now runs with the script; --revert removes the link again;
# - refused (exit 3, nothing written) while a drop-in, IRQBALANCE_ARGS or the running daemon
#   gives irqbalance a policy script of its own, naming it; --dry-run says it would be (exit 1);
# - an operator's link at the drop-in's path is left alone.
set -u
# python3 found through PATH once (a pyenv shim there costs 0.3 s a call), then run directly
PY=$(python3 -c 'import sys; print(sys.executable)') || PY=python3
python3() { "$PY" "$@"; }
numastor=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /dev/shm/numastor-fixib.XXXXXX 2>/dev/null || mktemp -d /tmp/numastor-fixib.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# fix's text wraps its sentences at 80 columns (issue 32): read them whole, each line's break a space
flat() { printf '%s\n' "$1" | tr '\n' ' ' | tr -s ' '; }
export NUMASTOR_TEST_SYSROOT_WRITES=1 NO_COLOR=1
if ! grep -q -a NUMASTOR_TEST_SYSTEMCTL "$numastor"; then
	echo "FAIL: $numastor was built without the test-only switches (NUMASTOR_TEST_SYSTEMCTL):"
	echo "      configure the build with -Dtest_hooks=true; nothing was tested"
	exit 1
fi
fixture=cloud-2n64c-8nvme-forced-node0
t=$tmp/t
link=$t/etc/systemd/system/irqbalance.service.d/numastor-policy.conf
journal=$t/var/lib/numastor/irqbalance-policy.json
fresh() {
	rm -rf "$t" "$tmp/systemctl.log"
	[ -d "$tmp/gen/$fixture" ] || python3 "$here/fixtures/gen-fixtures.py" "$tmp/gen" "$fixture" >/dev/null
	cp -a "$tmp/gen/$fixture" "$t"
}
# the stand-in: lib/act/exec runs it with a fixed environment, so the tree's path is written in
cat >"$tmp/systemctl" <<SH
#!/bin/sh
echo "\$*" >>"$tmp/systemctl.log"
if [ "\$1" = try-restart ] && [ ! -e "$tmp/systemctl-noop" ]; then
	if [ -L "$link" ]; then
		printf '/usr/sbin/irqbalance\0--foreground\0--policyscript=/usr/libexec/numastor/irqbalance-policy\0' >"$t/proc/812/cmdline"
	else
		printf '/usr/sbin/irqbalance\0--foreground\0' >"$t/proc/812/cmdline"
	fi
fi
[ -e "$tmp/systemctl-fails" ] && { echo "Failed to restart irqbalance.service: boom" >&2; exit 1; }
exit 0
SH
chmod +x "$tmp/systemctl"
export NUMASTOR_TEST_SYSTEMCTL=$tmp/systemctl
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k]
print(json.dumps(d))' "$@"; }

# irqbalance without the policy script: the placement would not hold, exit 1 with the reason
fresh
NUMASTOR_TEST_SYSROOT_WRITES=0 "$numastor" fix --sysroot "$t" >/dev/null
[ $? = 0 ] || fail "fix --dry-run (a captured tree) with irqbalance running without the policy should exit 0"
"$numastor" fix --sysroot "$t" --json >"$tmp/a.json"
rc=$?
[ "$rc" = 1 ] || fail "fix with irqbalance running without the policy exited $rc, expected 1"
[ "$(field "$tmp/a.json" irqbalance.undoes_placement)" = true ] || fail "JSON: undoes_placement is not true"
grep -q "will move these vectors back" <<<"$(field "$tmp/a.json" irqbalance.advice)" || fail "JSON: no reason in advice"
[ "$(field "$tmp/a.json" summary.failed)" = 0 ] || fail "JSON: writes failed"
"$numastor" fix --sysroot "$t" --revert >/dev/null || fail "revert after the exit-1 fix failed"
out=$("$numastor" fix --sysroot "$t" 2>&1)
[ $? = 1 ] || fail "text fix did not exit 1"
grep -q " irqbalance: irqbalance (pid 812) runs without numastor's policy script and will move these vectors back" <<<"$(flat "$out")" ||
	fail "text fix does not say why it exits 1: $out"
"$numastor" fix --sysroot "$t" --revert >/dev/null
out=$("$numastor" fix --sysroot "$t" --quiet 2>&1 >/dev/null)
[ $? = 1 ] || fail "fix --quiet did not exit 1"
grep -q "^numastor fix: irqbalance (pid 812) runs without" <<<"$out" || fail "fix --quiet: no reason on stderr: $out"
"$numastor" fix --sysroot "$t" --revert >/dev/null
[ -e "$tmp/systemctl.log" ] && fail "fix without --irqbalance=policy ran systemctl: $(cat "$tmp/systemctl.log")"
[ -e "$link" ] && fail "fix without --irqbalance=policy linked the drop-in"

# --irqbalance=policy: --dry-run says what it would do and changes nothing
out=$(NUMASTOR_TEST_SYSROOT_WRITES=0 "$numastor" fix --sysroot "$t" --irqbalance=policy)
[ $? = 0 ] || fail "fix --irqbalance=policy --dry-run exited non-zero"
grep -q "would link /etc/systemd/system/irqbalance.service.d/numastor-policy.conf" <<<"$(flat "$out")" || fail "dry run: $out"
[ -e "$link" ] || [ -e "$journal" ] || [ -e "$tmp/systemctl.log" ] && fail "the dry run changed something"

# enable: journal, link, reload, restart; irqbalance now runs with the policy: exit 0
"$numastor" fix --sysroot "$t" --irqbalance=policy --json >"$tmp/p.json"
rc=$?
[ "$rc" = 0 ] || fail "fix --irqbalance=policy exited $rc, expected 0: $(field "$tmp/p.json" irqbalance)"
target=$(readlink "$link")
case $target in
*/share/numastor/irqbalance-policy.conf) ;;
*) fail "the link points to '$target', not numastor's drop-in" ;;
esac
[ -f "$journal" ] || fail "the drop-in's link is not journaled in /var/lib/numastor"
python3 - "$journal" <<'PY' || fail "the drop-in journal is not what --revert reads"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["version"] == 1 and j["link"] == "/etc/systemd/system/irqbalance.service.d/numastor-policy.conf", j
assert j["target"].endswith("/share/numastor/irqbalance-policy.conf") and j["made_dir"] is True, j
PY
[ "$(cat "$tmp/systemctl.log" 2>/dev/null)" = "daemon-reload
try-restart irqbalance.service" ] || fail "systemctl calls: $(cat "$tmp/systemctl.log" 2>/dev/null)"
[ "$(field "$tmp/p.json" irqbalance.drop_in.result)" = '"enabled"' ] || fail "JSON: drop_in.result is not enabled"
[ "$(field "$tmp/p.json" irqbalance.drop_in.enabled)" = true ] || fail "JSON: drop_in.enabled is not true"
[ "$(field "$tmp/p.json" irqbalance.undoes_placement)" = false ] || fail "JSON: undoes_placement after the restart with the policy"
[ -f "$t/run/numastor/journal.json" ] || fail "no IRQ journal: the policy would ban nothing"
# again: the link is there already, irqbalance runs with it: nothing to restart, exit 0
rm -f "$tmp/systemctl.log"
"$numastor" fix --sysroot "$t" --irqbalance=policy >"$tmp/again.txt" || fail "a second --irqbalance=policy exited $?"
grep -q "already linked" "$tmp/again.txt" || fail "a second --irqbalance=policy: $(cat "$tmp/again.txt")"
[ -e "$tmp/systemctl.log" ] && fail "a second --irqbalance=policy restarted irqbalance"

# revert removes the link (and the directory it made), reloads, restarts, forgets the journal
rm -f "$tmp/systemctl.log"
"$numastor" fix --sysroot "$t" --revert --json >"$tmp/r.json" || fail "revert exited $?"
[ -e "$link" ] || [ -L "$link" ] && fail "revert left the drop-in's link"
[ -d "$t/etc/systemd/system/irqbalance.service.d" ] && fail "revert left the directory it made"
[ -e "$journal" ] && fail "revert left the drop-in journal"
[ "$(field "$tmp/r.json" irqbalance_policy.removed)" = true ] || fail "revert JSON: irqbalance_policy.removed"
grep -q "try-restart irqbalance.service" "$tmp/systemctl.log" 2>/dev/null || fail "revert did not restart irqbalance"
grep -q -- "--policyscript" "$t/proc/812/cmdline" && fail "irqbalance still runs with the policy after revert"
out=$("$numastor" fix --sysroot "$t" --revert --json)
[ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["irqbalance_policy"])' <<<"$out")" = None ] ||
	fail "a second revert found a drop-in to remove"

# irqbalance restarted, but still without the policy script: the placement does not hold, exit 1
fresh
touch "$tmp/systemctl-noop"
"$numastor" fix --sysroot "$t" --irqbalance=policy --json >"$tmp/noop.json"
rc=$?
rm -f "$tmp/systemctl-noop"
[ "$rc" = 1 ] || fail "irqbalance restarted without the policy: fix --irqbalance=policy exited $rc, expected 1"
[ "$(field "$tmp/noop.json" irqbalance.undoes_placement)" = true ] || fail "irqbalance restarted without the policy: undoes_placement is not true"
# an operator who replaced the link since: revert leaves theirs, says so, exit 1
ln -sfn /etc/site/irqbalance.conf "$link"
out=$("$numastor" fix --sysroot "$t" --revert 2>&1)
[ $? = 1 ] || fail "revert with the operator's link in place of numastor's did not exit 1"
[ "$(readlink "$link")" = /etc/site/irqbalance.conf ] || fail "revert removed the operator's link"
grep -q "now links to /etc/site/irqbalance.conf, not numastor's drop-in: left alone" <<<"$out" || fail "revert over the operator's link: $out"
[ -e "$journal" ] && fail "revert kept the drop-in journal after saying what it left alone"

# an operator's drop-in directory stays; a restart that fails is exit 1 with what systemctl said
fresh
mkdir -p "$t/etc/systemd/system/irqbalance.service.d"
echo "[Service]
CPUQuota=50%" >"$t/etc/systemd/system/irqbalance.service.d/limits.conf"
touch "$tmp/systemctl-fails"
out=$("$numastor" fix --sysroot "$t" --irqbalance=policy 2>&1)
[ $? = 1 ] || fail "a failed restart did not exit 1"
grep -q "boom" <<<"$out" || fail "a failed restart does not say what systemctl said: $out"
rm -f "$tmp/systemctl-fails"
"$numastor" fix --sysroot "$t" --revert >/dev/null
[ -f "$t/etc/systemd/system/irqbalance.service.d/limits.conf" ] || fail "revert removed the operator's drop-in"

# refusals: a policy script of the operator's own, named; nothing is written
refused() { # WHAT: fix --irqbalance=policy must refuse, naming WHAT, and write nothing
	rm -f "$tmp/systemctl.log"
	local before
	before=$(cat "$t"/proc/irq/*/smp_affinity_list | md5sum)
	out=$("$numastor" fix --sysroot "$t" --irqbalance=policy 2>&1)
	rc=$?
	[ "$rc" = 3 ] || fail "$1: fix --irqbalance=policy exited $rc, expected 3: $out"
	grep -q "refused: --irqbalance=policy: .*$1" <<<"$(flat "$out")" || fail "$1: the refusal does not name it: $out"
	[ "$(cat "$t"/proc/irq/*/smp_affinity_list | md5sum)" = "$before" ] || fail "$1: the refused fix moved IRQs"
	[ -e "$t/run/numastor/journal.json" ] && fail "$1: the refused fix journaled"
	readlink "$link" 2>/dev/null | grep -q share/numastor && fail "$1: the refused fix linked the drop-in"
	[ -e "$journal" ] || [ -e "$tmp/systemctl.log" ] && fail "$1: the refused fix journaled the link or restarted"
	out=$(NUMASTOR_TEST_SYSROOT_WRITES=0 "$numastor" fix --sysroot "$t" --irqbalance=policy 2>&1)
	[ $? = 1 ] || fail "$1: --dry-run of a refused --irqbalance=policy did not exit 1"
	grep -q "would be refused: .*$1" <<<"$(flat "$out")" || fail "$1: dry run: $out"
}
fresh
mkdir -p "$t/etc/systemd/system/irqbalance.service.d"
echo "[Service]
ExecStart=
ExecStart=/usr/sbin/irqbalance --foreground --policyscript=/usr/local/bin/my-policy" >"$t/etc/systemd/system/irqbalance.service.d/override.conf"
refused "the drop-in /etc/systemd/system/irqbalance.service.d/override.conf gives irqbalance the policy script /usr/local/bin/my-policy"
echo "[Service]
ExecStart=
ExecStart=/usr/sbin/irqbalance --foreground --banirq=7" >"$t/etc/systemd/system/irqbalance.service.d/override.conf"
refused "override.conf replaces irqbalance's ExecStart="
fresh
echo 'IRQBALANCE_ARGS="--foreground -l /opt/site/ib-policy"' >"$t/etc/default/irqbalance"
refused "IRQBALANCE_ARGS in /etc/default/irqbalance gives irqbalance the policy script /opt/site/ib-policy"
fresh
printf '/usr/sbin/irqbalance\0--policyscript\0/etc/ib.d\0' >"$t/proc/812/cmdline"
refused "the running irqbalance (pid 812) has the policy script /etc/ib.d"
fresh
mkdir -p "$t/etc/systemd/system/irqbalance.service.d"
ln -s /etc/site/irqbalance.conf "$link"
refused "numastor-policy.conf is a link to /etc/site/irqbalance.conf"
[ "$(readlink "$link")" = /etc/site/irqbalance.conf ] || fail "the operator's link was touched"
# numastor's own script given by the operator already: nothing to link, and it holds
fresh
echo 'IRQBALANCE_ARGS="--policyscript=/usr/libexec/numastor/irqbalance-policy"' >"$t/etc/default/irqbalance"
printf '/usr/sbin/irqbalance\0--foreground\0--policyscript=/usr/libexec/numastor/irqbalance-policy\0' >"$t/proc/812/cmdline"
out=$("$numastor" fix --sysroot "$t" --irqbalance=policy 2>&1)
[ $? = 0 ] || fail "numastor's script in IRQBALANCE_ARGS: exit $?: $out"
grep -q "given in IRQBALANCE_ARGS in /etc/default/irqbalance already" <<<"$(flat "$out")" || fail "numastor's script in IRQBALANCE_ARGS: $out"
[ -L "$link" ] && fail "linked the drop-in although IRQBALANCE_ARGS gives numastor's script"

"$numastor" fix --irqbalance=banana --dry-run >/dev/null 2>&1
[ $? = 3 ] || fail "--irqbalance=banana should be refused with exit 3"
"$numastor" fix --irqbalance=policy --revert >/dev/null 2>&1
[ $? = 3 ] || fail "--irqbalance=policy --revert should be refused with exit 3"

if [ "$fails" -gt 0 ]; then
	echo "fix-irqbalance: $fails failed"
	exit 1
fi
echo "fix-irqbalance: all passed"
