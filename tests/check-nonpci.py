#!/usr/bin/env python3
"""Disks that are not (only) PCI (issue 17): each fixture machine of gen-fixtures.py that models
one is generated, `numastor check --json` runs on it, and the report is held against facts read
from the fixture tree itself, never from the goldens nor from numastor's rules:

- pmem-2s: each pmem disk's node is its libnvdimm region's numa_node, node_source "nd-region",
  node_device the region's /sys path; the PCI NVMe beside them keeps node_source "pci".
- azure-storvsc-nvme: storvsc disks take the VMBus device's numa_node (node_source "vmbus",
  node_device the VMBus device); their path's vmbus object lists each channels/<relid>/cpu as
  target_cpu, with that CPU's node from the tree's node cpulists; the NVMe behind pci-hyperv is
  a PCI function with its numa_node, as usual.
- xen-blkfront, virtio-mmio-firecracker: nothing on the disk's path has a numa_node, so node is
  null, with a node_reason, no node_device, and no finding about the disk claims a node.
- nvme-tcp-2nic / nvme-tcp-1nic / nvme-rdma: each fabrics path's fabric object repeats the
  controller's transport and raw address and its parsed keys; its carrier is the netdev the tree
  names: host_iface, else the route to src_addr (IPv4: /proc/net/route; IPv6: if_inet6), else
  the route to traddr (route or ipv6_route), most explicit first; rdma: the IB device whose PCI
  function is that netdev's. The path's pci is the carrier's function (address, numa_node, its
  msi_irqs). The head: paths-disagree when the carriers sit on different nodes, else fabric
  with that node and node_device the function.
- md-raid1-2nodes / md-raid1-1node: md0's member_nodes are the nodes of its slaves (a partition
  resolved to its disk, a disk to its PCI function), member_nodes_complete true; across nodes:
  node null, node_source members-disagree and exactly one stacked-cross-node warning naming md0
  with the members and nodes; on one node: that node, node_source members, no such finding.
  Non-stacked disks carry member_nodes and member_nodes_complete null.

Every report must validate against schema/numastor.schema.json, exit with its summary's exit
code, and print nothing on stderr. A field numastor does not print yet fails as "not reported
yet: <field>"; a wrong value fails with what the report says and what the tree says.

    check-nonpci.py NUMASTOR [NAME...]
"""
import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile

import jsonschema
import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor.schema.json")))
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
# node sources that say some device gave the node
GIVING = {"pci", "forced", "set", "nd-region", "vmbus", "device", "fabric", "members"}
MISSING = object()
BDF_RE = re.compile(r"^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


class Check:
    """Collects a fixture's failed assertions; counts every assertion made."""

    def __init__(self, fixture):
        self.fixture, self.failures, self.count, self.missing = fixture, [], 0, 0

    def fail(self, where, msg, missing=False):
        self.failures.append("%s: %s" % (where, msg))
        self.missing += missing

    def ok(self, cond, where, msg):
        self.count += 1
        if not cond:
            self.fail(where, msg)
        return cond

    def eq(self, obj, key, want, where, why=""):
        """obj[key] == want; a key numastor does not print yet is reported as such."""
        self.count += 1
        got = obj.get(key, MISSING) if isinstance(obj, dict) else MISSING
        if got is MISSING:
            self.fail(where, "not reported yet: %s (the tree says %r%s)" % (key, want, "; " + why if why else ""),
                      missing=True)
            return False
        if got != want:
            self.fail(where, "%s is %r, the tree says %r%s" % (key, got, want, "; " + why if why else ""))
            return False
        return True

    def has(self, obj, key, where):
        """obj has key (for values checked by other means)."""
        self.count += 1
        if not isinstance(obj, dict) or key not in obj:
            self.fail(where, "not reported yet: %s" % key, missing=True)
            return False
        return True


# ---------------------------------------------------------------------------
# The tree, read on its own
# ---------------------------------------------------------------------------

class Tree:
    def __init__(self, root):
        self.root = root

    def p(self, rel):
        return os.path.join(self.root, rel)

    def text(self, rel):
        try:
            with open(self.p(rel)) as f:
                return f.read().strip()
        except OSError:
            return None

    def real(self, rel):
        """Root-relative real path of rel."""
        return os.path.relpath(os.path.realpath(self.p(rel)), self.root)

    def sys(self, rel):
        """The absolute /sys/... path numastor reports for a root-relative sys/... path."""
        return "/" + rel

    def ls(self, rel):
        try:
            return sorted(os.listdir(self.p(rel)))
        except OSError:
            return []

    def disk(self, name):
        return self.real("sys/block/" + name)

    def node_of_cpu(self):
        out = {}
        for n in self.ls("sys/devices/system/node"):
            m = re.match(r"node(\d+)$", n)
            if m:
                for part in (self.text("sys/devices/system/node/%s/cpulist" % n) or "").split(","):
                    if part:
                        a, _, b = part.partition("-")
                        for c in range(int(a), int(b or a) + 1):
                            out[c] = int(m.group(1))
        return out

    def ancestors(self, rel):
        """rel and each directory above it, up to sys/devices (exclusive)."""
        parts = rel.split("/")
        for i in range(len(parts), 2, -1):
            yield "/".join(parts[:i])

    def node_ancestor(self, rel):
        """The nearest ancestor with a numa_node >= 0: (dir, node), or (None, None)."""
        for d in self.ancestors(rel):
            v = self.text(d + "/numa_node")
            if v is not None and re.match(r"^-?\d+$", v) and int(v) >= 0:
                return d, int(v)
        return None, None

    def pci_function(self, rel):
        """The nearest ancestor that is a PCI function (its dir is named by its BDF): (dir, node)."""
        for d in self.ancestors(rel):
            if BDF_RE.match(os.path.basename(d)):
                return d, int(self.text(d + "/numa_node"))
        return None, None

    def numa_files(self, rel):
        return [d for d in self.ancestors(rel) if os.path.exists(self.p(d + "/numa_node"))]

    # -- routing ---------------------------------------------------------------
    def routes4(self):
        rows = []
        lines = (self.text("proc/net/route") or "").splitlines()
        for line in lines[1:]:
            f = line.split("\t")
            if len(f) < 8:
                continue
            dest = ipaddress.IPv4Address(bytes.fromhex(f[1])[::-1])
            mask = ipaddress.IPv4Address(bytes.fromhex(f[7])[::-1])
            net = ipaddress.IPv4Network("%s/%s" % (dest, mask))
            rows.append((net, int(f[6]), f[0].strip()))
        return rows

    def routes6(self):
        rows = []
        for line in (self.text("proc/net/ipv6_route") or "").splitlines():
            f = line.split()
            if len(f) != 10:
                continue
            flags = int(f[8], 16)
            if flags & 0x80000000 or flags & 0x0200 or f[9] == "lo":  # local table, reject routes
                continue
            net = ipaddress.IPv6Network((int(f[0], 16), int(f[1], 16)))
            rows.append((net, int(f[5], 16), f[9]))
        return rows

    def route_dev(self, addr):
        """The netdev the main table routes addr over (longest prefix, then lowest metric)."""
        a = ipaddress.ip_address(addr)
        rows = self.routes4() if a.version == 4 else self.routes6()
        best = sorted((r for r in rows if a in r[0]), key=lambda r: (-r[0].prefixlen, r[1]))
        return best[0][2] if best else None

    def inet6_dev(self, addr):
        a = ipaddress.IPv6Address(addr)
        for line in (self.text("proc/net/if_inet6") or "").splitlines():
            f = line.split()
            if len(f) == 6 and ipaddress.IPv6Address(int(f[0], 16)) == a:
                return f[5]
        return None

    def netdev_function(self, name):
        """The PCI function directory (root-relative) a netdev sits on."""
        d = self.real("sys/class/net/%s/device" % name)
        return d if BDF_RE.match(os.path.basename(d)) else None

    def ib_device_of(self, fn):
        for ib in self.ls("sys/class/infiniband"):
            if self.real("sys/class/infiniband/%s/device" % ib) == fn:
                return ib
        return None


def parse_address(raw):
    out = {}
    for part in raw.split(","):
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip()
    return out


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------

def dev_of(c, doc, name):
    for d in doc["devices"]:
        if d["name"] == name:
            return d
    c.ok(False, name, "missing from the report's devices")
    return None


def check_node(c, d, name, node, source, device, why=""):
    """node, node_source, node_device, node_reason of a disk whose node a device gave."""
    c.eq(d, "node", node, name, why)
    c.eq(d, "node_source", source, name, why)
    c.eq(d, "node_device", device, name, why)
    c.eq(d, "node_reason", None, name, "node is known")


def check_no_node(c, doc, d, name):
    """A disk nothing gives a node: null node with a reason, no giving source, no finding
    claiming a node for it."""
    c.eq(d, "node", None, name)
    c.ok(d.get("node_source") not in GIVING, name,
         "node_source %r claims a device gave the node; none on its path has a numa_node" % d.get("node_source"))
    c.eq(d, "node_device", None, name)
    if c.has(d, "node_reason", name):
        c.ok(isinstance(d["node_reason"], str) and d["node_reason"].strip(), name,
             "node_reason %r: a null node must say why" % d["node_reason"])
    for f in doc["findings"]:
        if f["device"] != name:
            continue
        ev = f.get("evidence") or {}
        claims = {k: v for k, v in ev.items() if k in ("node", "device_node", "numa_node") and isinstance(v, int)}
        c.ok(not claims, name, "finding %s claims a node %r" % (f["id"], claims))


def check_not_stacked(c, d, name):
    c.eq(d, "member_nodes", None, name, "not an md/dm disk")
    c.eq(d, "member_nodes_complete", None, name, "not an md/dm disk")


def pmem_2s(c, doc, tree):
    for name in ("pmem0", "pmem0.1", "pmem1s"):
        d = dev_of(c, doc, name)
        disk = tree.disk(name)
        region = next((a for a in tree.ancestors(disk) if re.match(r"region\d+$", os.path.basename(a))), None)
        if not c.ok(region, name, "tree: no nd region above %s" % disk):
            continue
        node = int(tree.text(region + "/numa_node"))
        c.ok(tree.text(region + "/target_node") == str(node), name, "tree: region target_node differs from numa_node")
        if d:
            check_node(c, d, name, node, "nd-region", tree.sys(region))
            check_not_stacked(c, d, name)
    d = dev_of(c, doc, "nvme0n1")
    fn, node = tree.pci_function(tree.disk("nvme0n1"))
    if d and c.ok(fn, "nvme0n1", "tree: no numa_node above nvme0n1"):
        check_node(c, d, "nvme0n1", node, "pci", tree.sys(fn))
        check_not_stacked(c, d, "nvme0n1")


def vmbus_device_of(tree, disk):
    return next((a for a in tree.ancestors(disk) if os.path.basename(os.path.dirname(a)) == "VMBUS:00"), None)


def azure_storvsc_nvme(c, doc, tree):
    cpu_node = tree.node_of_cpu()
    for name in ("sda", "sdb"):
        d = dev_of(c, doc, name)
        vdev = vmbus_device_of(tree, tree.disk(name))
        if not c.ok(vdev, name, "tree: no VMBus device above the disk") or not d:
            continue
        node = int(tree.text(vdev + "/numa_node"))
        check_node(c, d, name, node, "vmbus", tree.sys(vdev))
        chans = []
        for relid in sorted(tree.ls(vdev + "/channels"), key=int):
            cpu = int(tree.text("%s/channels/%s/cpu" % (vdev, relid)))
            chans.append({"id": int(relid), "target_cpu": cpu, "node": cpu_node.get(cpu)})
        c.ok(len({ch["node"] for ch in chans}) > 1, name, "tree: the channels should span both nodes")
        want = {"device_id": os.path.basename(vdev), "numa_node": node, "channels": chans,
                "channel_nodes": sorted({ch["node"] for ch in chans})}
        vb = [p.get("vmbus", MISSING) for p in d.get("paths", [])]
        if not c.ok(vb, name, "no paths"):
            continue
        if vb[0] is MISSING:
            c.fail(name, "not reported yet: paths[].vmbus (the tree says %s)" % json.dumps(want), missing=True)
            c.count += 1
            continue
        got = next((v for v in vb if v), None)
        if not c.ok(got is not None, name, "every path's vmbus is null; the disk sits on VMBus device %s" % want["device_id"]):
            continue
        for k in ("device_id", "numa_node", "channel_nodes"):
            c.eq(got, k, want[k], name + " vmbus")
        if c.has(got, "channels", name + " vmbus"):
            c.ok(sorted(got["channels"], key=lambda x: x.get("id", -1)) == chans, name + " vmbus",
                 "channels %s, the tree says %s" % (json.dumps(got["channels"]), json.dumps(chans)))
    d = dev_of(c, doc, "nvme0n1")
    fn, node = tree.pci_function(tree.disk("nvme0n1"))
    if d and c.ok(fn and os.path.basename(fn) == "c05b:00:00.0", "nvme0n1", "tree: nvme0n1 not under c05b:00:00.0"):
        # pci-hyperv assigns the function's node itself (hv_pci_assign_numa_node: the host's
        # virtual_numa_node): the node is the bus driver's statement, not a later override
        check_node(c, d, "nvme0n1", node, "pci", tree.sys(fn),
                   "pci-hyperv sets a function's node from the host's virtual_numa_node itself "
                   "(hv_pci_assign_numa_node), its root bus has none")
        paths = d.get("paths") or [{}]
        c.ok((paths[0].get("pci") or {}).get("address") == "c05b:00:00.0", "nvme0n1",
             "paths[0].pci.address %r, the tree says c05b:00:00.0" % (paths[0].get("pci") or {}).get("address"))


def no_node(names):
    def check(c, doc, tree):
        for name in names:
            disk = tree.disk(name)
            c.ok(not tree.numa_files(disk), name, "tree: numa_node on the path: %s" % tree.numa_files(disk))
            d = dev_of(c, doc, name)
            if d:
                check_no_node(c, doc, d, name)
                check_not_stacked(c, d, name)
    return check


def fabric_expect(tree, ctrl):
    """What the tree says about one fabrics controller's path: (fabric object, carrier's PCI
    function dir)."""
    cdir = "sys/devices/virtual/nvme-fabrics/ctl/" + ctrl
    raw = tree.text(cdir + "/address")
    transport = tree.text(cdir + "/transport")
    a = parse_address(raw)
    netdev = basis = None
    if transport == "fc":
        # the FC host whose port_name is host_traddr's pn-, and the PCI function above it
        pn = a["host_traddr"].split("pn-")[1]
        hosts = [h for h in tree.ls("sys/class/fc_host")
                 if (tree.text("sys/class/fc_host/%s/port_name" % h) or "").lower() == pn.lower()]
        fn = None
        if len(hosts) == 1:
            d = tree.real("sys/class/fc_host/%s/device" % hosts[0])
            while d and not BDF_RE.match(os.path.basename(d)):
                d = os.path.dirname(d)
            fn = d or None
        want = {"transport": transport, "address": raw, "traddr": a.get("traddr"), "trsvcid": a.get("trsvcid"),
                "host_traddr": a.get("host_traddr"), "src_addr": None, "host_iface": None,
                "carrier": hosts[0] if len(hosts) == 1 else hosts, "carrier_kind": "fc-host",
                "carrier_basis": "host_traddr", "reason": None}
        return want, fn, set(hosts)
    if a.get("host_iface"):
        netdev, basis = a["host_iface"], "host_iface"
    elif a.get("src_addr"):
        ip = ipaddress.ip_address(a["src_addr"])
        netdev = tree.route_dev(a["src_addr"]) if ip.version == 4 else tree.inet6_dev(a["src_addr"])
        basis = "src_addr"
    else:
        netdev = tree.route_dev(a["traddr"])
        basis = "route" if ipaddress.ip_address(a["traddr"]).version == 4 else "ipv6_route"
    # every way the tree offers must name the same netdev, or the fixture is ambiguous
    ways = {netdev, tree.route_dev(a["traddr"])}
    if a.get("src_addr") and ipaddress.ip_address(a["src_addr"]).version == 4:
        ways.add(tree.route_dev(a["src_addr"]))
    fn = tree.netdev_function(netdev) if netdev else None
    carrier, kind = netdev, "netdev"
    if transport == "rdma":
        carrier, kind = tree.ib_device_of(fn), "ib-device"
    want = {"transport": transport, "address": raw, "traddr": a.get("traddr"), "trsvcid": a.get("trsvcid"),
            "host_traddr": a.get("host_traddr"), "src_addr": a.get("src_addr"), "host_iface": a.get("host_iface"),
            "carrier": carrier, "carrier_kind": kind, "carrier_basis": basis, "reason": None}
    return want, fn, ways


def fabrics(head, disagree):
    def check(c, doc, tree):
        d = dev_of(c, doc, head)
        subsys = os.path.dirname(tree.disk(head))
        ctrls = [e for e in tree.ls(subsys) if re.match(r"nvme\d+$", e)]
        c.ok(ctrls, head, "tree: no controllers in %s" % subsys)
        expect = {}
        for ctrl in ctrls:
            want, fn, ways = fabric_expect(tree, ctrl)
            c.ok(len(ways) == 1 and fn, head, "tree: %s's carrier is ambiguous or not on a PCI function: %s" % (ctrl, ways))
            expect[ctrl] = (want, fn)
        nodes = {int(tree.text(fn + "/numa_node")) for _, fn in expect.values() if fn}
        c.ok(len(nodes) == (2 if disagree else 1), head, "tree: carriers on nodes %s" % sorted(nodes))
        if not d:
            return
        paths = {p.get("controller"): p for p in d.get("paths", [])}
        c.ok(set(paths) == set(ctrls), head, "paths' controllers %s, the tree's %s" % (sorted(paths, key=str), ctrls))
        for ctrl, (want, fn) in expect.items():
            p = paths.get(ctrl)
            if not p:
                continue
            w = "%s path %s" % (head, ctrl)
            c.eq(p, "transport", "nvme", w)
            fab = p.get("fabric", MISSING)
            if fab is MISSING:
                c.count += 1
                c.fail(w, "not reported yet: fabric (the tree says %s)" % json.dumps(want), missing=True)
            elif c.ok(isinstance(fab, dict), w, "fabric is %r; %s is a %s controller" % (fab, ctrl, want["transport"])):
                for k, v in want.items():
                    c.eq(fab, k, v, w + " fabric")
            pci = p.get("pci")
            bdf = os.path.basename(fn)
            if not c.ok(isinstance(pci, dict), w, "pci is %r; the carrier %s sits on %s" % (pci, want["carrier"], bdf)):
                continue
            c.eq(pci, "address", bdf, w + " pci")
            c.eq(pci, "numa_node", int(tree.text(fn + "/numa_node")), w + " pci")
            irqs = sorted(int(i) for i in tree.ls(fn + "/msi_irqs"))
            c.ok(sorted(i.get("irq") for i in pci.get("irqs", [])) == irqs, w + " pci",
                 "irqs %s, the carrier's msi_irqs %s" % (sorted(i.get("irq") for i in pci.get("irqs", [])), irqs))
        if disagree:
            c.eq(d, "node", None, head)
            c.eq(d, "node_source", "paths-disagree", head)
        else:
            fn = next(iter(expect.values()))[1]
            check_node(c, d, head, int(tree.text(fn + "/numa_node")), "fabric", tree.sys(fn))
        check_not_stacked(c, d, head)
    return check


def leaf_node(tree, rel):
    """A member's node: a partition resolved to its disk, then the disk's nearest numa_node."""
    if os.path.exists(tree.p(rel + "/partition")):
        rel = os.path.dirname(rel)
    return tree.pci_function(rel)[1]


def md(cross):
    def check(c, doc, tree):
        md0 = tree.disk("md0")
        c.ok(tree.text(md0 + "/md/level") == "raid1", "md0", "tree: md/level is not raid1")
        members = {}
        for s in tree.ls(md0 + "/slaves"):
            rel = tree.real("%s/slaves/%s" % (md0, s))
            c.ok(tree.real(rel + "/holders/md0") == md0, "md0", "tree: %s has no holders/md0" % s)
            members[s] = leaf_node(tree, rel)
        nodes = sorted({n for n in members.values() if n is not None})
        c.ok(len(nodes) == (2 if cross else 1) and None not in members.values(), "md0",
             "tree: member nodes %s" % members)
        d = dev_of(c, doc, "md0")
        if d:
            c.eq(d, "member_nodes", nodes, "md0", "slaves %s" % members)
            c.eq(d, "member_nodes_complete", True, "md0")
            if cross:
                c.eq(d, "node", None, "md0")
                c.eq(d, "node_source", "members-disagree", "md0")
            else:
                c.eq(d, "node", nodes[0], "md0")
                c.eq(d, "node_source", "members", "md0")
            if not cross:
                c.eq(d, "node_reason", None, "md0", "node is known")
            elif c.has(d, "node_reason", "md0"):
                c.ok(isinstance(d["node_reason"], str) and d["node_reason"].strip(), "md0",
                     "node_reason %r: a null node must say why" % d["node_reason"])
        scn = [f for f in doc["findings"] if f["id"] == "stacked-cross-node"]
        if not cross:
            c.ok(not scn, "md0", "stacked-cross-node on a machine whose md0 members all sit on node %s: %s" % (
                nodes, [f["device"] for f in scn]))
            return
        if not c.ok(len(scn) == 1, "md0", "%d stacked-cross-node findings (want exactly one, naming md0; members %s)" % (
                len(scn), members)):
            return
        f = scn[0]
        c.ok(f["device"] == "md0", "md0", "stacked-cross-node names %r" % f["device"])
        c.ok(f["severity"] == "warning", "md0", "stacked-cross-node severity %r" % f["severity"])
        ev = f.get("evidence") or {}
        c.eq(ev, "nodes", nodes, "md0 finding evidence")
        if c.has(ev, "members", "md0 finding evidence"):
            disk_of = {s: (os.path.basename(os.path.dirname(tree.real("%s/slaves/%s" % (md0, s))))
                           if os.path.exists(tree.p("%s/slaves/%s/partition" % (md0, s))) else s) for s in members}
            got = {}
            for mem in ev["members"]:
                got[mem.get("name")] = mem.get("node")
            want_any = [{s: members[s] for s in members}, {disk_of[s]: members[s] for s in members}]
            c.ok(got in want_any, "md0 finding evidence", "members %s, the tree says %s (a partition may be named by "
                 "itself or by its disk)" % (got, want_any[0]))
        for name in ("nvme0n1",):
            dd = dev_of(c, doc, name)
            if dd:
                check_not_stacked(c, dd, name)
    return check


FACTS = {
    "pmem-2s": pmem_2s,
    "azure-storvsc-nvme": azure_storvsc_nvme,
    "xen-blkfront": no_node(["xvda", "xvdb"]),
    "virtio-mmio-firecracker": no_node(["vda"]),
    "nvme-tcp-2nic": fabrics("nvme1n1", disagree=True),
    "nvme-tcp-1nic": fabrics("nvme1n1", disagree=False),
    "nvme-rdma": fabrics("nvme1n1", disagree=False),
    "nvme-fc": fabrics("nvme1n1", disagree=False),
    "md-raid1-2nodes": md(cross=True),
    "md-raid1-1node": md(cross=False),
}


def run(numastor, root):
    env = dict(os.environ, NO_COLOR="1", NUMASTOR_TEST_NOW="1767225600")
    p = subprocess.run([numastor, "check", "--sysroot", root, "--json"], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def main():
    numastor = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(FACTS)
    for n in names:
        if n not in FACTS:
            print("unknown fixture %s (one of: %s)" % (n, ", ".join(FACTS)))
            return 2
    passed = failed = asserted = missing = wrong = 0
    with tempfile.TemporaryDirectory(prefix="numastor-nonpci.", dir=SCRATCH) as tmp:
        subprocess.run([sys.executable, GEN, tmp, *names], check=True)
        for name in names:
            root = os.path.join(tmp, name)
            c = Check(name)
            code, out, err = run(numastor, root)
            c.ok(not err.strip(), "stderr", err.strip()[:500])
            c.ok(code in (0, 1, 2), "exit", "numastor check exited %d" % code)
            try:
                doc = json.loads(out)
            except json.JSONDecodeError as e:
                c.fail("json", "not JSON: %s: %r" % (e, out[:300]))
                doc = None
            if doc is not None:
                try:
                    schemas.validate(doc, SCHEMA)
                except jsonschema.ValidationError as e:
                    c.fail("schema", "%s at %s" % (e.message[:300], "/".join(str(x) for x in e.absolute_path)))
                c.ok(doc.get("summary", {}).get("exit_code") == code, "exit",
                     "summary.exit_code %r, the process exited %d" % (doc.get("summary", {}).get("exit_code"), code))
                try:
                    FACTS[name](c, doc, Tree(root))
                except (KeyError, TypeError, ValueError, AttributeError) as e:
                    c.fail("check", "%s: %s (the report is not shaped as the contract says)" % (type(e).__name__, e))
            ok = not c.failures
            print(("PASS " if ok else "FAIL ") + name + "  (%d assertions, %d failed, %d of them fields not reported yet)"
                  % (c.count, len(c.failures), c.missing))
            for f in c.failures:
                print("  " + name + " " + f)
            passed += ok
            failed += not ok
            asserted += c.count
            missing += c.missing
            wrong += len(c.failures) - c.missing
    print("nonpci: %d passed, %d failed; %d assertions, %d fields not reported yet, %d other failures"
          % (passed, failed, asserted, missing, wrong))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
