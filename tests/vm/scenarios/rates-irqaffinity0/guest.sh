# Rates on the real kernel, on the irqaffinity=0 machine of fix-irqaffinity0 (unmanaged
# vectors on CPU 0, the pre-fix nvme forcing the root-bus NVMe to node 0). While O_DIRECT
# reads pinned to every CPU in turn run on every disk: `check --interval 2 --json` before the
# fix, then `numastor fix`, then `check --interval 2 --json` again (the `check` round, between
# two ground truths) and a `check --json` without an interval (counts since fix). The journal
# is copied after the fix; ground truth (vm_truth) around each step bounds what numastor says.

# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
# Background readers, one per disk, cycling through the online CPUs until /tmp/io.stop.
io_start() {
	local _d _c _cpus
	rm -f /tmp/io.stop
	_rd /sys/devices/system/cpu/online
	_cpus=$(seq -s ' ' 0 "${_v##*-}")
	for _d in $(vm_disks); do
		(
			while [ ! -e /tmp/io.stop ]; do
				for _c in $_cpus; do
					taskset -c "$_c" dd if="/dev/$_d" of=/dev/null bs=4096 count=8 iflag=direct 2>/dev/null || :
				done
			done
		) &
	done
	sleep 0.5
}
io_stop() {
	touch /tmp/io.stop
	wait
}

vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_fire_disks
vm_truth > "$VM_OUT/unfixed-before.txt"
io_start
vm_numastor unfixed check --interval 2 --json
io_stop
vm_truth > "$VM_OUT/before-fix.txt"
vm_numastor fix fix --json
vm_save_journal journal-fix.json
# on x86 without interrupt remapping a move takes effect at the vector's next interrupt
vm_fire_disks
vm_truth > "$VM_OUT/after-fix.txt"
vm_truth > "$VM_OUT/truth-before.txt"
io_start
vm_numastor check check --interval 2 --json
io_stop
vm_truth > "$VM_OUT/truth.txt"
vm_numastor sincefix check --json
vm_truth > "$VM_OUT/after-sincefix.txt"
