"""modswap-scsi-host: `numastor fix --modules` with the whole scsi-numa-local-alloc build, the
HBA drivers that allocate their SCSI host with scsi_host_alloc_node() on their PCI function's
node (megaraid_sas where the kernel has it, libata for the ahci controllers), and where the
hosts land, measured.

Booted with isolcpus=2-3: node 1 has no housekeeping CPU, so the PCI core runs the node-1 HBAs'
probes where the loading task runs (node 0). Ground truth comes from the kernel: megasas's host
(above the slab's sizes) from the mm_page_alloc trace event under megasas_probe_one, its pfn's
memory block giving the node; the ahci ports' hosts from slub alloc_traces, the line whose stack
holds ata_scsi_add_hosts. It holds numastor to:

- the test bed: the node-1 HBAs read numa_node 1; the build's scsi_mod, libata (and
  megaraid_sas) carry the scsi-numa-local-alloc marker; at boot the stock hosts are on node 0;
- `check --json` before: no node-1 disk's allocations.host_alloc_node claims node 1;
- `fix --modules` with a manifest that lacks scsi_mod: exit 3, refused, nothing changed, the
  check that names scsi_host_alloc_node failing for libata (and megaraid_sas); with a libata
  whose scsi_host_alloc_node CRC is not the patched scsi_mod's (fault-modules.py): refused too;
- `--dry-run --json`: exit 0, safe, every check ok, scsi_mod loaded first and every module
  the build has (libata, megaraid_sas) from the module directory, after the modules it depends on;
- `fix --modules`: exit 0; scsi_mod, sd_mod, libata (and megaraid_sas) out of tree, ahci,
  libahci and virtio_scsi stock; every disk back under its name, patterns intact; the hosts
  now on node 1; `check --json`: each node-1 disk's host_alloc_node is 1;
- `fix --revert`: exit 0, every module stock, disks and patterns intact, the hosts on node 0.
"""

import fixlib
import modswaplib as ms

SERIES = "scsi-numa-local-alloc"


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    hba = f("hba.driver")
    ids = (f("node1.ids") or "").split()
    vscsi = f("vscsi.id")
    if not ctx.expect(hba and ids and vscsi, "test bed: no hba.driver / node1.ids / vscsi.id fact"):
        return
    mega = hba == "megaraid_sas"
    patched = ["scsi_mod", "sd_mod", "libata"] + (["megaraid_sas"] if mega else [])
    for i in ids:
        fixlib.kernel_equal(ctx, "test bed", f"{f(f'node1.{i}.driver')} HBA {f(f'node1.{i}.pci')} numa_node",
                            f(f"pci.{f(f'node1.{i}.pci')}.boot.numa_node"), "1")
    ctx.expect(any(f(f"node1.{i}.driver") == "ahci" for i in ids), f"test bed: no node-1 ahci disk among {ids}")
    for m in ["scsi_mod", "libata"] + (["megaraid_sas"] if mega else []):
        fixlib.kernel_equal(ctx, "test bed", f"marker of the build's {m}.ko", f(f"patched.{m}.marker"), SERIES)
    ctx.expect(f("board_ahci"), "test bed: the board's own AHCI was not found (kept from binding)")
    # stock kmallocs (no node) must not take another node's partial slab: the bed sets the ratio 0
    fixlib.kernel_equal(ctx, "test bed", "kmalloc-4k remote_node_defrag_ratio", f("slab.remote_ratio"), "0")

    hosts(ctx, "boot", "stock drivers at boot", node=False)
    before = fixlib.check_json(ctx, "before")
    if before is not None:
        for i in ids:
            name = ms.disks_by_id(ctx, "boot").get(i)
            a = (ms.device_by_disk(ctx, before, name) or {}).get("allocations") or {}
            ctx.expect("host_alloc_node" in a and a.get("host_alloc_node") != 1,
                       f"check before the swap: {name}: allocations.host_alloc_node: numastor="
                       f"{a.get('host_alloc_node', 'absent')} ground-truth=node 0 (the stock driver, probed on node 0)")

    # the patched HBA drivers need the patched scsi_mod's scsi_host_alloc_node: without it in
    # the manifest the swap refuses them before changing anything
    imports = "what it imports beyond the stock module is there when it loads (this swap, the kernel; same CRCs)"
    ctx.expect(int(f("nocore.entries") or 0) >= 2, f"test bed: the manifest without scsi_mod lists {f('nocore.entries')} modules")
    ms.refused(ctx, "nocore", checks=[(f"{m}: {imports}", r"imports scsi_host_alloc_node, which the stock " + m)
                                      for m in ["libata"] + (["megaraid_sas"] if mega else [])])
    # libata built against another scsi_mod (its scsi_host_alloc_node CRC differs): refused
    # on a kernel that versions no symbol (Debian's 7.x) the broken libata imports a symbol
    # nothing exports instead, refused by name
    fixlib.kernel_equal(ctx, "test bed", "manifest lines with the broken libata's sha256", f("badcrc.sha_set"), "1")
    if f("badcrc.form"):
        rel = ((ctx.doc or {}).get("machine") or {}).get("kernel_release") or ""
        ctx.expect("CONFIG_MODVERSIONS" in f("badcrc.form") and rel.split(".")[0].isdigit()
                   and int(rel.split(".")[0]) >= 7,
                   f"test bed: no symbol versions on {rel!r}: {f('badcrc.form')!r}")
        ms.refused(ctx, "badcrc", checks=[(f"libata: {imports}", r"imports scsi_host_alloc_nodX, which the stock "
                                           r"libata does not, no module this swap loads exports")])
    else:
        ms.refused(ctx, "badcrc", checks=[(f"libata: {imports}", r"imports scsi_host_alloc_node with CRC 0x[0-9a-f]+, "
                                           r"and .*scsi_mod\.ko exports it with 0x[0-9a-f]+: they were not built together")])

    plan = ms.swap_plan(ctx, "plan")
    if plan is not None:
        ctx.equal("plan", "safe", plan["safe"], True)
        ctx.equal("plan", "groups", plan["groups"], ["scsi"])
        ctx.equal("plan", "failed checks", ms.failed_checks(plan), [])
        inserts = [(m, fl) for s, m, fl in ms.steps(plan) if s == "insert"]
        loaded = [m for m, _ in inserts]
        ctx.expect(loaded and loaded[0] == "scsi_mod", f"plan: scsi_mod is not loaded first: {loaded}")
        ctx.expect("libata" in loaded and "ahci" in loaded and loaded.index("libata") < loaded.index("ahci"),
                   f"plan: libata is not loaded before ahci: {loaded}")
        for m, fl in inserts:
            if m in patched:
                ctx.expect(fl and fl.endswith(f"/{m}.ko") and "/var/lib/numastor/modules/" in fl,
                           f"plan: load {m}: file {fl!r} is not the module directory's")
            else:
                ctx.expect(fl and "/kernel/drivers/" in fl, f"plan: load {m}: file {fl!r} is not the in-tree module")

    ms.swap_text(ctx, "swap")
    for m in patched:
        ms.module_out_of_tree(ctx, m, "swapped")
    for m in ("ahci", "libahci", "virtio_scsi"):
        ms.module_stock(ctx, m, "swapped")
    ms.disks_back(ctx, "after the swap", "boot", "swapped", same_names=True)
    for i in ids + [vscsi]:
        ms.pattern_intact(ctx, i, ["swapped"])
    hosts(ctx, "swapped", "patched drivers after the swap", node=True)
    doc = fixlib.check_json(ctx, "swapped")
    if doc is not None:
        for i in ids:
            name = ms.disks_by_id(ctx, "swapped").get(i)
            a = (ms.device_by_disk(ctx, doc, name) or {}).get("allocations") or {}
            ctx.equal(f"check after the swap: {name}", "allocations.host_alloc_node", a.get("host_alloc_node"), 1)

    ms.swap_text(ctx, "revert")
    for m in patched + ["ahci", "libahci", "virtio_scsi"]:
        ms.module_stock(ctx, m, "reverted")
    ms.disks_back(ctx, "after --revert", "boot", "reverted", same_names=True)
    for i in ids + [vscsi]:
        ms.pattern_intact(ctx, i, ["reverted"])
    hosts(ctx, "reverted", "stock drivers again after --revert", node=False)


def hosts(ctx, step, what, node):
    """The measured hosts: on node 1 (node=True) or on node 0, allocated on node-0 CPUs."""
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    want = "1" if node else "0"
    if f("hba.driver") == "megaraid_sas":
        got = f(f"host.megasas.{step}") or "none"
        parts = dict(p.split("=", 1) for p in got.split() if "=" in p)
        fixlib.kernel_equal(ctx, f"{what}: megasas host (mm_page_alloc under megasas_probe_one)", "node",
                            parts.get("node", got), want)
        ctx.expect(parts.get("cpu") in ("0", "1"),
                   f"{what}: megasas host: allocating CPU {parts.get('cpu')!r}: the probe did not run on node 0 "
                   "(isolcpus=2-3 should leave node 1 no CPU to probe on)")
    listing = ms.facts(ctx).get("slab.listing", "")
    got = f(f"alloc.ahci.{step}") or "none"
    if listing.endswith("/alloc_calls"):
        note = "the ahci hosts' node (5.10's alloc_calls lists them by call site, merged with virtio_scsi's)"
        if note not in ctx.inferred:
            ctx.inferred.append(note)
        return
    nodes = got.split("nodes=")[-1].split()[0] if "nodes=" in got else got
    fixlib.kernel_equal(ctx, f"{what}: ahci hosts (alloc_traces under ata_scsi_add_hosts)", "nodes", nodes, want)
