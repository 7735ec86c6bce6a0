#!/usr/bin/env bash
# numastor benchmark: check --json against its own floor, against lstopo, on captured trees
# and on the live machine, and its growth with disks and CPUs.
#
#   tests/bench/run-bench.sh [--disks N] [NUMASTOR]     (default: build/numastor of this tree)
#
# What it does
#   1. Generates the fixture machines (gen-fixtures.py, `large-8n<C>c-<N>nvme`) into a
#      temporary directory on /dev/shm when writable. A size the generator cannot make is
#      reported as "not generated: <reason>" and skipped.
#   2. Records numastor's own accesses on each tree: access-log.c, an LD_PRELOAD shim, logs
#      every open / listing / readlink / stat numastor makes relative to its root, in order
#      (see access-log.c for why not the snapshot archive: its links, directories and listed
#      names come last, it is resolved through links, deduplicated, and does not tell a listed
#      directory from an entry of a listing).
#      The floor's list is that log, each access once, in first-use order, failed probes
#      included. `check --json` (NUMASTOR_THREADS=1) and `check` (text) each get their own.
#      The headline tree and the live machine also cross-check the log with
#      `numastor snapshot`: the files read must be the same set.
#      numastor is recorded with NUMASTOR_THREADS=1 (one thread: the log keeps its order).
#   3. Replays the list with floor.c two ways: "plain" (openat/read/close, what any tool must
#      at least do) and "in-root" (FLOOR_SAFE=1: openat2 RESOLVE_IN_ROOT + fstat, what opening
#      a captured tree safely costs).
#   4. Times every group of commands INTERLEAVED: one warm-up each, then ROUNDS rounds in
#      which each command runs once (the order rotates each round), so every pair is A B A B
#      ...; a ratio is taken per round between the two runs of that round and reported as
#      min and median. Wall time is fork to reap, peak RSS is ru_maxrss (measure.c).
#      Groups: the headline tree (check --json with 1 and 2 threads, check text, the plain
#      and in-root floors, lstopo), the live machine's /sys and /proc (the same, lstopo
#      without FSROOT), and growth (check --json and its floor at each disk count and CPU
#      count).
#   (awk: a ternary among printf's arguments is parenthesised, or its ">" redirects.)
#   5. lstopo runs as a pure replay: HWLOC_FSROOT=TREE HWLOC_COMPONENTS=linux,stop (no x86
#      cpuid, no uname: with only "-x86" hwloc still puts the host's OSName/HostName in the
#      XML). strace shows it then opens nothing outside the tree but its libraries, locale and
#      its (absent) plugin directory.
#   6. Prints the figures, a model of 16 threads fitted from the 1- and 2-thread times, and
#      last, exactly one machine-readable line:
#        bench: check/floor=R check/lstopo=R list/lstopo=R text/floor=R rss_mib=M per_disk_ms=D disks=N snap_rss_mib=M
#      (list/lstopo: `check -l -o NAME,PCI,NODE`, the device-to-node map, against lstopo;
#      snap_rss_mib: numastor snapshot's median peak RSS on the BENCH_SNAP_DISKS tree, issue 35)
#      (R = median per-round ratio; "n/a" when a figure could not be measured).
#   It prints figures and never fails on targets: exit 0, 2 when numastor is not built, 3
#   when the headline tree cannot be made. Under load (shared cores) the figures are noisy:
#   trust the medians and the ranges, not one run.
#
# Environment
#   ROUNDS            interleaved rounds per group (default 15, at least 15 for the issue)
#   BENCH_MAIN_DISKS  the headline tree's disk count (default 64; --disks N sets it)
#   BENCH_DISKS       growth disk counts on 448 CPUs (default "16 64 256")
#   BENCH_CPUS        growth CPU counts, 8 nodes (default "448 1024")
#   BENCH_CPU_DISKS   the disk count of the CPU-growth trees (default 64)
#   BENCH_LIVE        0 skips the live machine (default 1)
#   BENCH_SNAP_DISKS  the tree whose snapshot's peak RSS is measured (default 256)
#   BENCH_SNAP_ROUNDS runs of that snapshot (default 3; median and range)
#   BENCH_SNAPCHECK   0 skips the snapshot cross-check (default 1; ~15 s on 64 disks)
#   BENCH_GEN         the generator (default tests/fixtures/gen-fixtures.py of this tree; e.g.
#                     another branch's, to bench sizes this one cannot make yet)
#   BENCH_TMPDIR      where trees go (default /dev/shm when writable, else $TMPDIR or /tmp;
#                     a disk-backed directory adds its own noise)
#   BENCH_KEEP        1 keeps the work directory (logs, lists, raw results)
#   CC                C compiler for the helpers (default cc)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
main_disks=${BENCH_MAIN_DISKS:-64}
if [ "${1:-}" = "--disks" ]; then
	main_disks=${2:?--disks needs a number}
	shift 2
fi
case $main_disks in '' | *[!0-9]*)
	echo "run-bench: --disks wants a number, not '$main_disks'" >&2
	exit 2
	;;
esac
numastor=${1:-$here/../../build/numastor}
rounds=${ROUNDS:-15}
cc=${CC:-cc}
disks_list=${BENCH_DISKS:-16 64 256}
cpus_list=${BENCH_CPUS:-448 1024}
cpu_disks=${BENCH_CPU_DISKS:-64}
snap_disks=${BENCH_SNAP_DISKS:-256}
snap_rounds=${BENCH_SNAP_ROUNDS:-3}
gen_py=${BENCH_GEN:-$here/../fixtures/gen-fixtures.py}
py() { python3 "$here/accesses.py" "$@"; }

if [ ! -x "$numastor" ]; then
	echo "run-bench: $numastor is not built (meson setup build && ninja -C build)" >&2
	exit 2
fi
numastor=$(cd "$(dirname "$numastor")" && pwd)/$(basename "$numastor")

base=${BENCH_TMPDIR:-}
if [ -z "$base" ]; then
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then base=/dev/shm; else base=${TMPDIR:-/tmp}; fi
fi
work=$(mktemp -d "$base/numastor-bench.XXXXXX")
if [ "${BENCH_KEEP:-0}" = 1 ]; then
	trap 'echo "run-bench: kept $work" >&2' EXIT
else
	trap 'rm -rf "$work"' EXIT
fi
results=$work/results

"$cc" -O2 -o "$work/floor" "$here/floor.c"
"$cc" -O2 -o "$work/measure" "$here/measure.c"
"$cc" -O2 -shared -fPIC -o "$work/access-log.so" "$here/access-log.c" -ldl -lpthread

ms() { awk -v s="$1" 'BEGIN { if (s == "nan" || s == "") print "n/a"; else printf "%.1f", s * 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { if (k == "nan" || k == "") print "n/a"; else printf "%.1f", k / 1024 }'; }

# ---- trees ----
declare -A TREE WHY
gen() { # NAME: TREE[NAME] or WHY[NAME]
	local name=$1
	if python3 "$gen_py" --manifest "$work" "$name" >"$work/gen-$name.log" 2>&1 &&
		[ -d "$work/$name" ]; then
		TREE[$name]=$work/$name
	else
		WHY[$name]=$(grep -v '^\s*$' "$work/gen-$name.log" | tail -n1 | cut -c1-160)
		WHY[$name]=${WHY[$name]:-gen-fixtures.py wrote no tree}
	fi
}
main_name=large-8n448c-${main_disks}nvme
t0=$(date +%s.%N)
gen "$main_name"
for n in $disks_list; do [ -n "${TREE[large-8n448c-${n}nvme]:-}${WHY[large-8n448c-${n}nvme]:-}" ] || gen "large-8n448c-${n}nvme"; done
for c in $cpus_list; do [ -n "${TREE[large-8n${c}c-${cpu_disks}nvme]:-}${WHY[large-8n${c}c-${cpu_disks}nvme]:-}" ] || gen "large-8n${c}c-${cpu_disks}nvme"; done
t1=$(date +%s.%N)
if [ -z "${TREE[$main_name]:-}" ]; then
	echo "run-bench: cannot make the headline tree $main_name: ${WHY[$main_name]}" >&2
	echo "bench: check/floor=n/a check/lstopo=n/a list/lstopo=n/a text/floor=n/a rss_mib=n/a per_disk_ms=n/a disks=$main_disks snap_rss_mib=n/a"
	exit 3
fi
big=${TREE[$main_name]}

# ---- commands, by key ----
declare -A CMD
cmd() { # KEY ARGV...: how KEY runs
	local k=$1
	shift
	CMD[$k]=$(printf '%q ' "$@")
}
# record KEY ROOT LOG ARGV...: numastor's accesses under ROOT while running ARGV
record() {
	local root=$2 log=$3
	shift 3
	rm -f "$log"
	env NUMASTOR_THREADS=1 ACCESS_LOG="$log" ACCESS_ROOT="$root" LD_PRELOAD="$work/access-log.so" "$@" \
		>/dev/null 2>>"$work/record.err" || true
	[ -s "$log" ] || : >"$log"
}
run() { # KEY ROUND: one measured run, appended to $results
	local line
	line=$(eval "\"\$work/measure\" -- ${CMD[$1]}" 2>>"$work/$1.err") || line="nan 0 127"
	echo "$2 $1 $line" >>"$results"
}
group() { # KEY...: one warm-up each, then $rounds rounds, the order rotating
	local keys=("$@") n=$# r i
	for k in "${keys[@]}"; do run "$k" 0; done
	for r in $(seq "$rounds"); do
		for i in $(seq 0 $((n - 1))); do run "${keys[$(((i + r) % n))]}" "$r"; done
	done
}
stat_of() { py stat "$results" "$1"; }
ratio_of() { py ratio "$results" "$1" "$2"; }

# setup_tree TAG ROOT [SYSROOT-ARGS...]: the check, text and floor commands for a tree
setup_tree() {
	local tag=$1 root=$2
	shift 2
	record "$tag" "$root" "$work/$tag.json.log" "$numastor" check "$@" --json
	py floor "$work/$tag.json.log" "$work/$tag.json.list" >"$work/$tag.json.summary"
	cmd "$tag.json1" env NUMASTOR_THREADS=1 "$numastor" check "$@" --json
	cmd "$tag.json2" env NUMASTOR_THREADS=2 "$numastor" check "$@" --json
	cmd "$tag.floor" "$work/floor" "$root" "$work/$tag.json.list"
	cmd "$tag.safe" env FLOOR_SAFE=1 "$work/floor" "$root" "$work/$tag.json.list"
}
setup_text() { # TAG ROOT [SYSROOT-ARGS...]: check (text) and its own floor
	local tag=$1 root=$2
	shift 2
	record "$tag" "$root" "$work/$tag.text.log" "$numastor" check "$@"
	py floor "$work/$tag.text.log" "$work/$tag.text.list" >"$work/$tag.text.summary"
	cmd "$tag.text" env NUMASTOR_THREADS=1 "$numastor" check "$@"
	if cmp -s "$work/$tag.text.list" "$work/$tag.json.list"; then
		TEXTFLOOR[$tag]=$tag.floor # the same list: the same floor
	else
		TEXTFLOOR[$tag]=$tag.tfloor
		cmd "$tag.tfloor" "$work/floor" "$root" "$work/$tag.text.list"
	fi
}
declare -A TEXTFLOOR
have_lstopo=0
command -v lstopo >/dev/null 2>&1 && have_lstopo=1

# ---- the headline tree ----
setup_tree main "$big" --sysroot "$big"
setup_text main "$big" --sysroot "$big"
keys=(main.json1 main.json2 main.text main.floor main.safe)
[ "${TEXTFLOOR[main]}" = main.floor ] || keys+=(main.tfloor)
if [ $have_lstopo = 1 ]; then
	cmd main.lstopo env HWLOC_FSROOT="$big" HWLOC_COMPONENTS=linux,stop lstopo --whole-io --of xml
	# lstopo's job, the device-to-node map, as numastor lists it: the devices, their PCI
	# functions and nodes (a list that judges nothing reads no interrupt or queue file)
	cmd main.list env NUMASTOR_THREADS=1 "$numastor" check --sysroot "$big" -l -o NAME,PCI,NODE
	keys+=(main.lstopo main.list)
fi
t2=$(date +%s.%N)
group "${keys[@]}"
t3=$(date +%s.%N)

# what each tool found, so a fast run that read nothing does not pass for a fast run
NUMASTOR_THREADS=1 "$numastor" check --sysroot "$big" --json >"$work/main1.json" 2>/dev/null || true
NUMASTOR_THREADS=2 "$numastor" check --sysroot "$big" --json >"$work/main2.json" 2>/dev/null || true
found=$(py found "$work/main1.json")
# the documents carry their generation time: compare without that line
same2=$(cmp -s <(grep -v '"generated_at"' "$work/main1.json") <(grep -v '"generated_at"' "$work/main2.json") &&
	echo "byte-identical but generated_at" || echo "DIFFERENT")
threads_started=n/a
if command -v strace >/dev/null 2>&1; then
	NUMASTOR_THREADS=2 strace -f -qq -e trace=clone,clone3 -o "$work/clone.trace" \
		"$numastor" check --sysroot "$big" --json >/dev/null 2>&1 || true
	threads_started=$(grep -c 'clone' "$work/clone.trace" || true)
fi

files=$(find "$big" | wc -l)
echo "numastor benchmark: $main_name (8 nodes, 448 CPUs, $main_disks NVMe x 64 queues + admin)"
echo "  numastor: $numastor"
echo "  tree: $files entries in $work (trees generated in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
for name in "${!WHY[@]}"; do echo "  $name: not generated: ${WHY[$name]}"; done
echo "  floor list (numastor's own accesses, check --json): $(cat "$work/main.json.summary")"
echo "  floor list (check, text): $(sed 's/^.*; //' "$work/main.text.summary")$([ "${TEXTFLOOR[main]}" = main.floor ] && echo " (the same list)")"
echo "  $(py manifest "$big/../$main_name.reads" "$work/main.json.log")"
if [ "${BENCH_SNAPCHECK:-1}" = 1 ]; then
	if "$numastor" snapshot --sysroot "$big" -O "$work/main.snap.tar.gz" >/dev/null 2>"$work/main.snap.err"; then
		py snapcheck "$work/main.snap.tar.gz" "$big" "$work/main.json.log" | sed 's/^/  /'
	else
		echo "  snapshot cross-check: numastor snapshot failed: $(tail -n1 "$work/main.snap.err" | cut -c1-160)"
	fi
fi
echo "  $rounds interleaved rounds (order rotating) after one warm-up each, in $(awk -v a="$t2" -v b="$t3" 'BEGIN { printf "%.0f", b - a }') s; load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo

row() { # LABEL KEY NOTE
	local s
	read -r -a s <<<"$(stat_of "$2")"
	printf "  %-40s %9s %9s %8s   %s\n" "$1" "$(ms "${s[0]}")" "$(ms "${s[1]}")" "$(mib "${s[2]}")" "exit ${s[3]}${3:+: $3}"
}
printf "  %-40s %9s %9s %8s\n" "" "median ms" "min ms" "RSS MiB"
row "numastor check --json (1 thread)" main.json1 "$found"
row "numastor check --json (2 threads)" main.json2 "output vs 1 thread: $same2"
row "numastor check (text)" main.text
row "floor, plain (openat/read/close)" main.floor "$(tail -n1 "$work/main.floor.err" 2>/dev/null | sed 's/^floor: //; s/, [0-9.]* ms$//')"
row "floor, in-root (openat2 + fstat)" main.safe "what a captured tree's safety costs the floor"
[ "${TEXTFLOOR[main]}" = main.floor ] || row "floor of check (text), plain" main.tfloor
if [ $have_lstopo = 1 ]; then
	HWLOC_FSROOT="$big" HWLOC_COMPONENTS=linux,stop lstopo --whole-io --of xml >"$work/lstopo.xml" 2>/dev/null || true
	lfound=$(for ty in NUMANode Package Core PU PCIDev OSDev; do printf "%s %s " "$(grep -c "<object type=\"$ty\"" "$work/lstopo.xml" || true)" "$ty"; done)
	row "lstopo --whole-io --of xml (replay)" main.lstopo "$lfound"
	lnodes=$(NUMASTOR_THREADS=1 "$numastor" check --sysroot "$big" -l -n -o NAME,PCI,NODE 2>/dev/null |
		awk '$2 != "-" && $3 != "-" { n++ } END { print n + 0 }')
	row "check -l -o NAME,PCI,NODE (1 thread)" main.list "$lnodes devices with a PCI function and a node"
else
	echo "  lstopo: not installed (Debian package hwloc-nox)"
fi
echo

pr() { # LABEL A B: the per-round ratio line; leaves the median in $MED
	local q
	read -r -a q <<<"$(ratio_of "$2" "$3")"
	MED=${q[1]}
	printf "  %-44s median %5s  min %5s  (%s rounds)\n" "$1" "${q[1]}" "${q[0]}" "${q[2]}"
}
echo "ratios (per round, interleaved)"
pr "check --json / plain floor        (1 thread)" main.json1 main.floor
r_floor=$MED
pr "check --json / in-root floor      (1 thread)" main.json1 main.safe
pr "check text   / its plain floor    (1 thread)" main.text "${TEXTFLOOR[main]}"
r_text=$MED
pr "check --json / plain floor        (2 threads)" main.json2 main.floor
pr "in-root floor / plain floor" main.safe main.floor
r_lstopo=n/a r_list=n/a
if [ $have_lstopo = 1 ]; then
	pr "check --json / lstopo             (1 thread)" main.json1 main.lstopo
	r_lstopo=$MED
	pr "check --json / lstopo             (2 threads)" main.json2 main.lstopo
	pr "check -l -o NAME,PCI,NODE / lstopo (1 thread)" main.list main.lstopo
	r_list=$MED
fi
echo

# ---- threads: an Amdahl fit from the 1- and 2-thread medians ----
read -r -a s1 <<<"$(stat_of main.json1)"
read -r -a s2 <<<"$(stat_of main.json2)"
read -r -a sf <<<"$(stat_of main.floor)"
echo "threads (NUMASTOR_THREADS)"
if [ "$threads_started" = 0 ]; then
	echo "  threads: no effect in this binary (NUMASTOR_THREADS=2 started no thread; strace saw no clone)"
	echo "  16-thread model: n/a until the reader is threaded; the 1- and 2-thread figures above measure the same thing"
else
	awk -v t1="${s1[0]}" -v t2="${s2[0]}" -v f="${sf[0]}" -v started="$threads_started" 'BEGIN {
		printf "  NUMASTOR_THREADS=2 started %s thread(s); median 1 thread %.1f ms, 2 threads %.1f ms\n", started, t1 * 1000, t2 * 1000
		p = 2 * (t1 - t2); if (p < 0) p = 0; if (p > t1) p = t1; s = t1 - p
		printf "  Amdahl fit: t(n) = s + p/n with t(1) = s + p, t(2) = s + p/2  ->  serial %.1f ms, parallel %.1f ms (%.0f%%)\n", s * 1000, p * 1000, (t1 > 0 ? 100 * p / t1 : 0)
		t16 = s + p / 16
		printf "  model, 16 threads: %.1f ms = %.2fx the single-threaded plain floor\n", t16 * 1000, (f > 0 ? t16 / f : 0)
		print  "  assumptions: 2 idle cores here (not true under load: the fit then understates p), the"
		print  "  parallel part (read/parse of per-IRQ and per-queue items) scales linearly to 16 with no"
		print  "  kernel lock contention, and the serial part (start-up, listing, findings, output) stays fixed."
	}'
fi
echo

# ---- the live machine ----
if [ "${BENCH_LIVE:-1}" = 1 ]; then
	setup_tree live / # no --sysroot: the real /sys and /proc
	setup_text live /
	lkeys=(live.json1 live.text live.floor live.safe)
	[ "${TEXTFLOOR[live]}" = live.floor ] || lkeys+=(live.tfloor)
	if [ $have_lstopo = 1 ]; then
		cmd live.lstopo lstopo --whole-io --of xml
		lkeys+=(live.lstopo)
	fi
	group "${lkeys[@]}"
	NUMASTOR_THREADS=1 "$numastor" check --json >"$work/live.json" 2>/dev/null || true
	echo "live machine (/sys and /proc of this host; lstopo with its default components)"
	echo "  floor list: $(cat "$work/live.json.summary")"
	if [ "${BENCH_SNAPCHECK:-1}" = 1 ]; then
		if "$numastor" snapshot -O "$work/live.snap.tar.gz" >/dev/null 2>"$work/live.snap.err"; then
			py snapcheck "$work/live.snap.tar.gz" / "$work/live.json.log" | sed 's/^/  /'
		else
			echo "  snapshot cross-check: numastor snapshot failed: $(tail -n1 "$work/live.snap.err" | cut -c1-160)"
		fi
	fi
	printf "  %-40s %9s %9s %8s\n" "" "median ms" "min ms" "RSS MiB"
	row "numastor check --json (1 thread)" live.json1 "$(py found "$work/live.json")"
	row "numastor check (text)" live.text
	row "floor, plain" live.floor "$(tail -n1 "$work/live.floor.err" 2>/dev/null | sed 's/^floor: //; s/, [0-9.]* ms$//')"
	row "floor, in-root" live.safe
	[ "${TEXTFLOOR[live]}" = live.floor ] || row "floor of check (text), plain" live.tfloor
	[ $have_lstopo = 0 ] || row "lstopo --whole-io --of xml" live.lstopo
	pr "check --json / plain floor" live.json1 live.floor
	pr "check --json / in-root floor" live.json1 live.safe
	pr "check text   / its plain floor" live.text "${TEXTFLOOR[live]}"
	[ $have_lstopo = 0 ] || pr "check --json / lstopo" live.json1 live.lstopo
	echo
fi

# ---- growth ----
gkeys=()
declare -a gdisks=() gcpus=()
for n in $disks_list; do
	name=large-8n448c-${n}nvme
	[ -n "${TREE[$name]:-}" ] || continue
	setup_tree "d$n" "${TREE[$name]}" --sysroot "${TREE[$name]}"
	gkeys+=("d$n.json1" "d$n.floor")
	gdisks+=("$n")
done
declare -A CKEY
for c in $cpus_list; do
	name=large-8n${c}c-${cpu_disks}nvme
	[ -n "${TREE[$name]:-}" ] || continue
	gcpus+=("$c")
	if [ "$c" = 448 ] && [[ " ${gdisks[*]} " == *" $cpu_disks "* ]]; then
		CKEY[$c]=d$cpu_disks.json1 # the same tree as a disk-growth one: measured there
		continue
	fi
	setup_tree "c$c" "${TREE[$name]}" --sysroot "${TREE[$name]}"
	gkeys+=("c$c.json1")
	CKEY[$c]=c$c.json1
done
per_disk=n/a
echo "growth (check --json, 1 thread; interleaved across sizes)"
if [ ${#gkeys[@]} -gt 0 ]; then
	group "${gkeys[@]}"
fi
printf "  %-26s %10s %10s %9s %10s\n" tree "median ms" "floor ms" "vs floor" "RSS MiB"
for n in $disks_list; do
	name=large-8n448c-${n}nvme
	if [ -z "${TREE[$name]:-}" ]; then
		printf "  %-26s not generated: %s\n" "$name" "${WHY[$name]}"
		continue
	fi
	read -r -a s <<<"$(stat_of "d$n.json1")"
	read -r -a f <<<"$(stat_of "d$n.floor")"
	read -r -a q <<<"$(ratio_of "d$n.json1" "d$n.floor")"
	printf "  %-26s %10s %10s %8sx %10s\n" "$name" "$(ms "${s[0]}")" "$(ms "${f[0]}")" "${q[1]}" "$(mib "${s[2]}")"
	echo "$n ${s[0]} ${s[2]}" >>"$work/growth.disks"
done
if [ ${#gdisks[@]} -ge 2 ]; then
	per_disk=$(sort -n "$work/growth.disks" | awk 'NR == 1 { n0 = $1; t0 = $2 } { n1 = $1; t1 = $2 } END { printf "%.2f", (t1 - t0) * 1000 / (n1 - n0) }')
	sort -n "$work/growth.disks" | awk -v pd="$per_disk" '{ n[NR] = $1; t[NR] = $2; k[NR] = $3 }
	END {
		printf "  per disk: %s ms (slope %d->%d), %.1f KiB peak RSS\n", pd, n[1], n[NR], (k[NR] - k[1]) / (n[NR] - n[1])
		for (i = 2; i < NR; i++) {
			m1 = (t[i] - t[i - 1]) / (n[i] - n[i - 1]); m2 = (t[i + 1] - t[i]) / (n[i + 1] - n[i])
			printf "  marginal ms/disk %d->%d %.2f, %d->%d %.2f: ratio %.2f (1.0 = linear, >1 grows faster)\n", n[i - 1], n[i], m1 * 1000, n[i], n[i + 1], m2 * 1000, (m1 > 0 ? m2 / m1 : 0)
		}
	}'
fi
echo "  CPUs (8 nodes, $cpu_disks disks):"
for c in $cpus_list; do
	name=large-8n${c}c-${cpu_disks}nvme
	if [ -z "${TREE[$name]:-}" ]; then
		printf "  %-26s not generated: %s\n" "$name" "${WHY[$name]}"
		continue
	fi
	read -r -a s <<<"$(stat_of "${CKEY[$c]}")"
	printf "  %-26s %10s %10s %9s %10s\n" "$name" "$(ms "${s[0]}")" "" "" "$(mib "${s[2]}")"
	echo "$c ${s[0]} ${s[2]}" >>"$work/growth.cpus"
done
if [ ${#gcpus[@]} -ge 2 ]; then
	sort -n "$work/growth.cpus" | awk 'NR == 1 { c0 = $1; t0 = $2; k0 = $3 } { c1 = $1; t1 = $2; k1 = $3 }
	END { printf "  per CPU: %.3f ms, %.1f KiB peak RSS (%d->%d CPUs, %d disks); time x%.2f for CPUs x%.2f\n", (t1 - t0) * 1000 / (c1 - c0), (k1 - k0) / (c1 - c0), c0, c1, '"$cpu_disks"', (t0 > 0 ? t1 / t0 : 0), c1 / c0 }'
fi
echo "  (figures are noisy while other work shares the cores: load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo

# ---- the snapshot's memory ----
# numastor snapshot streams (issue 35): its peak RSS (ru_maxrss) on the SNAP_DISKS tree, each of
# SNAP_ROUNDS runs measured alone, median and range (memory does not need interleaving: it is not
# the machine's load that moves it)
snap_rss=n/a
snap_name=large-8n448c-${snap_disks}nvme
[ -n "${TREE[$snap_name]:-}${WHY[$snap_name]:-}" ] || gen "$snap_name"
echo "snapshot (numastor snapshot --sysroot, peak RSS of each of $snap_rounds runs)"
if [ -n "${TREE[$snap_name]:-}" ]; then
	: >"$work/snap.runs"
	for _ in $(seq "$snap_rounds"); do
		rm -f "$work/snap.tar.gz"
		"$work/measure" -- "$numastor" snapshot --sysroot "${TREE[$snap_name]}" -O "$work/snap.tar.gz" \
			>>"$work/snap.runs" 2>"$work/snap.err" || true
	done
	if awk '$3 != 0 { bad = 1 } END { exit bad || NR == 0 }' "$work/snap.runs"; then
		snap_ms=$(sort -n "$work/snap.runs" | awk '{ t[NR] = $1 } END { printf "%.0f", t[int((NR + 1) / 2)] * 1000 }')
		read -r snap_rss snap_line < <(sort -k2,2n "$work/snap.runs" | awk -v ms="$snap_ms" -v name="$snap_name" \
			-v size="$(stat -c %s "$work/snap.tar.gz")" '{ k[NR] = $2 }
			END {
				m = k[int((NR + 1) / 2)]
				printf "%.1f %-26s median %.1f MiB peak RSS (%.1f-%.1f), median %s ms, bundle %.1f MB\n", m / 1024, name, m / 1024, k[1] / 1024, k[NR] / 1024, ms, size / 1e6
			}')
		echo "  $snap_line"
	else
		echo "  $snap_name: numastor snapshot failed: $(tail -n1 "$work/snap.err" | cut -c1-160)"
	fi
else
	printf "  %-26s not generated: %s\n" "$snap_name" "${WHY[$snap_name]}"
fi
echo

read -r -a s <<<"$(stat_of main.json1)"
echo "bench: check/floor=$r_floor check/lstopo=$r_lstopo list/lstopo=$r_list text/floor=$r_text rss_mib=$(mib "${s[2]}") per_disk_ms=$per_disk disks=$main_disks snap_rss_mib=$snap_rss"
