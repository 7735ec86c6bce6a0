# numastor fix --modules killed after each of its steps in turn, and fix --revert after each
# kill. The machine: the pre-fix nvme (forcing the root-bus NVMe onto node 0) and the build's
# patched scsi_mod/sd_mod, so one swap holds both groups: nvme out and the stock one in, the
# forced function removed and the bus rescanned, every SCSI module out and back (with the
# patched midlayer). The stock modules run with non-default options (nvme sgl_threshold,
# scsi_mod inq_timeout), which the revert must give them again. Run K is killed
# (NUMASTOR_TEST_STOP_AFTER_STEP=K, _exit(137)) right after the K-th step that changed the
# machine; runs go on until a swap completes without being killed, which is then reverted too.
# After each run: the state (vm_swap_state), the options, the patterns, the journal.
# Then the same plan again (the pre-fix nvme reloaded, forcing the root-bus functions afresh,
# whenever a rollback rescanned one) for a signal after each step: run S raises SIGINT, SIGTERM, SIGHUP, SIGQUIT in turn
# (NUMASTOR_TEST_SIGNAL_AFTER_STEP=S:SIG) right after the S-th step; numastor must stop at the
# next step boundary and roll back by itself, never stop half-way. Runs go on until one
# completes (S beyond the last step), which is reverted. Last, a full swap whose stdout is a
# pipe its reader closes after one byte (`| head -c1`): it must complete, not die of SIGPIPE.
# And a claim between the module swap and the PCI removal: the swap paused there
# (NUMASTOR_TEST_PAUSE_BEFORE_PCI_REMOVE), the root-bus NVMe's namespace opened by a process
# meanwhile: the recheck before the removal must refuse to remove its function, and the
# rollback (which detaches only SCSI disks) must not be stopped by the NVMe disk's reader.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_need_kmod
MODULES="nvme scsi_mod sd_mod megaraid_sas virtio_scsi"
MODS=/vm/kmod/midlayer

modprobe nvme-core
insmod /vm/prefix-nvme/nvme.ko sgl_threshold=65536
modprobe scsi_mod inq_timeout=7
vm_load_storage_rest() {
	modprobe -a sd_mod megaraid_sas virtio_pci virtio_blk virtio_scsi
}
vm_load_storage_rest
vm_wait_disks 60
vm_disk_by_serial NSROOT0001
vm_disk_pci "$_v"
pci=$_v
vm_fact nvme.pci "$pci"
# every NVMe function (the subsystem's root-bus controller is forced too)
vm_nvme_pcis
pcis=$_v
vm_fact nvme.pcis "$pcis"
vm_scsi_host megaraid_sas
vm_disk_on_host "$_v"
vm_disk_id "$_v"
mega=$_v
vm_scsi_host virtio_scsi
vm_disk_on_host "$_v"
vm_disk_id "$_v"
vscsi=$_v
vm_fact ids "NSROOT0001 NSPXB0001 NSMPATH0001 $mega $vscsi"
for id in NSROOT0001 NSPXB0001 NSMPATH0001 "$mega" "$vscsi"; do
	vm_pattern_write "$id"
done

options() { # step: the options the revert must restore, as the kernel shows them
	_rd /sys/module/nvme/parameters/sgl_threshold
	vm_fact "param.nvme.sgl_threshold.$1" "${_v:-absent}"
	_rd /sys/module/scsi_mod/parameters/inq_timeout
	vm_fact "param.scsi_mod.inq_timeout.$1" "${_v:-absent}"
}
patterns() { # step
	for id in NSROOT0001 NSPXB0001 NSMPATH0001 "$mega" "$vscsi"; do
		vm_pattern_read "$id" "$1"
	done
}

vm_swap_state boot "$MODULES" "$pcis"
options boot
vm_module_dir $MODS/manifest.json $MODS/scsi_mod.ko $MODS/sd_mod.ko
vm_numastor plan fix --modules --dry-run --json

k=1
while [ "$k" -le 30 ]; do
	export NUMASTOR_TEST_STOP_AFTER_STEP=$k
	vm_numastor "kill$k" fix --modules
	unset NUMASTOR_TEST_STOP_AFTER_STEP
	_rd "$VM_OUT/kill$k.rc"
	rc=$_v
	vm_swap_state "killed$k" "$MODULES" "$pcis"
	vm_save_swap_journal "journal-killed$k.json"
	if [ "$k" = 1 ]; then
		# a second swap over a journaled one is refused, and changes nothing
		vm_numastor again fix --modules
		vm_swap_state again "$MODULES" "$pcis"
	fi
	if [ "$rc" = 0 ]; then
		# the journal of a swap made in another boot: reported, nothing swapped back
		cp /var/lib/numastor/swap.json /tmp/swap.json
		sed -i 's/"boot_id":"[^"]*"/"boot_id":"00000000-0000-0000-0000-000000000000"/' /var/lib/numastor/swap.json
		vm_numastor otherboot fix --revert
		vm_swap_state otherboot "$MODULES" "$pcis"
		cp /tmp/swap.json /var/lib/numastor/swap.json
	fi
	vm_numastor "revert$k" fix --revert
	vm_swap_state "reverted$k" "$MODULES" "$pcis"
	options "reverted$k"
	patterns "reverted$k"
	vm_save_swap_journal "journal-reverted$k.json"
	vm_fact "run.$k" "$rc"
	[ "$rc" = 137 ] || break
	k=$((k + 1))
done
vm_fact runs "$k"

# The boot's machine again: the pre-fix nvme forces the root-bus functions on its probe.
boot_again() {
	rmmod nvme
	insmod /vm/prefix-nvme/nvme.ko sgl_threshold=65536
	vm_wait_disks 60
}
# Forced again only when a rollback rescanned a function (it reads -1 then): a rollback
# before the PCI removal leaves the stock nvme on still-forced functions, the same plan.
forced_again() {
	local _p
	for _p in $pcis; do
		case $_p in 0000:00:*) ;; *) continue ;; esac
		_rd "/sys/bus/pci/devices/$_p/numa_node"
		[ "$_v" = 0 ] || {
			boot_again
			return 0
		}
	done
}
s=1
while [ "$s" -le 30 ]; do
	forced_again
	vm_swap_state "presig$s" "$MODULES" "$pcis"
	set -- INT TERM HUP QUIT
	eval "sig=\${$(((s - 1) % 4 + 1))}"
	vm_fact "sig.$s" "$sig"
	export NUMASTOR_TEST_SIGNAL_AFTER_STEP="$s:$sig"
	vm_numastor "signal$s" fix --modules --json
	unset NUMASTOR_TEST_SIGNAL_AFTER_STEP
	_rd "$VM_OUT/signal$s.rc"
	rc=$_v
	vm_swap_state "signalled$s" "$MODULES" "$pcis"
	options "signalled$s"
	patterns "signalled$s"
	vm_save_swap_journal "journal-signalled$s.json"
	if [ "$rc" = 0 ]; then
		vm_numastor "sigrevert$s" fix --revert
		vm_swap_state "sigreverted$s" "$MODULES" "$pcis"
		break
	fi
	s=$((s + 1))
done
vm_fact sigruns "$s"

# stdout a pipe closed after one byte: the swap completes (or rolls back), never dies half-way
boot_again
vm_swap_state prepipe "$MODULES" "$pcis"
{
	/usr/bin/numastor fix --modules 2> "$VM_OUT/pipe.err"
	echo $? > "$VM_OUT/pipe.rc"
} | head -c1 > "$VM_OUT/pipe.out"
vm_swap_state piped "$MODULES" "$pcis"
patterns piped
vm_save_swap_journal journal-piped.json
vm_numastor piperevert fix --revert
vm_swap_state pipereverted "$MODULES" "$pcis"
options pipereverted
patterns pipereverted

# a reader opens the root-bus NVMe's namespace while the swap waits before the PCI removal
boot_again
vm_numastor pciplan fix --modules --dry-run
nsteps=$(grep -c '^  step [0-9]*:' "$VM_OUT/pciplan.out")
vm_swap_state prepci "$MODULES" "$pcis"
NUMASTOR_TEST_PAUSE_BEFORE_PCI_REMOVE=10 /usr/bin/numastor fix --modules --json \
	> "$VM_OUT/pci.out" 2> "$VM_OUT/pci.err" &
fixpid=$!
# every module step done (the text of --json comes at the end: the modules' state says it)
left=400
until [ "$left" -le 0 ]; do
	[ -d /sys/module/scsi_mod ] && grep -q O /sys/module/scsi_mod/taint 2>/dev/null &&
		[ -d /sys/module/virtio_scsi ] && [ -d /sys/module/megaraid_sas ] && [ -d /sys/module/sd_mod ] && break
	sleep 0.1
	left=$((left - 1))
done
left=100
_v=
until [ "$left" -le 0 ]; do
	vm_disk_by_serial NSROOT0001
	[ -n "$_v" ] && [ -b "/dev/$_v" ] && break
	sleep 0.1
	left=$((left - 1))
done
vm_fact pci.reader.disk "$_v"
rdisk=$_v
_resolve "/sys/block/$rdisk"
vm_fact pci.reader.ino.open "$(stat -c %i "$_v")"
vm_fact pci.nsteps "$nsteps"
# shellcheck disable=SC2217 # holding the disk open is the point
sleep 600 < "/dev/$rdisk" &
reader=$!
vm_wait_holding "$reader" "/dev/$rdisk"
vm_fact pci.reader "$([ -e "/proc/$reader/fd/0" ] && echo open)"
rc=0
wait "$fixpid" || rc=$?
echo "$rc" > "$VM_OUT/pci.rc"
vm_swap_state pci "$MODULES" "$pcis"
vm_fact pci.reader.after "$([ -e "/proc/$reader/fd/0" ] && readlink "/proc/$reader/fd/0")"
_resolve "/sys/block/$rdisk"
vm_fact pci.reader.ino.after "$([ -n "$_v" ] && stat -c %i "$_v")"
kill "$reader"
wait "$reader" || :
vm_check_round
