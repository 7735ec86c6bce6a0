# Booted with isolcpus=managed_irq,domain,2-3 nohz_full=2-3 (node 1's CPUs isolated; cmdline),
# a one-queue virtio-blk disk added (qemu-args). The guest reads what the kernel says about
# isolation (vm_isolation_truth), which CPUs each hardware queue serves (vm_hctx_cpus), which
# vector completes each CPU's reads (vm_measure_pairing), and where every vector sits (vm_truth)
# around numastor check; then fix --dry-run, fix, a check after the moved vectors fired, and
# fix --revert, with the kernel's affinities read after each.
VM_DISKS=$((VM_DISKS + 1))
vm_load_storage
vm_wait_disks 60
# cgroup2 is not mounted yet: numastor cannot know the cgroup side
vm_isolation_truth > "$VM_OUT/isolation-nocgroup.txt"
vm_numastor nocgroup check --json
vm_cgroup2_mount
vm_isolation_truth > "$VM_OUT/isolation.txt"
vm_hctx_cpus > "$VM_OUT/hctx-cpus.txt"
# shellcheck disable=SC2034 # read by vm_measure_pairing
VM_PAIR_READS=32
vm_measure_pairing > "$VM_OUT/iso-pairing.txt"
vm_isolation_fix_round
