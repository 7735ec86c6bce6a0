# numastor fix --modules keeps the stock nvme's parameters. One parameter per source:
#   - kernel command line (cmdline): nvme.use_threaded_interrupts=1, a parameter with
#     permission 0 (no sysfs file): only /proc/cmdline knows it; every nvme vector then has
#     an irq/N-nvmeXqY kernel thread;
#   - /etc/modprobe.d/numastor-params.conf: io_queue_depth=256 (the disks' nr_requests read
#     255 instead of 1023), and bogus_param=1, which no nvme has: the kernel ignores it with
#     "unknown parameter" and numastor must not pass it;
#   - written at runtime: sgl_threshold 65536 (the default is 32768): only sysfs knows it.
# The stock nvme is loaded by name with busybox modprobe, which applies modprobe.d and the
# command line's nvme.* options as kmod's modprobe does (an insmod would see neither). Then fix --modules with the patched nvme.ko of the module
# directory, and --revert; last an `install nvme` line in modprobe.d, which fix --modules
# refuses. Ground truth read by the guest's shell around each step.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
mkdir -p /etc/modprobe.d
echo "options nvme io_queue_depth=256 bogus_param=1" > /etc/modprobe.d/numastor-params.conf
modprobe nvme
modprobe -a sd_mod megaraid_sas virtio_pci virtio_blk virtio_scsi
vm_wait_disks 60
echo 65536 > /sys/module/nvme/parameters/sgl_threshold

# What the loaded nvme runs with: its sysfs parameters, the disks' queue depth, the
# threaded vectors, the kernel's complaints about the unknown parameter.
params_state() { # step
	local _p _d _n
	for _p in io_queue_depth sgl_threshold write_queues poll_queues max_host_mem_size_mb use_cmb_sqes noacpi; do
		_v=absent
		[ -e "/sys/module/nvme/parameters/$_p" ] && _v=$(cat "/sys/module/nvme/parameters/$_p")
		vm_fact "param.$_p.$1" "$_v"
	done
	for _d in NSROOT0001 NSPXB0001; do
		vm_disk_by_serial "$_d"
		_n=$_v
		_v=no-disk
		[ -n "$_n" ] && _v=$(cat "/sys/block/$_n/queue/nr_requests")
		vm_fact "nr_requests.$_d.$1" "$_v"
	done
	_n=0
	for _p in /proc/[0-9]*/comm; do
		case $(cat "$_p" 2>/dev/null) in irq/*-nvme*) _n=$((_n + 1)) ;; esac
	done
	vm_fact "threaded_vectors.$1" "$_n"
	vm_fact "nvme_vectors.$1" "$(grep -c nvme /proc/interrupts)"
	vm_fact "unknown_param.$1" "$(dmesg | grep -c "unknown parameter 'bogus_param' ignored")"
}

vm_disk_by_serial NSROOT0001
vm_disk_pci "$_v"
pci=$_v
vm_fact stock.nvme.srcversion "$(modinfo -F srcversion nvme)"
vm_fact patched.nvme.srcversion "$(modinfo -F srcversion /vm/kmod/prefix-modules/nvme.ko)"
vm_pattern_write NSROOT0001
vm_pattern_write NSMPATH0001
vm_swap_state boot nvme "$pci"
params_state boot
vm_module_dir /vm/kmod/prefix-modules/manifest.json /vm/kmod/prefix-modules/nvme.ko
vm_numastor plan fix --modules --dry-run --json
vm_numastor plantext fix --modules --dry-run
vm_swap_state planned nvme "$pci"
vm_numastor swap fix --modules
vm_swap_state swapped nvme "$pci"
params_state swapped
vm_pattern_read NSROOT0001 swapped
vm_pattern_read NSMPATH0001 swapped
vm_numastor revert fix --revert
vm_swap_state reverted nvme "$pci"
params_state reverted
vm_pattern_read NSROOT0001 reverted
vm_pattern_read NSMPATH0001 reverted

# An install command for nvme in modprobe.d: refused before anything is touched.
echo "install nvme /sbin/modprobe --ignore-install nvme" >> /etc/modprobe.d/numastor-params.conf
vm_numastor refused fix --modules
vm_swap_state refused nvme "$pci"
vm_check_round
