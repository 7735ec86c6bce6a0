#!/bin/sh
# What numastor trace costs the workload it watches: the same fio job (random 4k reads, O_DIRECT,
# io_uring, pinned to one CPU) without and with `numastor trace` attached to the disk, the two runs
# alternating so the machine's drift falls on both. Prints each round's IOPS and the ratio
# traced / plain, then the ratios' median in one machine-readable line:
#
#   bench: trace-overhead dev=loop0 rounds=5 plain_iops=93210 traced_iops=90110 ratio=0.967 overhead=3.3% \
#          ns_per_request=520 core_at_200k=10.4%
#
# ns_per_request is the kernel side's own time per request (kernel.bpf_stats_enabled: the issue and
# completion programs' mean run times), core_at_200k the share of one CPU that costs at 200k IOPS.
#
#   tests/bench/trace-overhead.sh [NUMASTOR] [DEVICE]     (POSIX shell: runs in the busybox VM guest too)
#
# Without DEVICE it makes a direct-I/O loop device over a 256 MiB file in /dev/shm (root: losetup)
# and removes it afterwards; null_blk (modprobe null_blk) is a device too where the kernel has it.
# Environment: ROUNDS (default 5), SECONDS_EACH (default 4), IODEPTH (32), CPU (default: the last
# CPU this shell may run on). Root (BPF). It prints figures; it does not fail on the target
# (numastor-trace(8) states the measured figure; exit 0 unless it could not run).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
numastor=${1:-$here/../../build/numastor}
dev=${2:-}
rounds=${ROUNDS:-5}
secs=${SECONDS_EACH:-4}
iodepth=${IODEPTH:-32}

die() { echo "trace-overhead: $*" >&2; exit 2; }
[ -x "$numastor" ] || die "$numastor is not built (meson setup build && ninja -C build)"
command -v fio >/dev/null || die "needs fio (apt-get install fio)"
[ "$(id -u)" = 0 ] || die "needs root (BPF, losetup)"

loop=
img=
tpid=
cleanup() {
	[ -z "$tpid" ] || kill "$tpid" 2>/dev/null || true
	[ -z "$loop" ] || losetup -d "$loop"
	[ -z "$img" ] || rm -f "$img"
}
trap cleanup EXIT
if [ -z "$dev" ]; then
	img=$(mktemp "${BENCH_TMPDIR:-/dev/shm}/numastor-trace-bench.XXXXXX")
	head -c $((256 << 20)) /dev/zero > "$img"
	loop=$(losetup -f --show --direct-io=on "$img")
	dev=$loop
fi
disk=$(basename "$dev")
cpu=${CPU:-$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status | tr ',' '\n' | tail -1 | sed 's/.*-//')}

# one fio run, pinned: its read IOPS (terse field 8)
run_fio() {
	taskset -c "$cpu" fio --name=bench --filename="$dev" --rw=randread --bs=4k --direct=1 \
		--ioengine=io_uring --iodepth="$iodepth" --runtime="$secs" --time_based --ramp_time=0.5 \
		--output-format=terse 2>/dev/null | awk -F';' '{print $8}'
}

# numastor trace attached for the whole fio run: started first, its programs loaded before fio
# begins (it prints nothing until it ends; the programs attach within a second)
run_traced() {
	"$numastor" trace -d $((secs + 4)) "$disk" > /dev/null 2>&1 &
	tpid=$!
	sleep 1.5
	kill -0 "$tpid" 2>/dev/null || die "numastor trace ended before fio started (run it alone to see why)"
	run_fio
	kill -INT "$tpid" 2>/dev/null || true
	wait "$tpid" 2>/dev/null || true
	tpid=
}

echo "trace-overhead: $dev, fio randread 4k iodepth $iodepth on CPU $cpu, $rounds rounds of $secs s each way"
ratios=
plains=
traceds=
i=1
while [ "$i" -le "$rounds" ]; do
	# alternate which goes first
	if [ $((i % 2)) = 1 ]; then
		p=$(run_fio); t=$(run_traced)
	else
		t=$(run_traced); p=$(run_fio)
	fi
	[ -n "$p" ] && [ "$p" -gt 0 ] || die "fio read nothing from $dev"
	r=$(awk -v t="$t" -v p="$p" 'BEGIN {printf "%.4f", t / p}')
	echo "  round $i: plain $p IOPS, traced $t IOPS, ratio $r"
	ratios="$ratios $r"
	plains="$plains $p"
	traceds="$traceds $t"
	i=$((i + 1))
done
# The kernel side's own cost, less noisy than an IOPS ratio on a small shared machine: one more
# traced run with kernel.bpf_stats_enabled, which makes the kernel time every run of every program
# (that timing adds two clock reads per run, so this is an upper bound); ns per request is the
# issue and completion programs' mean run time added up.
cost_ns=
if [ -w /proc/sys/kernel/bpf_stats_enabled ] && command -v bpftool >/dev/null; then
	was=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	"$numastor" trace -d $((secs + 4)) "$disk" > /dev/null 2>&1 &
	tpid=$!
	sleep 1.5
	run_fio > /dev/null
	cost_ns=$(bpftool prog show 2>/dev/null | awk '
		/ name (raw|btf)_(issue|issue_q|complete) / {
			for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
			if (c > 0) sum += t / c
		}
		END { if (sum > 0) printf "%.0f", sum }')
	kill -INT "$tpid" 2>/dev/null || true
	wait "$tpid" 2>/dev/null || true
	tpid=
	echo "$was" > /proc/sys/kernel/bpf_stats_enabled
fi

median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
mr=$(median $ratios)
cost=
[ -z "$cost_ns" ] || cost=" ns_per_request=$cost_ns core_at_200k=$(awk -v n="$cost_ns" 'BEGIN {printf "%.1f%%", n * 200000 / 1e7}')"
echo "bench: trace-overhead dev=$disk rounds=$rounds plain_iops=$(median $plains) traced_iops=$(median $traceds) ratio=$(printf '%.3f' "$mr") overhead=$(awk -v r="$mr" 'BEGIN {printf "%.1f%%", (1 - r) * 100}')$cost"
