#!/bin/bash
# A release build (meson's default: -Dtest_hooks=false) has no test-only switch: no
# NUMASTOR_TEST_* name is in the binary, and NUMASTOR_TEST_SYSROOT_WRITES=1 /
# NUMASTOR_TEST_STOP_AFTER_WRITES=1 change nothing: `fix --sysroot` on a fixture copy stays a
# dry run (no journal, no lock, no affinity written) and is not killed.
#
#   tests/check-release.sh [BUILDDIR]     (default build-release; configured here when new)
#
# tests/run-all.sh runs it beside the two test builds.
set -u
cd "$(dirname "$0")/.." || exit 1
top=$PWD
builddir=${1:-build-release}
tmp=$(mktemp -d /tmp/numastor-release.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export NO_COLOR=1

if [ ! -f "$builddir/build.ninja" ]; then
	meson setup "$builddir" >/dev/null || { echo "FAIL: meson setup $builddir"; exit 1; }
fi
ninja -C "$builddir" numastor >/dev/null || { echo "FAIL: ninja -C $builddir"; exit 1; }
hooks=$(meson introspect "$builddir" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="test_hooks"][0])')
[ "$hooks" = False ] || fail "$builddir is configured with -Dtest_hooks=true: not a release build"
numastor=$top/$builddir/numastor

names=$(grep -a -o 'NUMASTOR_TEST_[A-Z_]*' "$numastor" | sort -u | tr '\n' ' ')
[ -z "$names" ] || fail "the release binary holds test-only switch names: $names"
grep -q 'define NUMASTOR_TEST_HOOKS' "$builddir/config.h" && fail "config.h defines NUMASTOR_TEST_HOOKS"

fixture=cloud-2n64c-8nvme-forced-node0
if ! python3 tests/fixtures/gen-fixtures.py "$tmp/gen" "$fixture" >/dev/null || ! cp -a "$tmp/gen/$fixture" "$tmp/t"; then
	echo "FAIL: generating $fixture"
	exit 1
fi
(cd "$tmp/t" && find . -type f -exec sha256sum {} + | sort) >"$tmp/before"
NUMASTOR_TEST_SYSROOT_WRITES=1 NUMASTOR_TEST_STOP_AFTER_WRITES=1 "$numastor" fix --sysroot "$tmp/t" --json \
	>"$tmp/fix.json" 2>"$tmp/fix.err"
rc=$?
[ "$rc" = 0 ] || fail "release fix --sysroot with the switches set exited $rc (137 = the stop switch fired): $(cat "$tmp/fix.err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["dry_run"] is True, d["dry_run"]; assert d["summary"]["move"] > 0' \
	"$tmp/fix.json" 2>/dev/null || fail "release fix --sysroot with NUMASTOR_TEST_SYSROOT_WRITES=1 was not a dry run with moves planned"
(cd "$tmp/t" && find . -type f -exec sha256sum {} + | sort) >"$tmp/after"
diff -u "$tmp/before" "$tmp/after" >"$tmp/diff" || fail "release fix --sysroot wrote into the tree: $(head -20 "$tmp/diff")"
[ ! -e "$tmp/t/run/numastor" ] || fail "release fix --sysroot made run/numastor/ in the tree"
NUMASTOR_TEST_SYSROOT_WRITES=1 "$numastor" fix --sysroot "$tmp/t" --revert >/dev/null 2>&1
[ $? = 3 ] || fail "release fix --sysroot --revert with NUMASTOR_TEST_SYSROOT_WRITES=1 was not refused"

if [ "$fails" -gt 0 ]; then
	echo "release: $fails failed"
	exit 1
fi
echo "release: all passed (no NUMASTOR_TEST_* in $builddir/numastor; the switches change nothing)"
