# Stock kernel and drivers, with the bed's NVMe subsystem: numastor check --json
# against ground truth for every disk and every path of the multipath head; the queue -> vector
# pairing measured first with O_DIRECT reads from each CPU in turn, and which path of the head
# serves each CPU (its reads counted on the path disks).
vm_load_storage
vm_wait_disks 60
vm_measure_pairing > "$VM_OUT/pairing.txt"
# which path serves each CPU, measured, and the kernel's numa_nodes (7.x) after those reads
vm_measure_paths > "$VM_OUT/paths.txt"
vm_check_round
# The capture the fixtures replay on every test run (tests/fixtures/captures/, see
# tests/check-captures.py): `numastor snapshot` between two readings of ground truth, kept with
# it, so that the replayed report is held to this kernel's own files.
mkdir -p "$VM_OUT/capture"
vm_truth > "$VM_OUT/capture/truth-before.txt"
vm_numastor snapshot snapshot -O "$VM_OUT/capture/snapshot.tar.gz"
vm_truth > "$VM_OUT/capture/truth.txt"
cp "$VM_OUT/pairing.txt" "$VM_OUT/paths.txt" "$VM_OUT/capture/"
# iopolicy queue-depth where the paths print their queue depth (7.x): numastor's reading of it,
# then numa again
vm_queue_depth_round
# numastor trace (issue 34) against the kernel's own counters: the node-1 HBA's vector placed
# on either node, rq_affinity 1 and 0, pinned reads from both nodes (tests/vm/tracecheck.py)
vm_trace_round
# last: it writes a PCI function's numa_node
vm_kernel_facts
