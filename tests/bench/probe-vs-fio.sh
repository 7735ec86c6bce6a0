#!/usr/bin/env bash
# numastor probe against Debian's fio, the same job side by side: random 4k reads, O_DIRECT,
# io_uring, the same iodepth, jobs, CPUs (one node's) and duration, the two runs alternating
# so that the machine's drift falls on both. Prints each round's IOPS and the ratio
# probe / fio, then the ratios' minimum and median (the target: within 10% of fio).
#
#   tests/bench/probe-vs-fio.sh [NUMASTOR] [DEVICE]
#
# Without DEVICE it makes a loop device over a 256 MiB file of random bytes in /dev/shm (needs
# root: losetup) and removes it afterwards. The VM bed's scenario bench-probe-vs-fio runs this
# same script in the guest on the NVMe and virtio disks (tests/vm/README.md).
#
# Environment: ROUNDS (default 5), SECONDS_EACH (default 3), BS (4k), IODEPTH (32), JOBS (1),
# NODE (default: the first node with CPUs).
# It prints figures; it does not fail on the target (exit 0 unless it could not run).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
numastor=${1:-$here/../../build/numastor}
dev=${2:-}
rounds=${ROUNDS:-5}
secs=${SECONDS_EACH:-3}
bs=${BS:-4k}
iodepth=${IODEPTH:-32}
jobs=${JOBS:-1}

die() { echo "probe-vs-fio: $*" >&2; exit 2; }
[ -x "$numastor" ] || die "$numastor is not built (meson setup build && ninja -C build)"
command -v fio >/dev/null || die "needs fio (apt-get install fio)"
command -v python3 >/dev/null || die "needs python3"

loop=
cleanup() { [ -z "$loop" ] || losetup -d "$loop"; [ -z "${img:-}" ] || rm -f "$img"; }
trap cleanup EXIT
if [ -z "$dev" ]; then
	[ "$(id -u)" = 0 ] || die "making a loop device needs root (or name a DEVICE you may read)"
	img=$(mktemp "${BENCH_TMPDIR:-/dev/shm}/numastor-probe-bench.XXXXXX")
	head -c $((256 << 20)) /dev/urandom > "$img"
	loop=$(losetup -f --show -r "$img")
	dev=$loop
fi
dev=/dev/${dev#/dev/}
[ -b "$dev" ] || die "$dev is not a block device"

node=${NODE:-}
if [ -z "$node" ]; then
	node=0
	for d in /sys/devices/system/node/node*; do
		[ -e "$d/cpulist" ] || continue
		if [ -n "$(cat "$d/cpulist")" ]; then
			node=${d##*node}
			break
		fi
	done
fi
if [ -e "/sys/devices/system/node/node$node/cpulist" ]; then
	cpus=$(cat "/sys/devices/system/node/node$node/cpulist")
else
	cpus=$(cat /sys/devices/system/cpu/online)
fi

echo "device $dev; random reads of $bs, iodepth $iodepth, $jobs job(s), node $node (CPUs $cpus), ${secs} s each, $rounds rounds"
if grep -qw hypervisor /proc/cpuinfo; then
	echo "under a hypervisor: the ratio is what counts, not the IOPS"
fi
printf '%-6s %12s %12s %8s\n' round probe fio ratio
ratios=()
for r in $(seq 1 "$rounds"); do
	# alternate which goes first
	order="probe fio"
	[ $((r % 2)) = 0 ] && order="fio probe"
	for what in $order; do
		if [ "$what" = probe ]; then
			p=$("$numastor" probe --json -d "$secs" -b "$bs" -q "$iodepth" -J "$jobs" -N "$node" "$dev" |
				python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["devices"][0]["nodes"][0]["iops"])')
		else
			f=$(fio --name=probe-vs-fio --filename="$dev" --readonly --direct=1 --rw=randread \
				--ioengine=io_uring --bs="$bs" --iodepth="$iodepth" --numjobs="$jobs" --group_reporting \
				--cpus_allowed="$cpus" --cpus_allowed_policy=shared --time_based --runtime="$secs" \
				--randrepeat=0 --norandommap --output-format=json |
				python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["jobs"][0]["read"]["iops"])')
		fi
	done
	ratio=$(python3 -c "print(f'{$p / $f:.3f}')")
	ratios+=("$ratio")
	printf '%-6s %12.0f %12.0f %8s\n' "$r" "$p" "$f" "$ratio"
done
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
r = sorted(float(x) for x in sys.argv[1:])
print(f"probe/fio: min {r[0]:.3f}, median {statistics.median(r):.3f}, max {r[-1]:.3f} (target: within 10% of fio)")
PY
