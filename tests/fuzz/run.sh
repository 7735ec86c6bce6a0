#!/bin/bash
# The fuzz stage of tests/run-all.sh: build the libFuzzer harnesses with Debian's clang
# (build-fuzz: -Dfuzz=true, ASan+UBSan, coverage), run each from its seed corpus for a bounded
# time (about 60 s in all), then replay every input each one kept through the harnesses that
# write JSON and hold what they wrote against the schemas. Fails on any crash, leak, input
# slower than 5 s (-timeout=5, wall-clock), memory over the limit, or document that fails its schema.
# Ends with one line "fuzz: N passed, M failed" (a harness and each schema check count one).
#
#   tests/fuzz/run.sh [SECONDS_SCALE]     SECONDS_SCALE multiplies every harness's time (default 1)
#   NS_FUZZ_ONLY="model cpuset" tests/fuzz/run.sh 60   one or a few harnesses, longer
# Scratch, new corpus entries and crash artifacts go to numastor-fuzz-run.*/ under $TMPDIR
# (else /dev/shm, else /tmp), kept on failure so the input that failed can be replayed:
# build-fuzz/tests/fuzz/fuzz-NAME FILE.
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
scale=${1:-1}
build=${NS_FUZZ_BUILD:-build-fuzz}

# time (s) and largest input (bytes) of each harness
declare -A secs=([cpuset]=6 [number]=5 [journal]=6 [jsonstrict]=5 [swapjournal]=5 [manifest]=5 [snapshot]=10 [model]=15
	[envfile]=5)
declare -A maxlen=([cpuset]=8192 [number]=512 [journal]=16384 [jsonstrict]=4096 [swapjournal]=16384 [manifest]=16384
	[snapshot]=65536 [model]=8192 [envfile]=4096)
harnesses=${NS_FUZZ_ONLY:-cpuset number journal jsonstrict swapjournal manifest snapshot model envfile}

if ! command -v clang-14 >/dev/null; then
	echo "fuzz: clang-14 is missing (tools/install-deps installs clang and libclang-rt-14-dev)"
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
	CC=clang-14 meson setup "$build" -Dfuzz=true -Dtest_hooks=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debugoptimized -Dc_args=-fsanitize=fuzzer-no-link >/dev/null || {
		echo "fuzz: meson setup $build failed"
		echo "fuzz: 0 passed, 1 failed"
		exit 1
	}
fi
targets=()
for h in $harnesses; do targets+=("tests/fuzz/fuzz-$h"); done
if ! nice ninja -C "$build" "${targets[@]}" >/dev/null; then
	nice ninja -C "$build" "${targets[@]}" | tail -20
	echo "fuzz: building the harnesses failed"
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi

# scratch on tmpfs where there is one: the harnesses make and remove directories by the
# thousand, and a disk-backed /tmp under load turns that into timeouts
scratch_top=${TMPDIR:-}
if [ -z "$scratch_top" ]; then
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then scratch_top=/dev/shm; else scratch_top=/tmp; fi
fi
mkdir -p "$scratch_top"
work=$(mktemp -d "$scratch_top/numastor-fuzz-run.XXXXXX")
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
passed=0
failed=0
for h in $harnesses; do
	mkdir -p "$work/corpus/$h" "$work/art"
	t=$(awk -v a="${secs[$h]}" -v s="$scale" 'BEGIN { printf "%d", a * s < 1 ? 1 : a * s }')
	log=$work/$h.log
	# -timeout is wall-clock (libFuzzer's SIGALRM): on a loaded 2-core machine the cpuset harness's
	# "8-904856" (0.12 s of CPU) once took over 1 s and failed the stage; 5 s still stops a hang
	# or a quadratic input
	nice "$build/tests/fuzz/fuzz-$h" -max_total_time="$t" -timeout=5 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
		-max_len="${maxlen[$h]}" -print_final_stats=1 -artifact_prefix="$work/art/$h-" \
		"$work/corpus/$h" "tests/fuzz/corpus/$h" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	kept=$(find "$work/corpus/$h" -type f | wc -l)
	if [ $rc = 0 ]; then
		echo "fuzz: $h ok: ${execs:-?} inputs in ${t}s, $kept new corpus entries"
		passed=$((passed + 1))
	else
		echo "fuzz: $h FAILED (exit $rc) after ${execs:-?} inputs; log $log"
		grep -a -E 'FUZZ CHECK FAILED|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|SUMMARY|Test unit written' "$log" | head -8 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done

# The documents behind every kept input, against their schemas.
validate() { # harness schema [--input]
	local h=$1 schema=$2 out=$work/dump-$1 opt=${3:-}
	case " $harnesses " in *" $h "*) ;; *) return 0 ;; esac
	if [ ! -f "$schema" ]; then
		echo "fuzz: $h documents: SKIPPED, no $schema yet"
		return 0
	fi
	mkdir -p "$out"
	NS_FUZZ_DUMP=$out nice "$build/tests/fuzz/fuzz-$h" -runs=0 -timeout=5 -artifact_prefix="$work/art/$h-replay-" \
		"$work/corpus/$h" "tests/fuzz/corpus/$h" \
		>"$work/$h-replay.log" 2>&1
	if python3 tests/fuzz/validate.py $opt "$schema" "$out" >"$work/$h-validate.log" 2>&1; then
		echo "fuzz: $h documents: $(tail -1 "$work/$h-validate.log" | sed 's/^validate: //')"
		passed=$((passed + 1))
	else
		echo "fuzz: $h documents FAILED:"
		sed 's/^/    /' "$work/$h-validate.log" | head -8
		failed=$((failed + 1))
	fi
}
validate model schema/numastor.schema.json
validate journal schema/journal.schema.json --input

if [ $failed = 0 ]; then
	rm -rf "$work"
else
	echo "fuzz: kept $work (logs, new corpus entries, failing inputs under art/)"
fi
echo "fuzz: $passed passed, $failed failed"
[ $failed = 0 ]
