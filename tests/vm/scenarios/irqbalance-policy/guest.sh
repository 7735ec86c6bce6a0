# Debian's irqbalance (fetch-irqbalance.sh) against numastor's placement. irqaffinity=0 and
# the pre-fix nvme driver: numastor moves the forced NVMe's admin vector to node 0's CPUs and
# the megasas vector to node 1's. The guest snapshots every IRQ (vm_irqs) around each step.
# shellcheck disable=SC2154 # _v, _pcidev: set by guest/lib.sh helpers
[ -x /usr/sbin/irqbalance ] || { echo "no irqbalance in the initramfs (tests/vm/fetch-irqbalance.sh)" >&2; exit 1; }
vm_load_storage /vm/prefix-nvme/nvme.ko
vm_wait_disks 60
vm_truth > "$VM_OUT/before.txt"
vm_irqs > "$VM_OUT/irqs-0.txt"
policy=/usr/libexec/numastor/irqbalance-policy

# numastor fix sees a running irqbalance, with and without its policy script (the daemon
# samples hourly: it places nothing meanwhile).
daemon() { # args...
	/usr/sbin/irqbalance --foreground --interval=3600 "$@" >> "$VM_OUT/ib-daemon.log" 2>&1 &
	ib=$!
	_v=
	_n=100
	while [ "$_v" != irqbalance ]; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || { echo "irqbalance did not start: $(cat "$VM_OUT/ib-daemon.log")" >&2; exit 1; }
		sleep 0.05
		_rd "/proc/$ib/comm"
	done
}
daemon
vm_numastor advice fix --dry-run --json
kill "$ib"
wait "$ib" || :
daemon --policyscript="$policy"
vm_numastor advice-policy fix --dry-run --json
kill "$ib"
wait "$ib" || :

# Place, then ask the policy about every storage vector by its function's /sys/devices path,
# and about the first two of each function also by the /sys/bus/pci/devices link irqbalance
# passes and through the installed wrapper (each answer costs 0.2 s under TCG).
vm_numastor fix1 fix --json
vm_irqs > "$VM_OUT/irqs-1.txt"
vm_save_journal journal-1.json
ask() { # tag devpath irq
	local _rc=0
	numastor irqbalance-policy "$2" "$3" > "$VM_OUT/policy-$1.out" 2>&1 || _rc=$?
	echo "$_rc" > "$VM_OUT/policy-$1.rc"
}
# every disk on a PCI function: the visible ones and the NVMe subsystem's hidden path disks
# (its head has no function of its own)
for _d in $(vm_disks) $(cd /sys/block && ls -d nvme*c*n* 2> /dev/null); do
	_resolve "/sys/block/$_d/device"
	_pci_walk "$_v" || continue
	_bdf=${_pcidev##*/}
	echo "$_d $_bdf $_pcidev" >> "$VM_OUT/policy-devices.txt"
	_n=0
	for _q in "$_pcidev"/msi_irqs/*; do
		[ -e "$_q" ] || continue
		ask "$_d-${_q##*/}" "$_pcidev" "${_q##*/}"
		_n=$((_n + 1))
		[ "$_n" -le 2 ] || continue
		ask "$_d-${_q##*/}-link" "/sys/bus/pci/devices/$_bdf" "${_q##*/}"
		"$policy" "/sys/bus/pci/devices/$_bdf" "${_q##*/}" > "$VM_OUT/policy-$_d-${_q##*/}-wrapper.out" 2>&1 || :
	done
done

# irqbalance without the policy: one pass (a one-second sample instead of ten).
/usr/sbin/irqbalance --oneshot --debug --interval=1 > "$VM_OUT/ib-plain.log" 2>&1
vm_irqs > "$VM_OUT/irqs-2.txt"
vm_numastor revert1 fix --revert
vm_irqs > "$VM_OUT/irqs-3.txt"

# Place again, then irqbalance with numastor's policy script.
vm_numastor fix2 fix --json
vm_irqs > "$VM_OUT/irqs-4.txt"
vm_save_journal journal-2.json
/usr/sbin/irqbalance --oneshot --debug --interval=1 --policyscript="$policy" > "$VM_OUT/ib-policy.log" 2>&1
vm_irqs > "$VM_OUT/irqs-5.txt"
vm_numastor revert2 fix --revert
vm_fire_disks
vm_check_round
