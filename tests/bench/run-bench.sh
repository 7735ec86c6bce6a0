#!/usr/bin/env bash
# numastor benchmark on the large fixture machine (8 nodes, 448 CPUs, 64 NVMe x 64 queues).
#
#   tests/bench/run-bench.sh [NUMASTOR]        (default: build/numastor of this tree)
#
# Generates the machine (and 16- and 32-disk variants) into a temporary directory, builds
# the floor (floor.c: open and read once exactly what numastor reads, from the manifest
# gen-fixtures.py writes) and a small runner (measure.c: wall time, peak RSS), then runs
# each of `numastor check --sysroot T --json`, the floor and `HWLOC_FSROOT=T lstopo
# --whole-io --of xml` REPS times after one warm-up run, and prints median wall time, peak
# RSS, the ratios against the targets, and numastor's time at 16/32/64 disks.
# It prints figures; it does not fail on targets (exit 0 unless it could not run).
#
# Environment: REPS (default 7); BENCH_TMPDIR (default /dev/shm when writable, else
# $TMPDIR or /tmp; a disk-backed directory adds its own noise); CC (default cc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
numastor=${1:-$here/../../build/numastor}
reps=${REPS:-7}
cc=${CC:-cc}

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
trap 'rm -rf "$work"' EXIT

"$cc" -O2 -o "$work/floor" "$here/floor.c"
"$cc" -O2 -o "$work/measure" "$here/measure.c"

sizes="16 32 64"
names=""
for n in $sizes; do names="$names large-8n448c-${n}nvme"; done
t0=$(date +%s.%N)
# shellcheck disable=SC2086
python3 "$here/../fixtures/gen-fixtures.py" --manifest "$work" $names
t1=$(date +%s.%N)
big=$work/large-8n448c-64nvme

# bench LABEL CMD...: one warm-up, then $reps runs; leaves "median_s min_s rss_kib code" in $R
bench() {
	local label=$1 out=$work/$1.runs
	shift
	"$work/measure" -- "$@" >/dev/null 2>"$work/$label.err" || true
	: >"$out"
	for _ in $(seq "$reps"); do
		"$work/measure" -- "$@" >>"$out" 2>>"$work/$label.err"
	done
	R=$(sort -n "$out" | awk '{ t[NR] = $1; if ($2 > rss) rss = $2; code = $3 }
		END { m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2;
		      printf "%.6f %.6f %d %d", m, t[1], rss, code }')
}
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'; }

files=$(find "$big" | wc -l)
ops=$(wc -l <"$big/../large-8n448c-64nvme.reads")
echo "numastor benchmark: large-8n448c-64nvme (8 nodes, 448 CPUs, 64 NVMe x 64 queues + admin)"
echo "  tree: $files entries in $work (generated 16/32/64-disk trees in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
echo "  floor manifest: $ops operations ($(cut -c1 "$big/../large-8n448c-64nvme.reads" | sort | uniq -c | awk '{ printf "%s%d %s", sep, $1, $2; sep = ", " }'); r=read d=list l=readlink s=stat)"
echo "  numastor: $numastor"
echo "  $reps runs each after one warm-up; wall time fork to reap; peak RSS = max ru_maxrss"
echo

declare -A MED RSS CODE
for n in $sizes; do
	t=$work/large-8n448c-${n}nvme
	bench "numastor-$n" "$numastor" check --sysroot "$t" --json
	read -r MED[numastor-$n] _ RSS[numastor-$n] CODE[numastor-$n] <<<"$R"
	bench "floor-$n" "$work/floor" "$t" "$t.reads"
	read -r MED[floor-$n] _ RSS[floor-$n] CODE[floor-$n] <<<"$R"
done
bench numastor-text "$numastor" check --sysroot "$big"
read -r MED[numastor-text] _ RSS[numastor-text] CODE[numastor-text] <<<"$R"
# the same reads opened as a captured tree must be (links resolved inside the root, FIFOs refused)
bench floor-safe env FLOOR_SAFE=1 "$work/floor" "$big" "$big.reads"
read -r MED[floor-safe] _ RSS[floor-safe] CODE[floor-safe] <<<"$R"
have_lstopo=0
if command -v lstopo >/dev/null 2>&1; then
	have_lstopo=1
	bench lstopo env HWLOC_FSROOT="$big" lstopo --whole-io --of xml
	read -r MED[lstopo] _ RSS[lstopo] CODE[lstopo] <<<"$R"
fi

# what each tool found, so a fast run that read nothing does not pass for a fast run
"$numastor" check --sysroot "$big" --json >"$work/numastor.json" 2>/dev/null || true
found=$(python3 - "$work/numastor.json" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print("%d devices, %d hw queues, %d IRQs, %d findings, %d notes" % (
        len(d["devices"]), sum(len(x["hw_queues"]) for x in d["devices"]),
        sum(len(p["pci"]["irqs"]) for x in d["devices"] for p in x["paths"] if p["pci"]),
        len(d["findings"]), len(d["notes"])))
except Exception as e:
    print("no JSON document (%s)" % e)
EOF
)

row() { printf "  %-34s %10s ms %10s MiB   %s\n" "$1" "$(ms "$2")" "$(mib "$3")" "$4"; }
printf "  %-34s %13s %14s   %s\n" "" "median wall" "peak RSS" "exit / found"
row "numastor check --json" "${MED[numastor-64]}" "${RSS[numastor-64]}" "exit ${CODE[numastor-64]}: $found"
row "numastor check (text, for scale)" "${MED[numastor-text]}" "${RSS[numastor-text]}" "exit ${CODE[numastor-text]}"
row "floor (same reads, once)" "${MED[floor-64]}" "${RSS[floor-64]}" "$(tail -n1 "$work/floor-64.err" | sed 's/^floor: //; s/, [0-9.]* ms$//')"
row "floor, in-root (openat2+fstat)" "${MED[floor-safe]}" "${RSS[floor-safe]}" "what a captured tree's safety costs the floor"
if [ $have_lstopo = 1 ]; then
	HWLOC_FSROOT="$big" lstopo --whole-io --of xml >"$work/lstopo.xml" 2>/dev/null || true
	lfound=$(for ty in NUMANode Package Core PU PCIDev OSDev; do printf "%s %s " "$(grep -c "<object type=\"$ty\"" "$work/lstopo.xml")" "$ty"; done)
	row "lstopo --whole-io --of xml" "${MED[lstopo]}" "${RSS[lstopo]}" "exit ${CODE[lstopo]}: $lfound"
else
	echo "  lstopo: not installed (Debian package hwloc-nox)"
fi
echo

nf=$(ratio "${MED[numastor-64]}" "${MED[floor-64]}")
echo "targets"
echo "  numastor / floor      = ${nf}x   (target <= 1.5x)  $(awk -v r="$nf" 'BEGIN { print (r != "n/a" && r <= 1.5) ? "met" : "NOT met" }')"
echo "  numastor / safe floor = $(ratio "${MED[numastor-64]}" "${MED[floor-safe]}")x   (the same opens numastor makes on a captured tree)"
if [ $have_lstopo = 1 ]; then
	ln=$(ratio "${MED[lstopo]}" "${MED[numastor-64]}")
	echo "  lstopo / numastor     = ${ln}x   (target >= 5x)    $(awk -v r="$ln" 'BEGIN { print (r != "n/a" && r >= 5) ? "met" : "NOT met" }')"
	echo "  lstopo / floor        = $(ratio "${MED[lstopo]}" "${MED[floor-64]}")x   (for scale: what lstopo reads vs what numastor must read)"
fi
echo "  numastor peak RSS     = $(mib "${RSS[numastor-64]}") MiB (target < 16 MiB)  $(awk -v k="${RSS[numastor-64]}" 'BEGIN { print (k < 16384) ? "met" : "NOT met" }')"
echo

echo "scaling (same machine, 16/32/64 NVMe)"
printf "  %6s %14s %14s %16s %10s\n" disks "numastor ms" "floor ms" "numastor/disk ms" "vs floor"
for n in $sizes; do
	printf "  %6s %14s %14s %16s %9sx\n" "$n" "$(ms "${MED[numastor-$n]}")" "$(ms "${MED[floor-$n]}")" \
		"$(awk -v t="${MED[numastor-$n]}" -v n="$n" 'BEGIN { printf "%.2f", t * 1000 / n }')" \
		"$(ratio "${MED[numastor-$n]}" "${MED[floor-$n]}")"
done
awk -v a="${MED[numastor-16]}" -v b="${MED[numastor-32]}" -v c="${MED[numastor-64]}" 'BEGIN {
	m1 = (b - a) * 1000 / 16; m2 = (c - b) * 1000 / 32
	printf "  marginal cost per disk: %.2f ms (16->32), %.2f ms (32->64); linear growth keeps these equal\n", m1, m2
	if (m1 > 0) printf "  (32->64) / (16->32) marginal = %.2f  (1.0 = linear, 2.0 = quadratic)\n", m2 / m1 }'
