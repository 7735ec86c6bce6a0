# fix, then the nvme driver reloaded so that IRQ numbers and names change, then --revert.
# irqaffinity=0 and the pre-fix nvme (like fix-irqaffinity0): the admin vectors and the megasas
# vector start on CPU 0, so fix moves them. The reload: nvme removed and loaded again with
# every controller held back (driver_override "none"), then bound one by one in a rotated
# order (the one that was nvme1 first, the one that was nvme0 last): every controller (the two
# NVMe, the NVMe subsystem's two) gets another name and the first takes the IRQ numbers just
# freed.
# The new admin vectors are then put on CPU 3 (as an operator or irqbalance would place new
# vectors), so a stale journal entry written onto them shows in the kernel's files.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return

# every MSI vector of every PCI function: bdf, driver, controller (nvme), irq, action, affinity
rid_pci_state() { # stage
	local _d _bdf _drv _ctl _i _n _a
	for _d in /sys/bus/pci/devices/*; do
		[ -d "$_d/msi_irqs" ] || continue
		_bdf=${_d##*/}
		_drv=-
		if [ -e "$_d/driver" ]; then
			_link_base "$_d/driver"
			_drv=$_v
		fi
		_ctl=-
		for _i in "$_d"/nvme/nvme*; do [ -e "$_i" ] && _ctl=${_i##*/}; done
		for _i in "$_d"/msi_irqs/*; do
			[ -e "$_i" ] || continue
			_n=${_i##*/}
			_rd "/sys/kernel/irq/$_n/actions"
			_a=$_v
			_rd "/proc/irq/$_n/smp_affinity_list"
			_t "$_bdf" "$_drv" "$_ctl" "$_n" "$_a" "$_v"
		done
	done > "$VM_OUT/pci-$1.txt"
}
# every disk: name, identity, PCI function, rq_affinity
rid_disks() { # stage
	local _d _id _p
	for _d in $(vm_disks); do
		vm_disk_id "$_d"
		_id=$_v
		vm_disk_pci "$_d"
		_p=$_v
		_rd "/sys/block/$_d/queue/rq_affinity"
		_t "$_d" "$_id" "$_p" "$_v"
	done > "$VM_OUT/disks-$1.txt"
}
rid_nvme_pcis() {
	local _d
	for _d in /sys/bus/pci/devices/*; do
		_rd "$_d/class"
		[ "$_v" = 0x010802 ] && echo "${_d##*/}"
	done
	return 0
}

ctl_num() { # bdf: the number of its nvme controller
	local _c
	for _c in "/sys/bus/pci/devices/$1"/nvme/nvme*; do [ -e "$_c" ] && echo "${_c##*/nvme}"; done
	return 0
}
# Bind the NVMe functions $1 to nvme one at a time, each live before the next (held back
# with driver_override "none" until then): each takes the lowest free name and IRQ numbers.
bind_in_order() { # "bdf..."
	local _b _i _c
	for _b in $1; do
		echo > "/sys/bus/pci/devices/$_b/driver_override"
		echo "$_b" > /sys/bus/pci/drivers/nvme/bind
		for _i in $(seq 1 300); do
			_c=$(ctl_num "$_b")
			[ -n "$_c" ] && [ "$(cat "/sys/class/nvme/nvme$_c/state" 2> /dev/null)" = live ] && break
			sleep 0.1
		done
	done
}

# At boot too, one controller at a time in PCI order (the four probe in parallel otherwise,
# and which of them gets the lowest IRQ numbers varies): c0 = nvme0 holds the lowest ones.
for bdf in $(rid_nvme_pcis); do echo none > "/sys/bus/pci/devices/$bdf/driver_override"; done
vm_load_storage /vm/prefix-nvme/nvme.ko
bind_in_order "$(rid_nvme_pcis | tr '\n' ' ')"
vm_wait_disks 60
rid_pci_state boot
rid_disks boot
vm_irqs > "$VM_OUT/irqs-before.txt"
vm_numastor fix fix --json --rq-affinity=2
vm_irqs > "$VM_OUT/irqs-fix.txt"
rid_disks fix
vm_save_journal journal-fix.json

# the reload, in another order: every controller held back (driver_override "none") while the
# driver loads again, then bound one at a time, each live before the next, starting with the
# one that was nvme1 and ending with the one that was nvme0 (c1 c2 c3 c0): each takes the
# next name (c1 becomes nvme0, ..., c0 nvme3, so every name changes), and c1, bound alone
# first, takes the lowest IRQ numbers just freed, c0's: its nvme0q0 gets c0's nvme0q0 number.
byname=$(for bdf in $(rid_nvme_pcis); do echo "$(ctl_num "$bdf") $bdf"; done | sort -n | cut -d' ' -f2)
held=$(echo "$byname" | head -n 1)
order="$(echo "$byname" | tail -n +2 | tr '\n' ' ')$held"
vm_fact reload_held "${held:-none}"
vm_fact reload_order "$order"
rmmod nvme
for bdf in $order; do echo none > "/sys/bus/pci/devices/$bdf/driver_override"; done
insmod /vm/prefix-nvme/nvme.ko
bind_in_order "$order"
vm_wait_disks 60
rid_pci_state reloaded
while IFS="$(printf '\t')" read -r bdf drv _ n act _; do
	case $drv:$act in nvme:nvme*q0) echo 3 > "/proc/irq/$n/smp_affinity_list" ;; esac
done < "$VM_OUT/pci-reloaded.txt"
# and the new disks' rq_affinity set by hand
for d in $(vm_disks); do
	case $d in nvme*) echo 0 > "/sys/block/$d/queue/rq_affinity" ;; esac
done
rid_pci_state prerevert
rid_disks prerevert
vm_irqs > "$VM_OUT/irqs-prerevert.txt"
vm_numastor revert fix --revert --json
vm_irqs > "$VM_OUT/irqs-reverted.txt"
rid_pci_state reverted
rid_disks reverted
vm_save_journal journal-reverted.json
vm_numastor revert2 fix --revert
vm_fire_disks
vm_check_round
