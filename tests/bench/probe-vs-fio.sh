#!/bin/sh
# numastor probe against Debian's fio, the same job side by side: random 4k reads, O_DIRECT,
# io_uring, the same iodepth, jobs, CPUs (one node's) and duration, the two runs alternating
# so that the machine's drift falls on both. Prints each round's IOPS and the ratio
# probe / fio, then the ratios' minimum and median (the target: within 10% of fio).
#
#   tests/bench/probe-vs-fio.sh [NUMASTOR] [DEVICE]       (a POSIX shell script: the VM guest is busybox)
#
# Without DEVICE it makes a loop device over a 256 MiB file of random bytes in /dev/shm (needs
# root: losetup) and removes it afterwards. The VM bed's scenario bench-probe-vs-fio runs this
# same script in the guest on the NVMe and virtio disks (tests/vm/README.md).
#
# Environment: ROUNDS (default 5), SECONDS_EACH (default 3), BS (4k), IODEPTH (32), JOBS (1),
# NODE (default: the first node with CPUs). Needs only a POSIX shell's tools besides fio (the
# VM guest is busybox).
# It prints figures; it does not fail on the target (exit 0 unless it could not run).
set -eu

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
ratios=
for r in $(seq 1 "$rounds"); do
	# alternate which goes first
	order="probe fio"
	if [ $((r % 2)) = 0 ]; then
		order="fio probe"
	fi
	for what in $order; do
		if [ "$what" = probe ]; then
			p=$("$numastor" probe --json -d "$secs" -b "$bs" -Q "$iodepth" -J "$jobs" -N "$node" "$dev" |
				sed -n 's/^ *"iops": \([0-9.]*\),*$/\1/p' | head -n 1)
		else
			# terse output, version 3: field 8 is the read IOPS
			f=$(fio --name=probe-vs-fio --filename="$dev" --readonly --direct=1 --rw=randread \
				--ioengine=io_uring --bs="$bs" --iodepth="$iodepth" --numjobs="$jobs" --group_reporting \
				--cpus_allowed="$cpus" --cpus_allowed_policy=shared --time_based --runtime="$secs" \
				--randrepeat=0 --norandommap --output-format=terse --terse-version=3 | cut -d';' -f8)
		fi
	done
	if [ -z "$p" ] || [ -z "$f" ]; then
		die "round $r: no figure (probe '$p', fio '$f')"
	fi
	ratio=$(awk -v p="$p" -v f="$f" 'BEGIN { printf "%.3f", (f > 0 ? p / f : 0) }')
	ratios="$ratios $ratio"
	printf '%-6s %12.0f %12.0f %8s\n' "$r" "$p" "$f" "$ratio"
done
# shellcheck disable=SC2086 # one ratio a word
printf '%s\n' $ratios | sort -n | awk '{ r[NR] = $1 }
	END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
	      printf "probe/fio: min %.3f, median %.3f, max %.3f (target: within 10%% of fio)\n", r[1], m, r[NR] }'
