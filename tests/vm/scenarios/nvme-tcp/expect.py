"""nvme-tcp: an NVMe/TCP namespace whose transport a node-1 NIC carries.

The guest's nvmet exports a file as namespace 1 of nqn.2026-12.numastor:tcp on a TCP port
that listens only in the network namespace "tgt", on the target's virtio-net NIC (root bus
pcie.0, moved there); the guest's NVMe/TCP host connects from the initial namespace, whose
only route to the target is the host's virtio-net NIC behind the node-1 expander. The two
NICs are ports of one qemu hub. It holds:

- the test bed, from the guest's own readings: the controller's sysfs transport "tcp" and
  address (traddr 10.17.0.1, trsvcid 4420), the listener in "tgt" only (/proc/net/tcp of each
  namespace), the route to the target (`ip route get` and /proc/net/route agree) through the
  host NIC, that NIC's PCI function (its device link resolved up to the BDF) on node 1 behind
  the expander, the target NIC out of the initial namespace, and the bytes of a 32 MiB
  O_DIRECT read of the namespace crossing both NICs (host rx and target tx each grow by at
  least 32 MiB; lo by nothing);
- numastor (issue 17's contract): the disk on node 1 with node_source "fabric" and
  node_device the carrier's PCI function; one path through the controller, whose fabric
  object has transport "tcp", the address as sysfs has it, traddr/trsvcid/src_addr from it,
  carrier the route's netdev (carrier_kind "netdev", basis the route or the address's
  src_addr, which the guest found on that netdev), and pci the carrier's PCI function with its
  node 1.
"""

import re

import modswaplib as ms

MIB32 = 32 * 1024 * 1024
EXIT_CODES = {0, 1, 2}


rel = ms.devices_rel


def address_fields(address):
    out = {}
    for part in (address or "").split(","):
        key, _, value = part.partition("=")
        if key:
            out[key.strip()] = value.strip()
    return out


def check(ctx):
    f = lambda key, default=None: ms.fact(ctx, key, default)  # noqa: E731
    disk, ctrl = f("tcp.disk"), f("tcp.ctrl")
    if not ctx.expect(disk and ctrl, "test bed: no NVMe/TCP disk or controller (facts tcp.disk, tcp.ctrl)"):
        return
    host_if, host_pci, host_path = f("nic.host.name"), f("nic.host.pci"), f("nic.host.pci_path")

    # --- the test bed ------------------------------------------------------------------------
    ctx.expect(f("tcp.ctrl.transport") == "tcp", f"test bed: {ctrl}: transport {f('tcp.ctrl.transport')!r}")
    addr = address_fields(f("tcp.ctrl.address"))
    ctx.expect(addr.get("traddr") == "10.17.0.1" and addr.get("trsvcid") == "4420",
               f"test bed: {ctrl}: address {f('tcp.ctrl.address')!r}")
    ctx.expect(f("tcp.ctrl.state") == "live", f"test bed: {ctrl}: state {f('tcp.ctrl.state')!r}")
    ctx.expect(f("listen.tgt_ns") == "1" and f("listen.init_ns") == "0",
               f"test bed: nvmet-tcp's listener: {f('listen.tgt_ns')} in the target namespace, "
               f"{f('listen.init_ns')} in the initial one (expected 1 and 0)")
    ctx.expect(f("nic.target.in_init_ns") == "0", "test bed: the target's NIC is still in the initial namespace")
    ctx.expect(f("route.ip_get") == host_if and f("route.proc") == host_if,
               f"test bed: the route to the target: ip route get {f('route.ip_get')!r}, /proc/net/route "
               f"{f('route.proc')!r}, expected the node-1 NIC {host_if!r}")
    ctx.expect(f("nic.host.numa_node") == "1", f"test bed: {host_if} ({host_pci}): numa_node {f('nic.host.numa_node')!r}, not 1")
    ctx.expect(host_pci and not host_pci.startswith("0000:00:"),
               f"test bed: {host_if}'s function {host_pci} is on the root bus, not behind the expander")
    ctx.expect(f("nic.target.pci", "").startswith("0000:00:"),
               f"test bed: the target's NIC {f('nic.target.pci')} is not on the root bus pcie.0")
    try:
        delta = {f"{side}.{c}": int(f(f"bytes.after.{side}.{c}")) - int(f(f"bytes.before.{side}.{c}"))
                 for side in ("host", "target", "lo") for c in ("rx_bytes", "tx_bytes")}
    except (TypeError, ValueError):
        ctx.fail("test bed: no byte counters around the read (bytes.* facts)")
    else:
        ctx.expect(delta["host.rx_bytes"] >= MIB32 and delta["target.tx_bytes"] >= MIB32,
                   f"test bed: the 32 MiB read moved {delta['host.rx_bytes']} bytes into {host_if} and "
                   f"{delta['target.tx_bytes']} out of the target's NIC")
        ctx.expect(delta["lo.rx_bytes"] < 1024 * 1024,
                   f"test bed: lo received {delta['lo.rx_bytes']} bytes during the read")
    t = ctx.truth.disks.get(disk, {})
    ctx.expect(t.get("subsysnqn") == "nqn.2026-12.numastor:tcp",
               f"test bed: {disk}: subsystem {t.get('subsysnqn')!r}")

    # --- numastor ----------------------------------------------------------------------------
    dev = ctx.device(disk)
    if not ctx.expect(dev is not None, f"{disk}: numastor does not report the NVMe/TCP disk"):
        return
    ctx.equal(disk, "node", dev.get("node"), int(f("nic.host.numa_node")))
    ctx.equal(disk, "node_source", dev.get("node_source"), "fabric")
    ctx.equal(disk, "node_device", rel(dev.get("node_device")), rel(host_path))
    paths = dev.get("paths") or []
    if not ctx.expect(len(paths) == 1, f"{disk}: paths: numastor lists {len(paths)}, the kernel links one ({ctrl})"):
        return
    p = paths[0]
    ctx.equal(disk, "paths[0].controller", p.get("controller"), ctrl)
    fab = p.get("fabric")
    if not ctx.expect(isinstance(fab, dict), f"{disk}: paths[0].fabric: numastor={fab!r}, expected the tcp transport"):
        fab = {}
    subject = f"{disk}: path {ctrl}"
    ctx.equal(subject, "fabric.transport", fab.get("transport"), f("tcp.ctrl.transport"))
    ctx.equal(subject, "fabric.address", fab.get("address"), f("tcp.ctrl.address"))
    ctx.equal(subject, "fabric.traddr", fab.get("traddr"), addr.get("traddr"))
    ctx.equal(subject, "fabric.trsvcid", fab.get("trsvcid"), addr.get("trsvcid"))
    ctx.equal(subject, "fabric.src_addr", fab.get("src_addr"), addr.get("src_addr"))
    ctx.equal(subject, "fabric.host_iface", fab.get("host_iface"), addr.get("host_iface"))
    ctx.equal(subject, "fabric.carrier", fab.get("carrier"), f("route.ip_get"))
    ctx.equal(subject, "fabric.carrier_kind", fab.get("carrier_kind"), "netdev")
    basis = fab.get("carrier_basis")
    if basis == "src_addr":
        # the guest gave the node-1 NIC that address, and the controller's src_addr is it
        ctx.equal(subject, "fabric.carrier_basis src_addr (the address the guest put on the carrier)",
                  addr.get("src_addr"), f("nic.host.addr"))
    elif basis != "route":
        ctx.mismatch(subject, "fabric.carrier_basis", basis, "route (or src_addr, the carrier's address)")
    ctx.equal(subject, "fabric.reason", fab.get("reason"), None)
    pci = p.get("pci") or {}
    ctx.equal(subject, "pci.address", pci.get("address"), host_pci)
    ctx.equal(subject, "pci.numa_node", pci.get("numa_node"), int(f("nic.host.numa_node")))
    ctx.expect(not re.match(r"0000:00:", pci.get("address") or ""),
               f"{subject}: pci.address {pci.get('address')!r} is the target's root-bus NIC, not the carrier")
