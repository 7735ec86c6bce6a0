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
expect 3 "Usage: numastor check" "$numastor" check --no-such-option
expect 3 "cannot use /nonexistent/capture as the root" "$numastor" check --sysroot /nonexistent/capture
expect 3 "needs a directory" "$numastor" check --sysroot ""
expect 3 "--color takes auto, always or never, not 'purple'" "$numastor" check --color purple
touch "$tmp/file"
expect 3 "Not a directory" "$numastor" check --sysroot "$tmp/file"
mkdir -p "$tmp/empty"
expect 3 "cannot read the block devices under $tmp/empty/sys/block" "$numastor" check --sysroot "$tmp/empty"
expect 3 "no block device named nosuchdisk" "$numastor" check nosuchdisk
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
