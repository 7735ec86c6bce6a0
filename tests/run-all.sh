#!/bin/bash
# The whole test suite (quick start, step 2; .ci/run runs exactly this): a normal and an
# ASan+UBSan build, each running the unit, CLI, fixture and live tests, then the real-kernel
# VM test bed. Ends with one line "N passed, N failed".
# NUMASTOR_SKIP_VM=1 skips the VM bed (say so explicitly; it is never skipped silently); then
# the Debian packages (tests/check-deb.sh; NUMASTOR_SKIP_DEB=1 skips them, and says so).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
top=$PWD
tools/install-deps || exit 1

passed=0
failed=0
t0=$SECONDS
# Each stage's time, printed as it ends and again with the total at the end.
stages=()
stage_done() { # name of the stage that just ended (since the previous one)
	local now=$SECONDS
	stages+=("$1 $((now - ${stage_t:-$t0})) s")
	echo "-- $1: $((now - ${stage_t:-$t0})) s"
	stage_t=$now
}

count_meson() { # count results in a build's testlog.json
	local log=$1/meson-logs/testlog.json p f
	p=$(grep -c '"result": "OK"' "$log" 2>/dev/null || true)
	f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" 2>/dev/null || true)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
}

build() { # build DIR [meson options]
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >/dev/null || return 1
	else
		meson configure "$dir" "$@" >/dev/null || return 1 # an older tree gets the options too
	fi
	ninja -C "$dir" >/dev/null || ninja -C "$dir"
}

# The VM bed's preparation (kernels, patched modules, the Debian image: downloads, debootstrap and
# module builds, minutes on a fresh machine) needs no numastor binary: it runs in the background,
# niced, while the builds and tests below run, and the VM bed waits for it.
prep_pid=
if [ "${NUMASTOR_SKIP_VM:-0}" != 1 ] && [ -x tests/vm/run-all.sh ]; then
	prep_log=$(mktemp)
	nice -n 10 setsid tests/vm/run-all.sh --prepare > "$prep_log" 2>&1 &
	prep_pid=$!
	# a run that ends early (a failed build) takes its downloads and debootstraps with it
	trap '[ -z "$prep_pid" ] || kill -- -"$prep_pid" 2>/dev/null' EXIT
fi

# Both test builds compile in the test-only switches (NUMASTOR_TEST_*, lib/base/testhook.h) that
# tests/check-fix.sh and the VM bed use; tests/check-release.sh shows a release build has none.
if ! build build -Dtest_hooks=true; then
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "== tests, normal build"
meson test -C build --print-errorlogs --no-rebuild
count_meson build
stage_done "normal build and its tests"

# -O2 (debugoptimized): ASan's own advice for speed; the sanitizers check as at -O0, and the
# stage's tests, which run numastor thousands of times, take a fifth less time.
# -Dbpf=disabled: this build is also the one without numastor trace's eBPF side, to show the rest
# of the suite passes without it (trace then refuses, saying so: tests/check-trace-live.py); the
# normal build above and the VM bed run the eBPF side itself.
if build build-asan -Dtest_hooks=true -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized -Dbpf=disabled; then
	echo "== tests, ASan+UBSan build"
	# every test that runs numastor's code; the source-only ones (the layers and the mutants'
	# dry run, clang-format, the docs against the source) read the same files as above
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C build-asan --print-errorlogs --no-rebuild --no-suite layers --no-suite format --no-suite docs
	count_meson build-asan
else
	echo "sanitizer build failed"
	failed=$((failed + 1))
fi
stage_done "ASan+UBSan build and its tests"

# libFuzzer harnesses (tests/fuzz/), clang build in build-fuzz, about 60 s: a crash, leak, input
# over 1 s or schema-failing document fails the stage; one count for the whole stage.
echo "== fuzz harnesses (tests/fuzz/run.sh)"
if tests/fuzz/run.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
stage_done "fuzz harnesses"

echo "== release build (-Dtest_hooks=false): no test-only switch"
if tests/check-release.sh build-release; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
stage_done "release build"

# Every check has a mutant that a test kills (tests/mutation/): here those a unit, fixture or
# release test kills; the VM-killed ones take minutes each (tests/mutation/run.sh NAME).
echo "== mutants (tests/mutation/run.sh --fast)"
if tests/mutation/run.sh --fast; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
stage_done "mutants"

if [ "${NUMASTOR_SKIP_VM:-0}" = 1 ]; then
	echo "== VM test bed: SKIPPED because NUMASTOR_SKIP_VM=1"
elif [ -x tests/vm/run-all.sh ]; then
	echo "== VM test bed (Debian's kernel under qemu)"
	if [ -n "$prep_pid" ]; then
		wait "$prep_pid" || echo "(its preparation in the background failed: the bed prepares again and says why)"
		prep_pid=
		sed 's/^/   /' "$prep_log"
		rm -f "$prep_log"
	fi
	vmlog=$(mktemp)
	tests/vm/run-all.sh "$top/build/numastor" 2>&1 | tee "$vmlog"
	vmrc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$vmlog" | tail -1)
	if [ -n "$line" ]; then
		passed=$((passed + $(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")))
		failed=$((failed + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
	fi
	if [ "$vmrc" != 0 ] && [ -z "$line" ]; then failed=$((failed + 1)); fi
	rm -f "$vmlog"
	stage_done "VM test bed"
fi

if [ "${NUMASTOR_SKIP_VM:-0}" = 1 ]; then
	echo "== patched module build: SKIPPED because NUMASTOR_SKIP_VM=1 (it uses the VM bed's kernel cache)"
else
	echo "== patched module build against every kernel line (tests/kmod/check-build.sh)"
	if tests/kmod/check-build.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	stage_done "patched module build"
fi

if [ "${NUMASTOR_SKIP_DEB:-0}" = 1 ]; then
	echo "== Debian packages: SKIPPED because NUMASTOR_SKIP_DEB=1"
else
	echo "== Debian packages: build, lintian, install, upgrade, purge, DKMS (tests/check-deb.sh)"
	if tests/check-deb.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	stage_done "Debian packages"
fi

echo "== time"
for s in "${stages[@]}"; do echo "   $s"; done
echo "total: $((SECONDS - t0)) s ($(((SECONDS - t0) / 60)) min) on $(nproc) cores"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
