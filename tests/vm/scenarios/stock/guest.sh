# Stock kernel and drivers, with the bed's NVMe subsystem: numastor check --json
# against ground truth for every disk and every path of the multipath head; the queue -> vector
# pairing measured first with O_DIRECT reads from each CPU in turn.
vm_load_storage
vm_wait_disks 60
vm_measure_pairing > "$VM_OUT/pairing.txt"
vm_check_round
# The capture the fixtures replay on every test run (tests/fixtures/captures/, see
# tests/check-captures.py): `numastor snapshot` between two readings of ground truth, kept with
# it, so that the replayed report is held to this kernel's own files.
mkdir -p "$VM_OUT/capture"
vm_truth > "$VM_OUT/capture/truth-before.txt"
vm_numastor snapshot snapshot -O "$VM_OUT/capture/snapshot.tar.gz"
vm_truth > "$VM_OUT/capture/truth.txt"
cp "$VM_OUT/pairing.txt" "$VM_OUT/capture/pairing.txt"
# last: it writes a PCI function's numa_node
vm_kernel_facts
