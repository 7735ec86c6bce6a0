# pmem: qemu's nvdimm on node 1 (machine: nvdimm=on; qemu-args: a file-backed 256 MiB NVDIMM,
# node=1). The guest loads nfit and nd_pmem (libnvdimm's region and namespace devices, and
# pmem0 on the namespace), then records what the kernel says of it: pmem0's device path,
# the region's numa_node and target_node, the namespace's numa_node (sysfs), and the usual
# check round.
# shellcheck disable=SC2154 # _v is what guest/lib.sh's helpers return
vm_load_storage
vm_wait_disks 60
modprobe nfit
modprobe nd_pmem
n=0
while [ ! -e /sys/block/pmem0/size ] && [ "$n" -lt 300 ]; do
	sleep 0.1
	n=$((n + 1))
done
[ -e /sys/block/pmem0 ] || { echo "test bed: no pmem0 after loading nfit and nd_pmem" >&2; exit 1; }
_resolve /sys/block/pmem0
vm_fact pmem.syspath "$_v"
_resolve /sys/block/pmem0/device
ns=$_v
vm_fact pmem.namespace "$ns"
_rd "$ns/numa_node"
vm_fact pmem.namespace.numa_node "$_v"
_rd "$ns/mode"
vm_fact pmem.namespace.mode "$_v"
region=${ns%/*}
vm_fact pmem.region "$region"
for f in numa_node target_node; do
	_rd "$region/$f"
	vm_fact "pmem.region.$f" "$_v"
done
_link_base "$region/subsystem"
vm_fact pmem.region.subsystem "$_v"
_link_base "/sys/block/pmem0/device/driver"
vm_fact pmem.driver "$_v"
_rd /sys/block/pmem0/size
vm_fact pmem.size_sectors "$_v"
# the bytes are there: a write read back through the block device
echo numastor-pmem > /tmp/pmem-pattern
dd if=/tmp/pmem-pattern of=/dev/pmem0 bs=512 count=1 conv=sync 2>/dev/null
sync
vm_fact pmem.readback "$(dd if=/dev/pmem0 bs=512 count=1 2>/dev/null | tr -d '\000')"
vm_check_round
