#!/usr/bin/env python3
"""Write the seed corpora of tests/fuzz/ (corpus/NAME/): real values, and the hostile cases of
issue 11 (trailing-comma cpulists, 0-1048575, 4294967297, 0x1, journals whose "irqs" is a string,
"previous": "zz,,", "installed": ["../../../../tmp/victim"], bundles with mode-0500 directories,
node1000000, links out of the bundle ...). Deterministic; run it after adding a case and commit
what it writes. Inputs that once crashed a harness are kept beside the seeds as crash-* files
(never regenerated away: this script only writes seed-* files).

    tests/fuzz/make-seeds.py [CORPUSDIR]
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")


def write(harness, name, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


# --- cpuset: "a" or "a\0b" ------------------------------------------------------------------
CPUSETS = {
    "list-ranges": "0-15,32-47",
    "list-one": "0",
    "empty": "",
    "newline": "0-3\n",
    "blkmq": "0, 1, 2, 3, 32, 33",
    "mask-two-groups": "ff,00000001",
    "mask-64": "ffffffff,ffffffff",
    "mask-wide": "00000000,00000000,0000ffff,00000000",
    "mask-odd": "3,ffffffff",
    "trailing-comma": "0-3,",
    "double-comma": "0-3,,5",
    "reversed": "3-1",
    "open-range": "0-",
    "range-904856": "0-904856",
    "range-1048575": "0-1048575",
    "cpu-1048575": "1048575",
    "cpu-1048576": "1048576",
    "past-uint32": "4294967297",
    "hex": "0x1",
    "negative": "-1",
    "plus": "+1",
    "zz": "zz,,",
    "null-word": "(null)",
    "spaces": " 0 - 3 ",
    "many-ranges": ",".join("%d-%d" % (i * 10000, i * 10000 + 9000) for i in range(100)),
    "pair": "0-3\x002-5",
    "pair-mask": "f0\x000-3,8",
    "mask-trailing-comma": "ff,",
    "mask-empty-group": ",,",
    "mask-huge": "f" * 4096,
}

# --- numbers: byte 0 picks the function (0 dec, 1 u64, 2 hex, 3 prefix) and range --------
NUMBERS = {
    "dec-0": b"\x00" + b"0",
    "dec-node1": b"\x04" + b"1",
    "dec-minus1": b"\x04" + b"-1",
    "dec-minus0": b"\x04" + b"-0",
    "dec-4294967297": b"\x00" + b"4294967297",
    "dec-hex": b"\x00" + b"0x1",
    "dec-int64max": b"\x14" + b"9223372036854775807",
    "dec-int64max-plus1": b"\x14" + b"9223372036854775808",
    "dec-int64min": b"\x14" + b"-9223372036854775808",
    "dec-int64min-minus1": b"\x14" + b"-9223372036854775809",
    "dec-distance-2147483648": b"\x08" + b"2147483648",
    "dec-distance-minus5": b"\x08" + b"-5",
    "dec-distance-10": b"\x08" + b"10",
    "dec-distance-255": b"\x08" + b"255",
    "dec-leading-zero": b"\x00" + b"007",
    "dec-plus": b"\x00" + b"+1",
    "dec-space": b"\x00" + b" 1",
    "dec-empty": b"\x00",
    "dec-long": b"\x00" + b"9" * 400,
    "u64-max": b"\x01" + b"18446744073709551615",
    "u64-max-plus1": b"\x01" + b"18446744073709551616",
    "u64-counter": b"\x01" + b"1234567",
    "hex-0x1": b"\x02" + b"0x1",
    "hex-mask": b"\x06" + b"0000ffff",
    "hex-0x": b"\x02" + b"0x",
    "hex-ids": b"\x0a" + b"0x144d",
    "hex-over": b"\x02" + b"1" + b"0" * 16,
    "prefix-node12": b"\x03" + b"12 kB",
    "prefix-node1000000": b"\x03" + b"1000000",
    "prefix-node4294967297": b"\x03" + b"4294967297",
    "prefix-zero-lead": b"\x03" + b"01",
}

# --- journals -------------------------------------------------------------------------------
IRQ = {"pci": "0000:00:04.0", "name": "nvme0q1", "irq": 45, "previous": "0-63", "placed": "0-31",
       "counts": "12,0,3"}
RQ = {"disk": "wwid:eui.0025388b91d4a4b1", "device": "nvme0n1", "previous": 1, "placed": 2}
BOOT = "7d0bd1a0-5f0c-4e43-9c6a-6c1b0e6bb0c3"


def journal(**kw):
    doc = {"version": 2, "boot_id": BOOT, "irqs": [IRQ], "rq_affinity": [RQ]}
    for k, v in kw.items():
        if v is KeyError:
            doc.pop(k, None)
        else:
            doc[k] = v
    return json.dumps(doc, indent=2)


JOURNALS = {
    "real": journal(),
    "real-two": journal(irqs=[IRQ, dict(IRQ, name="nvme0q2", irq=46, previous="32-63", placed="32-47")]),
    "empty-lists": journal(irqs=[], rq_affinity=[]),
    "no-counts": journal(irqs=[{k: v for k, v in IRQ.items() if k != "counts"}]),
    "irqs-string": journal(irqs="nvme0q1"),
    "irqs-object": journal(irqs={"pci": "0000:00:04.0"}),
    "irqs-missing": journal(irqs=KeyError),
    "rq-string": journal(rq_affinity="x"),
    "previous-zz": journal(irqs=[dict(IRQ, previous="zz,,")]),
    "previous-trailing-comma": journal(irqs=[dict(IRQ, previous="0-3,")]),
    "placed-huge": journal(irqs=[dict(IRQ, placed="0-1048575")]),
    "previous-number": journal(irqs=[dict(IRQ, previous=5)]),
    "irq-big": journal(irqs=[dict(IRQ, irq=4294967297)]),
    "irq-negative": journal(irqs=[dict(IRQ, irq=-1)]),
    "rq-big": journal(rq_affinity=[dict(RQ, previous=4294967297)]),
    "duplicate": journal(irqs=[IRQ, dict(IRQ, previous="1")]),
    "version-1": journal(version=1),
    "version-string": journal(version="2"),
    "version-missing": journal(version=KeyError),
    "boot-number": journal(boot_id=5),
    "pci-escape": journal(irqs=[dict(IRQ, pci="../../../../tmp/victim")]),
    "name-binary": journal(irqs=[dict(IRQ, name="nvme\u001b[31m")]),
    "not-object": "[1,2,3]",
    "truncated": journal()[:40],
    "empty": "",
    "nul": "\0",
    "deep": "[" * 5000 + "]" * 5000,
}

SWAP = {
    "version": 1, "boot_id": BOOT, "kernel_release": "6.1.0-27-amd64", "runtime": True,
    "groups": ["nvme"],
    "modules": [{"name": "nvme_core", "loaded": True,
                 "stock_path": "lib/modules/6.1.0-27-amd64/kernel/drivers/nvme/host/nvme-core.ko",
                 "srcversion": "0123456789ABCDEF0123456", "options": "",
                 "replacement": "var/lib/numastor/modules/6.1.0-27-amd64/nvme-core.ko"},
                {"name": "nvme", "loaded": True,
                 "stock_path": "lib/modules/6.1.0-27-amd64/kernel/drivers/nvme/host/nvme.ko",
                 "srcversion": None, "options": "poll_queues=2", "replacement": None}],
    "removed_pci": ["0000:00:04.0"],
    "disks": [{"id": "wwid:eui.0025388b91d4a4b1", "name": "nvme0n1", "pci": "0000:00:04.0", "hba": None}],
    "installed": ["lib/modules/6.1.0-27-amd64/updates/numastor/nvme-core.ko"],
    "initramfs_updated": False,
}


def swap(**kw):
    doc = json.loads(json.dumps(SWAP))
    for k, v in kw.items():
        if v is KeyError:
            doc.pop(k, None)
        else:
            doc[k] = v
    return json.dumps(doc, indent=2)


SWAPS = {
    "real": swap(),
    "install-only": swap(runtime=False, modules=[], disks=[], removed_pci=[]),
    "installed-victim": swap(installed=["../../../../tmp/victim"]),
    "installed-absolute": swap(installed=["/tmp/victim"]),
    "installed-updates-escape": swap(installed=["lib/modules/x/updates/numastor/../../../../../tmp/victim"]),
    "installed-other-release": swap(installed=["lib/modules/5.10.0-1-amd64/updates/numastor/nvme.ko"]),
    "installed-string": swap(installed="lib/modules/x/updates/numastor/nvme.ko"),
    "stock-escape": swap(modules=[dict(SWAP["modules"][0], stock_path="../../etc/passwd")]),
    "replacement-absolute": swap(modules=[dict(SWAP["modules"][0], replacement="/tmp/evil.ko")]),
    "module-slash": swap(modules=[dict(SWAP["modules"][0], name="../nvme")]),
    "module-empty": swap(modules=[dict(SWAP["modules"][0], name="")]),
    "modules-missing": swap(modules=KeyError),
    "disks-object": swap(disks={}),
    "disk-no-name": swap(disks=[{"id": "x"}]),
    "version-2": swap(version=2),
    "loaded-string": swap(modules=[dict(SWAP["modules"][0], loaded="yes")]),
    "empty": "",
    "not-object": "\"x\"",
}

MANIFEST = {
    "kernel_release": "6.1.0-fuzz-amd64", "built": "2026-11-30T12:00:00Z",
    "modules": [{"name": "nvme_core", "file": "nvme-core.ko", "sha256": hashlib.sha256(b"x").hexdigest(),
                 "vermagic": "6.1.0-fuzz-amd64 SMP preempt mod_unload modversions ", "srcversion": None,
                 "patches": ["nvme-no-forced-node/0001-nvme-pci-no-forced-node.patch"],
                 "replaces": "kernel/drivers/nvme/host/nvme-core.ko"}],
    "already_upstream": [{"series": "scsi-numa-local-alloc", "patch": "0001.patch"}],
}


def manifest(**kw):
    doc = json.loads(json.dumps(MANIFEST))
    for k, v in kw.items():
        if v is KeyError:
            doc.pop(k, None)
        else:
            doc[k] = v
    return json.dumps(doc, indent=2)


def mod(**kw):
    return [dict(MANIFEST["modules"][0], **kw)]


MANIFESTS = {
    "real": manifest(),
    "no-modules": manifest(modules=[]),
    "file-dotdot": manifest(modules=mod(file="..")),
    "file-dot": manifest(modules=mod(file=".")),
    "file-empty": manifest(modules=mod(file="")),
    "file-path": manifest(modules=mod(file="../../../../etc/passwd")),
    "file-absolute": manifest(modules=mod(file="/etc/passwd")),
    "file-number": manifest(modules=mod(file=5)),
    "no-sha": manifest(modules=[{"name": "nvme", "file": "nvme.ko"}]),
    "patches-mixed": manifest(modules=mod(patches=["a", 5, None, {"x": 1}])),
    "upstream-strings": manifest(already_upstream=["nvme-no-forced-node"]),
    "upstream-dup": manifest(already_upstream=[{"series": "a"}, {"series": "a"}]),
    "modules-object": manifest(modules={}),
    "release-missing": manifest(kernel_release=KeyError),
    "release-binary": manifest(kernel_release="6.1\u001b[2J"),
    "empty": "",
}


# --- snapshot bundles -----------------------------------------------------------------------
def tarball(entries, compress=True):
    """entries: (name, kind, data_or_target, mode) with kind f(ile), d(ir), l(ink), h(ardlink), p(fifo),
    c(hardev); data may be an int: a header claiming that size over fewer bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, kind, data, mode in entries:
            ti = tarfile.TarInfo(name)
            ti.mode = mode
            ti.mtime = 1700000000
            payload = None
            if kind == "f":
                payload = data.encode() if isinstance(data, str) else data
                ti.size = len(payload)
            elif kind == "d":
                ti.type = tarfile.DIRTYPE
            elif kind == "l":
                ti.type = tarfile.SYMTYPE
                ti.linkname = data
            elif kind == "h":
                ti.type = tarfile.LNKTYPE
                ti.linkname = data
            elif kind == "p":
                ti.type = tarfile.FIFOTYPE
            elif kind == "c":
                ti.type = tarfile.CHRTYPE
                ti.devmajor, ti.devminor = 1, 3
            t.addfile(ti, io.BytesIO(payload) if payload is not None else None)
    raw = buf.getvalue()
    return gzip.compress(raw, mtime=0) if compress else raw


REAL = [
    (".numastor/facts", "f", "privileged=1\n", 0o644),
    ("proc/sys/kernel/osrelease", "f", "6.1.0-27-amd64\n", 0o444),
    ("sys/devices/system/node/online", "f", "0-1\n", 0o444),
    ("sys/devices/system/node/node0/cpulist", "f", "0-31\n", 0o444),
    ("sys/devices/system/node/node0/distance", "f", "10 21\n", 0o444),
    ("sys/devices/system/node/node1/cpulist", "f", "32-63\n", 0o444),
    ("sys/devices/system/node/node1/distance", "f", "21 10\n", 0o444),
    ("sys/devices/pci0000:00/0000:00:04.0/numa_node", "f", "0\n", 0o444),
    ("sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/size", "f", "7501476528\n", 0o444),
    ("sys/block/nvme0n1", "l", "../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1", 0o777),
]

BUNDLES = {
    "real": tarball(REAL),
    "real-plain-tar": tarball(REAL, compress=False),
    "dotslash": tarball([("./" + n, k, d, m) for n, k, d, m in REAL]),
    "dir-0500": tarball([("sys", "d", None, 0o500), ("sys/x", "f", "a" * 4000, 0o444)] + REAL[:3]),
    "dir-0000": tarball([("d", "d", None, 0o000), ("d/e", "d", None, 0o000), ("d/e/f", "f", "x", 0o000)]),
    "node1000000": tarball(REAL + [("sys/devices/system/node/node1000000/cpulist", "f", "0\n", 0o444)]),
    "node200000": tarball(REAL + [("sys/devices/system/node/node200000/cpulist", "f", "0\n", 0o444)]),
    "cpu-huge": tarball(REAL + [("sys/devices/system/node/node0/cpu4294967297", "l",
                                 "../../cpu/cpu0", 0o777)]),
    "cpulist-huge": tarball(REAL[:3] + [("sys/devices/system/node/node0/cpulist", "f",
                                        ",".join("0-%d" % (1048575 - i) for i in range(600)), 0o444)]),
    # many directories, extracted and removed (100k would be refused by the entries budget; 1,000
    # keeps a run well inside the 1 s timeout under the ASan build on a loaded machine)
    "many-dirs": tarball([("d%d" % i, "d", None, 0o755) for i in range(1000)]),
    "deep": tarball([("/".join(["a"] * 200), "d", None, 0o755)]),
    "long-name": tarball([("x" * 4000, "f", "x", 0o644)]),
    "dotdot": tarball([("../escape", "f", "x", 0o644)]),
    "dotdot-inner": tarball([("sys/../../escape", "f", "x", 0o644)]),
    "absolute": tarball([("/tmp/escape", "f", "x", 0o644)]),
    "link-out": tarball([("sys/block/x", "l", "../../../../etc/passwd", 0o777)]),
    "link-absolute": tarball([("sys/x", "l", "/etc/passwd", 0o777)]),
    "link-then-file": tarball([("sys", "l", "/tmp", 0o777), ("sys/escape", "f", "x", 0o644)]),
    "link-loop": tarball([("a", "l", "b", 0o777), ("b", "l", "a", 0o777)]),
    "hardlink": tarball([("a", "f", "x", 0o644), ("b", "h", "a", 0o644)]),
    "fifo": tarball([("sys/fifo", "p", None, 0o644)]),
    "chardev": tarball([("dev/null", "c", None, 0o666)]),
    "setuid": tarball([("bin/sh", "f", "x", 0o4755)]),
    "duplicate": tarball([("a", "f", "x", 0o644), ("a", "f", "y", 0o644)]),
    "dir-then-file": tarball([("a", "d", None, 0o755), ("a", "f", "y", 0o644)]),
    "empty-tar": tarball([]),
    "not-gzip": b"this is not a bundle\n",
    "truncated": tarball(REAL)[:200],
    "empty": b"",
}
# a header that claims more bytes than follow
_t = bytearray(tarball([("big", "f", "x" * 1024, 0o644)], compress=False))
BUNDLES["short-body"] = bytes(_t[:512 + 100])


# --- model: kind byte, selector length, selector, content -----------------------------------
def model(sel, content, link=False):
    sel = sel.encode()
    content = content.encode() if isinstance(content, str) else content
    return bytes([1 if link else 0, len(sel)]) + sel + content


PCI = "0000:00:04.0"
MODEL = {
    "pci-node-real": model(PCI + "/numa_node", "0\n"),
    "pci-node-4294967297": model(PCI + "/numa_node", "4294967297\n"),
    "pci-node-hex": model(PCI + "/numa_node", "0x1\n"),
    "pci-node-int64max": model(PCI + "/numa_node", "9223372036854775807\n"),
    "pci-node-minus5": model(PCI + "/numa_node", "-5\n"),
    "pci-node-1024": model(PCI + "/numa_node", "1024\n"),
    "irq-node-huge": model("proc/irq/62/node", "4294967297\n"),
    "irq-node-hex": model("proc/irq/62/node", "0x1\n"),
    "distance-int-max": model("node0/distance", "10 2147483648\n"),
    "distance-uint32": model("node0/distance", "10 4294967297\n"),
    "distance-negative": model("node0/distance", "10 -5\n"),
    "distance-short": model("node0/distance", "10\n"),
    "nr-tags-hex": model("nvme0n1/mq/0/nr_tags", "0x1\n"),
    "nr-requests-hex": model("nvme0n1/queue/nr_requests", "0x1\n"),
    "hidden-hex": model("nvme0n1/hidden", "0x1\n"),
    "size-overflow": model("nvme0n1/size", "9223372036854775807\n"),
    "size-negative": model("nvme0n1/size", "-1\n"),
    "dev-escape": model("nvme0n1/dev", "259:0\x1b[31m\n"),
    "dev-binary": model("nvme0n1/dev", b"\xff\xfe259:0\n"),
    "cpulist-trailing-comma": model("node1/cpulist", "32-63,\n"),
    "cpulist-garbled": model("node1/cpulist", "zz\n"),
    "cpulist-huge": model("node1/cpulist", "0-1048575\n"),
    "online-huge": model("system/node/online", "0-1048575\n"),
    "cpu-online-trailing": model("system/cpu/online", "0-63,\n"),
    "isolated-garbled": model("system/cpu/isolated", "0-3,,\n"),
    "nohz-null": model("system/cpu/nohz_full", "(null)\n"),
    "kernel-max-huge": model("system/cpu/kernel_max", "4294967297\n"),
    "meminfo-overflow": model("node0/meminfo", "Node 0 MemTotal:       9223372036854775807 kB\n"),
    "per-cpu-count-garbled": model("irq/62/per_cpu_count", "1,2,zz\n"),
    "per-cpu-count-huge": model("irq/62/per_cpu_count", "18446744073709551616," * 64 + "\n"),
    "smp-affinity-garbled": model("proc/irq/62/smp_affinity", "fg\n"),
    "smp-affinity-list-trailing": model("proc/irq/62/smp_affinity_list", "0-3,\n"),
    "actions-escape": model("irq/62/actions", "nvme0q0\x1b]0;pwned\x07\n"),
    "actions-invalid-utf8": model("irq/62/actions", b"nvme\xc3\x28q0\n"),
    "osrelease-binary": model("kernel/osrelease", b"6.1\x00\x01\x02\n"),
    "irqbalance-banned": model("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=0-3,\n"),
    "local-cpulist-huge": model(PCI + "/local_cpulist", "0-1048575\n"),
    "wwid-binary": model("nvme0n1/wwid", b"eui.\x80\x81\x82\n"),
    "empty-node": model(PCI + "/numa_node", ""),
    "huge-file": model(PCI + "/numa_node", "0" * 70000),
    "link-loop": model("sys/block/nvme0n1", "nvme0n1", link=True),
    "link-self-dir": model("sys/block/nvme1n1", ".", link=True),
    "link-escape": model("sys/block/nvme0n1", "../../../../../../../../etc", link=True),
    "link-absolute": model("sys/block/nvme0n1", "/etc", link=True),
    "driver-link-escape": model(PCI + "/driver", "../../../../../../../../../../tmp", link=True),
    "file-to-link-loop": model(PCI + "/numa_node", "numa_node", link=True),
    "unknown-selector": model("\x00\x01\x02", "1\n"),
}


# --- envfile: byte 0 = 0 an options file, 1 a daemon's environ (NUL-separated); then the text --
DEBIAN_DEFAULT = ("# irqbalance is a daemon process that distributes interrupts across\n"
                  "# EnvironmentFile key in the service unit file (or via whatever method the init\n#\n"
                  "#IRQBALANCE_ONESHOT=\n#IRQBALANCE_BANNED_CPULIST=\n#IRQBALANCE_ARGS=\n")
L, M = "IRQBALANCE_BANNED_CPULIST", "IRQBALANCE_BANNED_CPUS"


def envfile(text):
    return b"\x00" + (text.encode() if isinstance(text, str) else text)


def environ(*entries):
    return b"\x01" + b"".join(e.encode() + b"\x00" for e in entries)


ENVFILES = {
    # issue 28's forms
    "debian-default": envfile(DEBIAN_DEFAULT),
    "plain": envfile(DEBIAN_DEFAULT + L + "=0-3\n"),
    "blank-after-eq": envfile(L + "= 0-3\n"),
    "blank-before-eq": envfile(L + " =0-3\n"),
    "export": envfile("export " + L + "=0-3\n"),
    "empty-then-set": envfile(L + "=\n" + L + "=0-3\n"),
    "last-wins": envfile(L + "=4-63\n" + L + "=0-3\n"),
    "environ-shadow": environ("LANG=C", "X=a " + L + "=4-63", L + "=0-3"),
    # quotes, comments, blanks, what only a shell does
    "double-quotes": envfile(L + '="0-3"\n'),
    "single-quotes": envfile("  " + L + "='0-3,8'  \n"),
    "trailing-comment": envfile(L + "=0-3 # rt\n"),
    "parts": envfile(L + '=0-"3"\n'),
    "variable": envfile("CPUS=0-3\n" + L + "=$CPUS\n"),
    "substitution": envfile(L + "=$(cat /x)\n"),
    "continuation": envfile(L + "=0-\\\n3\n"),
    "open-quote": envfile("A='\n" + L + "=0-3\n'\n"),
    "sourcing": envfile(". /etc/irqbalance.local\n"),
    "crlf": envfile(L + "=0-3\r\n"),
    "comment-backslash": envfile("# x \\\n" + L + "=0-3\n"),
    "semicolon-comment": envfile("; " + L + "=4-7\n"),
    "two-words": envfile("A=1 " + L + "=0-3\n"),
    "invalid-utf8": envfile(b"IRQBALANCE_ARGS=\xff\n"),
    # the mask, and which of the two irqbalance reads
    "mask": envfile(M + "=f\n"),
    "mask-groups": envfile(M + "=f,1\n"),
    "mask-zeros": envfile(M + "=000000000f,00000000\n"),
    "mask-overflow": envfile(M + "=100000000\n"),
    "mask-before-list": envfile(L + "=8-9\n" + M + "=f\n"),
    "mask-empty": envfile(M + "=\n" + L + "=8-9\n"),
    "mask-blank": envfile(M + "=' '\n" + L + "=1\n"),
    # lists irqbalance reads otherwise
    "list-blank-inside": envfile(L + "='0, 1'\n"),
    "list-empty-item": envfile(L + "=0-3,,5\n"),
    "list-trailing-comma": envfile(L + "=0-3,\n"),
    "list-blanks-only": envfile(L + "=' '\n"),
    "list-huge": envfile(L + "=0-4096\n"),
    "list-overflow": envfile(L + "=99999999999\n"),
    "environ-first": environ(L + "=0-3", L + "=4-63"),
    "environ-mask": environ(L + "=8-9", M + "=ff"),
    "environ-unterminated": b"\x01A=1\x00" + (L + "=0-3").encode(),
    "environ-blanks": environ(L + "= 0-3 \n"),
    "environ-empty": b"\x01",
}


def main():
    for n, v in CPUSETS.items():
        write("cpuset", n, v)
    for n, v in NUMBERS.items():
        write("number", n, v)
    for n, v in JOURNALS.items():
        write("journal", n, v)
    for n, v in SWAPS.items():
        write("swapjournal", n, v)
    for n, v in MANIFESTS.items():
        write("manifest", n, v)
    for n, v in BUNDLES.items():
        write("snapshot", n, v)
    for n, v in MODEL.items():
        write("model", n, v)
    for n, v in ENVFILES.items():
        write("envfile", n, v)


if __name__ == "__main__":
    main()
