# NVMe over TCP, carried by a NIC on node 1: nvmet (the kernel's target) exports a 64 MiB file
# as namespace 1 of subsystem $TCP_NQN on a TCP port, and the guest's own NVMe/TCP host
# connects to it (options written to /dev/nvme-fabrics, as nvme-cli does). Two virtio-net NICs
# joined by a qemu hub (qemu-args): the target's on the root bus pcie.0, moved into the network
# namespace "tgt" (10.17.0.1), the host's behind the node-1 expander in the initial namespace
# (10.17.0.2). nvmet-tcp creates its listening socket in the namespace of the process that
# enables the port (6.1 drivers/nvme/target/tcp.c nvmet_tcp_add_port: sock_create, i.e. the
# writer's current->nsproxy->net_ns; the enable is the configfs link of the subsystem into
# ports/1/subsystems/), so that link is made from inside "tgt" (nsenter): the listener is
# there only, and the host reaches it out of its node-1 NIC, through the hub, into the
# target's NIC. Ground truth, by the guest's own means: the controller's sysfs transport and
# address, the route to the target (`ip route get` and /proc/net/route), that netdev's PCI
# function (its device link resolved up to the BDF) and numa_node, the listener's namespace
# (/proc/net/tcp in each), and the NICs' byte counters around a 32 MiB O_DIRECT read of the
# namespace. Then the usual check round.
# shellcheck disable=SC2154 # _v and _pcidev are what guest/lib.sh's helpers return
TCP_NQN=nqn.2026-12.numastor:tcp
TGT_MAC=52:54:00:17:00:10
HOST_MAC=52:54:00:17:01:11
TGT_ADDR=10.17.0.1
HOST_ADDR=10.17.0.2
TGT_NS=/run/netns/tgt
CFG=/sys/kernel/config/nvmet
# iproute2's (busybox sh runs its own applet for a bare `ip`, which knows no namespaces)
IP=/sbin/ip

vm_load_storage
vm_wait_disks 60
modprobe virtio_net

# The netdev whose MAC is $1 into $_v (empty when none), in this namespace.
nic_by_mac() {
	local _n _want="$1"
	for _n in /sys/class/net/*; do
		_rd "$_n/address"
		if [ "$_v" = "$_want" ]; then
			_v=${_n##*/}
			return 0
		fi
	done
	_v=
}
# A netdev's PCI function (its device link resolved up to the function) as facts PREFIX.*.
nic_facts() { # prefix netdev
	_resolve "/sys/class/net/$2/device"
	vm_fact "$1.device" "$_v"
	_pci_walk "$_v" || { vm_fact "$1.pci" none; return 0; }
	vm_fact "$1.pci" "${_pcidev##*/}"
	vm_fact "$1.pci_path" "$_pcidev"
	_rd "$_pcidev/numa_node"
	vm_fact "$1.numa_node" "$_v"
}
n=0
while { nic_by_mac "$TGT_MAC"; [ -z "$_v" ]; } || { nic_by_mac "$HOST_MAC"; [ -z "$_v" ]; }; do
	[ "$n" -lt 100 ] || { echo "test bed: the two virtio-net NICs did not appear" >&2; exit 1; }
	sleep 0.1
	n=$((n + 1))
done
nic_by_mac "$TGT_MAC"
tgt_if=$_v
nic_by_mac "$HOST_MAC"
host_if=$_v
vm_fact nic.host.name "$host_if"
vm_fact nic.target.name "$tgt_if"
nic_facts nic.host "$host_if"
nic_facts nic.target "$tgt_if"

# The target's NIC into its own namespace; each side its address.
$IP netns add tgt
$IP link set dev "$tgt_if" netns tgt
$IP -n tgt link set dev lo up
$IP -n tgt addr add "$TGT_ADDR/24" dev "$tgt_if"
$IP -n tgt link set dev "$tgt_if" up
$IP link set dev lo up
$IP addr add "$HOST_ADDR/24" dev "$host_if"
$IP link set dev "$host_if" up
vm_fact nic.target.in_init_ns "$([ -e "/sys/class/net/$tgt_if" ] && echo 1 || echo 0)"

# The target: a file-backed namespace (buffered: the initramfs's tmpfs takes no O_DIRECT) and
# a TCP port, enabled from inside "tgt".
modprobe nvmet
modprobe nvmet-tcp
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config
truncate -s 64M /tmp/tcp-ns.img
mkdir "$CFG/subsystems/$TCP_NQN"
echo 1 > "$CFG/subsystems/$TCP_NQN/attr_allow_any_host"
mkdir "$CFG/subsystems/$TCP_NQN/namespaces/1"
echo /tmp/tcp-ns.img > "$CFG/subsystems/$TCP_NQN/namespaces/1/device_path"
echo 1 > "$CFG/subsystems/$TCP_NQN/namespaces/1/buffered_io"
echo 1 > "$CFG/subsystems/$TCP_NQN/namespaces/1/enable"
mkdir "$CFG/ports/1"
echo tcp > "$CFG/ports/1/addr_trtype"
echo ipv4 > "$CFG/ports/1/addr_adrfam"
echo "$TGT_ADDR" > "$CFG/ports/1/addr_traddr"
echo 4420 > "$CFG/ports/1/addr_trsvcid"
nsenter --net="$TGT_NS" ln -s "$CFG/subsystems/$TCP_NQN" "$CFG/ports/1/subsystems/$TCP_NQN"
# the listener (10.17.0.1:4420 is 0100110A:1144 in /proc/net/tcp, state 0A = LISTEN), per namespace
nsenter --net="$TGT_NS" cat /proc/net/tcp > "$VM_OUT/tcp-tgt-ns.txt"
cat /proc/net/tcp > "$VM_OUT/tcp-init-ns.txt"
vm_fact listen.tgt_ns "$(grep -c ' 0100110A:1144 00000000:0000 0A ' "$VM_OUT/tcp-tgt-ns.txt" || :)"
vm_fact listen.init_ns "$(grep -c ' 0100110A:1144 00000000:0000 0A ' "$VM_OUT/tcp-init-ns.txt" || :)"

# The host: NVMe/TCP from the initial namespace.
modprobe nvme-tcp
printf 'transport=tcp,traddr=%s,trsvcid=4420,nqn=%s' "$TGT_ADDR" "$TCP_NQN" > /dev/nvme-fabrics
ctrl='' head=''
n=0
while [ -z "$head" ] && [ "$n" -lt 600 ]; do
	for c in /sys/class/nvme/nvme*; do
		_rd "$c/transport"
		[ "$_v" = tcp ] || continue
		_rd "$c/subsysnqn"
		[ "$_v" = "$TCP_NQN" ] && ctrl=${c##*/}
	done
	for d in $(vm_disks); do
		_resolve "/sys/block/$d"
		case $_v in */nvme-subsystem/*) ;; *) continue ;; esac
		_rd "${_v%/*}/subsysnqn"
		[ "$_v" = "$TCP_NQN" ] && [ -e "/sys/block/$d/size" ] && head=$d
	done
	[ -n "$head" ] || sleep 0.1
	n=$((n + 1))
done
if [ -z "$ctrl" ] || [ -z "$head" ]; then
	echo "test bed: no NVMe/TCP controller or disk appeared (ctrl '$ctrl', disk '$head')" >&2
	exit 1
fi
vm_fact tcp.ctrl "$ctrl"
vm_fact tcp.disk "$head"
for f in transport address subsysnqn state; do
	vm_fact "tcp.ctrl.$f" "$(cat "/sys/class/nvme/$ctrl/$f")"
done
_resolve "/sys/class/nvme/$ctrl"
vm_fact tcp.ctrl.syspath "$_v"

# The route to the target, twice: iproute2's answer and /proc/net/route read here (the
# longest prefix whose destination holds the target; the file's words are little-endian hex).
$IP route get "$TGT_ADDR" > "$VM_OUT/route-get.txt"
# shellcheck disable=SC2046 # split into words on purpose
set -- $(cat "$VM_OUT/route-get.txt")
while [ $# -gt 0 ] && [ "$1" != dev ]; do shift; done
vm_fact route.ip_get "${2:-}"
tgt_hex=$((0x0100110A))
best='' best_mask=-1
while read -r iface dest _gw _fl _rc _use _met mask _rest; do
	case $dest in Destination) continue ;; esac
	if [ $((tgt_hex & 0x$mask)) -eq $((0x$dest)) ] && [ $((0x$mask)) -gt "$best_mask" ]; then
		best=$iface best_mask=$((0x$mask))
	fi
done < /proc/net/route
cp /proc/net/route "$VM_OUT/proc-net-route.txt"
vm_fact route.proc "$best"
vm_fact nic.host.addr "$HOST_ADDR"

# Bytes over the NICs around a 32 MiB O_DIRECT read of the namespace: the host's node-1 NIC
# (sysfs statistics), the target's (its namespace's /proc/net/dev) and this namespace's lo.
stats() { # step
	local _f
	for _f in rx_bytes tx_bytes; do
		_rd "/sys/class/net/$host_if/statistics/$_f"
		vm_fact "bytes.$1.host.$_f" "$_v"
		_rd "/sys/class/net/lo/statistics/$_f"
		vm_fact "bytes.$1.lo.$_f" "$_v"
	done
	# /proc/net/dev: "  eth0: rxbytes rxpackets ... (8 rx fields) txbytes ..."
	nsenter --net="$TGT_NS" cat /proc/net/dev | sed -n "s/^ *$tgt_if: *//p" > /tmp/tgt-dev
	read -r _rx _r2 _r3 _r4 _r5 _r6 _r7 _r8 _tx _rest < /tmp/tgt-dev
	vm_fact "bytes.$1.target.rx_bytes" "$_rx"
	vm_fact "bytes.$1.target.tx_bytes" "$_tx"
}
stats before
dd if="/dev/$head" of=/dev/null bs=1M count=32 iflag=direct 2> "$VM_OUT/dd.err"
stats after

cat > "$VM_OUT/notes.txt" <<NOTES
nvme-tcp: the NVMe/TCP host ($ctrl, disk $head) in the initial network namespace connects to
$TGT_ADDR:4420; the route to it is $host_if (10.17.0.0/24, the only route there), the
virtio-net NIC behind the node-1 expander. nvmet-tcp listens in namespace "tgt" only (its port
enabled from there), on $tgt_if, the virtio-net NIC on the root bus pcie.0. The two NICs are
ports of one qemu hub: the bytes leave $host_if and arrive at $tgt_if (see bytes.* in facts.txt).
NOTES

vm_check_round
