# shellcheck shell=bash
# The shell tests' one way of counting checks (tests/kmod/check-build.sh, tests/check-deb.sh):
# "ok   WHAT" or "FAIL WHAT" per check, into the caller's counters passed and failed.

ok() {
	printf 'ok   %s\n' "$*"
	passed=$((passed + 1))
}

fail() {
	printf 'FAIL %s\n' "$*"
	failed=$((failed + 1))
}

# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}
