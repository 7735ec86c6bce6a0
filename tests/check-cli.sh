#!/bin/bash
# The command line: help, version, and clear errors (exit 3) for bad input.
set -u
numastor=$1
fails=0
tmp=$(mktemp -d /tmp/numastor-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# expect CODE PATTERN CMD...: exit code CODE and PATTERN somewhere in stdout+stderr
expect() {
	local code=$1 pattern=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != "$code" ]; then
		echo "FAIL: '$*' exited $rc, expected $code; output: ${out:0:300}"
		fails=$((fails + 1))
	elif ! grep -q -- "$pattern" <<<"$out"; then
		echo "FAIL: '$*' output lacks '$pattern': ${out:0:300}"
		fails=$((fails + 1))
	fi
}

version=$(sed -n "s/^ *version : '\(.*\)',/\1/p" "$(dirname "$0")/../meson.build")
expect 0 "numastor $version" "$numastor" --version
expect 0 "check" "$numastor" --help
expect 3 "Usage" "$numastor"
expect 3 "unknown command 'frobnicate'" "$numastor" frobnicate
expect 0 "--sysroot DIR" "$numastor" check --help
expect 3 "unrecognized option '--no-such-option'" "$numastor" check --no-such-option
# a bad option is one line and a pointer to --help, as util-linux does, not the whole help
for cmd in check fix snapshot; do
	out=$("$numastor" $cmd --no-such-option 2>&1)
	rc=$?
	if [ "$rc" != 3 ] || [ "$(wc -l <<<"$out")" != 2 ] || ! grep -qx "Try 'numastor $cmd --help'." <<<"$out"; then
		echo "FAIL: '$cmd --no-such-option' is not one line and a pointer to --help (exit $rc): ${out:0:300}"
		fails=$((fails + 1))
	fi
done
expect 3 "unrecognized option '-x'" "$numastor" check -jx
# --json is always JSON: a --format that says otherwise is refused, in either order
expect 3 "--json and --format prometheus are two formats" "$numastor" check -j -f prometheus
expect 3 "--json and --format text are two formats" "$numastor" check --format text --json
expect 3 "Try 'numastor --help'" "$numastor" frobnicate
expect 3 "cannot use /nonexistent/capture as the root" "$numastor" check --sysroot /nonexistent/capture
expect 3 "needs a directory" "$numastor" check --sysroot ""
expect 3 "--color takes auto, always or never, not 'purple'" "$numastor" check --color purple
touch "$tmp/file"
expect 3 "Not a directory" "$numastor" check --sysroot "$tmp/file"
mkdir -p "$tmp/empty"
expect 3 "cannot read the block devices under $tmp/empty/sys/block" "$numastor" check --sysroot "$tmp/empty"
expect 3 "no block device named nosuchdisk" "$numastor" check nosuchdisk
# irqbalance-policy's IRQ number is a decimal int, nothing wider or in another base (exit 3, as every
# command's error: irqbalance skips a policy script that exits non-zero)
for bad in 4294967297 2147483648 0x10 +5 1e3 "" 07 " 5"; do
	expect 3 "is not an IRQ number" "$numastor" irqbalance-policy /sys/devices/nonexistent "$bad"
done
# --interval: a plain number of seconds, above 0 and at most 3600; anything else is refused before any work
for bad in "" 0 0.0 -1 +2 abc 0.2s 1e-1 3601 3600.5 inf nan . 1. .5 " 2" 0x10 "2 " 1,5; do
	expect 3 "--interval takes seconds, a plain number above 0 and at most 3600" "$numastor" check --interval "$bad"
done
expect 3 "--interval takes seconds" "$numastor" check --interval=-1
expect 3 "--interval needs a live system" "$numastor" check --snapshot "$tmp/file" --interval 1
expect 3 "option '--interval' needs an argument" "$numastor" check --interval
# this machine, live: the interval is waited and reported
out=$("$numastor" check --json --interval 0.2 2>&1)
rc=$?
if [ "$rc" -gt 2 ] || ! grep -qE '^  "interval_seconds": 0\.(19[5-9]|[2-9])' <<<"$out"; then
	echo "FAIL: 'check --json --interval 0.2' exited $rc or reports no interval of 0.2 s: ${out:0:300}"
	fails=$((fails + 1))
fi
# colour: never when asked, or when NO_COLOR is set; always when asked
out=$(NO_COLOR=1 "$numastor" check --color auto 2>&1)
if grep -q $'\033\[' <<<"$out"; then echo "FAIL: colour with NO_COLOR set"; fails=$((fails + 1)); fi
out=$("$numastor" check --color always 2>&1)
if ! grep -q $'\033\[' <<<"$out"; then echo "FAIL: no colour with --color always"; fails=$((fails + 1)); fi

if [ "$fails" -gt 0 ]; then
	echo "cli: $fails failed"
	exit 1
fi
echo "cli: all passed"
