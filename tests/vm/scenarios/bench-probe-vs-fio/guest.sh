# tests/bench/probe-vs-fio.sh in the guest, on the root-bus NVMe and the virtio-blk disk:
# numastor probe and fio alternating, the same job, node 0's CPUs. A benchmark, run by name:
#   NUMASTOR_VM_KERNELS=6.1 NUMASTOR_VM_SCENARIOS=bench-probe-vs-fio tests/vm/run-all.sh
# Its figures are in the result directory's bench-*.out (NUMASTOR_VM_KEEP=1 keeps it).
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_load_storage
vm_wait_disks 60
vm_disk_by_serial NSROOT0001
nvme=$_v
vm_fact bench.disks "$nvme vda"
for d in "$nvme" vda; do
	ROUNDS=${VM_BENCH_ROUNDS:-5} SECONDS_EACH=${VM_BENCH_SECONDS:-3} NODE=0 \
		sh /vm/bench/probe-vs-fio.sh /usr/bin/numastor "$d" > "$VM_OUT/bench-$d.out" 2>&1 || :
done
vm_check_round
