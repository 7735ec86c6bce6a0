# Two numastor fix runs started at once (one in the background), then one that meets the
# lock held by flock(1) from the shell, then --revert. irqaffinity=0 and the pre-fix nvme
# driver give the plan vectors to move.
# shellcheck disable=SC2154 # _v, _pcidev: set by guest/lib.sh helpers
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_truth > "$VM_OUT/before.txt"
vm_irqs > "$VM_OUT/irqs-before.txt"
vm_numastor plan fix --dry-run --json

/usr/bin/numastor fix --json > "$VM_OUT/a.out" 2> "$VM_OUT/a.err" &
a=$!
vm_numastor b fix --json
rc=0
wait "$a" || rc=$?
echo "$rc" > "$VM_OUT/a.rc"
vm_irqs > "$VM_OUT/irqs-both.txt"
vm_save_journal journal-both.json

# The lock held from the shell, with the holder's pid in the file as numastor writes it.
rm -f /tmp/holder
flock /run/numastor/lock sh -c 'echo $$ > /run/numastor/lock; echo $$ > /tmp/holder; sleep 4' &
h=$!
while [ ! -s /tmp/holder ]; do sleep 0.1; done
cp /tmp/holder "$VM_OUT/holder.pid"
vm_uptime
t0=$_v
vm_numastor locked fix --lock-timeout 1
vm_uptime
echo "$t0 $_v" > "$VM_OUT/locked.time"
vm_irqs > "$VM_OUT/irqs-locked.txt"
vm_save_journal journal-locked.json
wait "$h"

vm_numastor revert fix --revert --json
vm_irqs > "$VM_OUT/irqs-reverted.txt"
vm_save_journal journal-reverted.json
vm_fire_disks
vm_check_round
