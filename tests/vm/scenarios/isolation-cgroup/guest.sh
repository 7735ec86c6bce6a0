# Stock isolation on the command line, irqaffinity=0 (every unmanaged vector on CPU 0: fix has
# node-1 vectors to move onto CPUs 2-3), a two-queue virtio-blk disk added (qemu-args). At run
# time CPU 2 goes offline and back, so that the managed vectors whose mask is 2-3 move to CPU 3
# and stay there; then cgroup2 is mounted and a child cgroup made an isolated cpuset partition
# of CPU 3 (the kernel's answer read back: the scenario stops there, saying why, when it is
# "isolated invalid (...)"). The guest reads what the kernel says about isolation, the queues'
# CPUs and the measured pairing, and every vector around numastor check, fix --dry-run, fix, a
# check after the moved vectors fired, and fix --revert.
VM_DISKS=$((VM_DISKS + 1))
vm_load_storage
vm_wait_disks 60
vm_cpu_cycle 2
# the pairing first: once CPU 3 is the partition's, the root cgroup's tasks may not run there
vm_hctx_cpus > "$VM_OUT/hctx-cpus.txt"
# shellcheck disable=SC2034 # read by vm_measure_pairing
VM_PAIR_READS=32
vm_measure_pairing > "$VM_OUT/iso-pairing.txt"
vm_cgroup2_mount
vm_cpuset_partition nsiso 3 isolated
vm_isolation_truth > "$VM_OUT/isolation.txt"
vm_isolation_fix_round
