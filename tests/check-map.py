#!/usr/bin/env python3
"""check --map and --format svg (issue 12, part 8) on every fixture machine, judged against the
fixture's own `check --json` (nothing hard-coded):

- text: every line at most 80 display columns piped (and 60, 40 under COLUMNS), in a UTF-8 and
  in the C locale (bars of '#' there, nothing but ASCII); every node listed; every device named
  once, under its node (or "no node"); its bars' percentages are its interrupts' shares;
  forced devices marked F, those with warning/critical findings marked !.
- SVG: rsvg-convert renders it to a non-empty PNG; xml.etree finds one <g class="node"> per NUMA
  node (and node-none exactly when a device's node is unknown), one <g class="device"> per
  device inside its node's group, one fire bar per node its interrupts fired on with data-share
  = count / total (the counts of the basis JSON's count_basis names), the forced and misplaced
  classes exactly where the JSON says so; --output-file writes the same document.
- the twin: the healthy fixture carries no mark at all, the cloud fixture's eight disks all do.
- what the machine said is escaped: a model with markup, quotes, a control byte and wide
  characters still gives a well-formed SVG that carries it as text, and a text map that fits.
- refusals: --format svg with --list or --verbose, --map with --json or --list: exit 3.

    check-map.py NUMASTOR [FIXTURE...]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
import xml.etree.ElementTree as ET

SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
BAR = re.compile(r"^    node(\d+) +(\S+) +(\d+)%$")  # "    node0    ####....  40%"
SVG = "{http://www.w3.org/2000/svg}"
HEALTHY = "baremetal-2s-4nvme-healthy"
CLOUD = "cloud-2n64c-8nvme-forced-node0"
VM = "vm-1n-virtio-blk"
EVIL_NAME = "s&d\"a<'"
EVIL_MODEL = "Evil <b>&\"q'</b>\x01 " + "\u56fa\u6001\u786c\u76d8" * 12

failures = []


def fail(name, msg):
    failures.append(f"{name}: {msg}")
    print(f"  FAIL {name}: {msg}")
    if os.environ.get("NUMASTOR_FAIL_FAST") == "1":  # tests/mutation/run.sh: the first one ends it
        sys.exit(1)


def cols(line):
    """Display columns, as a terminal counts them."""
    n = 0
    for ch in line:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return n


def run(numastor, root, *args, lang="C.UTF-8", columns=None):
    env = dict(os.environ, NO_COLOR="1", LANG=lang, LC_ALL=lang)
    env.pop("COLUMNS", None)
    if columns:
        env["COLUMNS"] = str(columns)
    p = subprocess.run([numastor, "check", "--sysroot", root, *args], capture_output=True, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def judged(irq):
    """The per-node counts the fire-location rule judges (lib/read/rates.h), as the JSON gives them."""
    return {
        "interval": irq.get("rates_by_node"),
        "since-fix": irq.get("counts_since_fix_by_node"),
        "since-boot": irq.get("counts_by_node"),
    }.get(irq.get("count_basis"))


def expected_shares(dev):
    """{node: share} over the IRQs of the PCI functions behind the device (each function once)."""
    acc, seen = {}, set()
    for path in dev["paths"]:
        pci = path.get("pci")
        if not pci or pci["address"] in seen:
            continue
        seen.add(pci["address"])
        for irq in pci["irqs"]:
            for c in judged(irq) or []:
                acc[c["node"]] = acc.get(c["node"], 0) + c["count"]
    total = sum(acc.values())
    return {n: c / total for n, c in acc.items() if c} if total else {}


def misplaced(doc, name):
    return any(f["device"] == name and f["severity"] in ("warning", "critical") for f in doc["findings"])


def check_text(name, numastor, root, doc, code):
    devs = {d["name"]: d for d in doc["devices"]}
    for lang, columns in (("C.UTF-8", None), ("C", None), ("C.UTF-8", 60), ("C.UTF-8", 40)):
        width = columns or 80
        rc, out, err = run(numastor, root, "--map", lang=lang, columns=columns)
        tag = f"--map LANG={lang} COLUMNS={columns or '(piped)'}"
        if rc != code:
            fail(name, f"{tag}: exit {rc}, check --json said {code}: {err.strip()}")
            continue
        lines = out.splitlines()
        for ln in lines:
            if cols(ln) > width:
                fail(name, f"{tag}: {cols(ln)} columns > {width}: {ln!r}")
                break
        nodes = {int(ln.split()[1].rstrip(":")) for ln in lines if ln.startswith("node ")}
        want_nodes = {n["node"] for n in doc["machine"]["nodes"]}
        if nodes != want_nodes:
            fail(name, f"{tag}: nodes listed {sorted(nodes)}, the machine has {sorted(want_nodes)}")
        # device lines: two spaces, then the name (node lines and bars are indented otherwise)
        group, named = None, {}
        cur = None
        for ln in lines:
            if ln.startswith("node "):
                group = int(ln.split()[1].rstrip(":"))
            elif ln.startswith("no node"):
                group = None
            elif ln.startswith("  ") and not ln.startswith("   ") and not ln.startswith("  ("):
                if group is None and ln.split()[0] in ("bars:", "F:"):
                    continue  # the legend, above every group
                dname = ln.split()[0]
                named.setdefault(dname, []).append((group, ln))
                cur = dname
            elif BAR.match(ln) and cur:
                m = BAR.match(ln)
                named.setdefault(cur + "#bars", []).append((int(m.group(1)), int(m.group(3)), m.group(2)))
        for dname, d in devs.items():
            seen = named.get(dname, [])
            if len(seen) != 1:
                fail(name, f"{tag}: {dname} named {len(seen)} times, not once")
                continue
            grp, ln = seen[0]
            if grp != d["node"]:
                fail(name, f"{tag}: {dname} drawn under node {grp}, its node is {d['node']}")
            marks = ln.split()[-2:] if ln.rstrip().endswith("!") else ln.split()[-1:]
            if ("F" in marks) != (d["node_source"] == "forced"):
                fail(name, f"{tag}: {dname} forced mark {'F' in marks}, node_source {d['node_source']}")
            if ("!" in marks) != misplaced(doc, dname):
                fail(name, f"{tag}: {dname} findings mark {'!' in marks}, findings say {misplaced(doc, dname)}")
            want = expected_shares(d)
            bars = named.get(dname + "#bars", [])
            got = {n: p for n, p, _ in bars}
            if set(got) != set(want) or any(abs(got[n] - 100 * s) > 0.51 for n, s in want.items()):
                fail(name, f"{tag}: {dname} bars {got}, its interrupts' shares {want}")
            for _, _, bar in bars:
                if lang == "C" and not all(ch in "#." for ch in bar):
                    fail(name, f"{tag}: {dname} bar {bar!r} not ASCII in the C locale")
                if lang != "C" and not all(ch in "\u2588\u2591" for ch in bar):
                    fail(name, f"{tag}: {dname} bar {bar!r} not blocks in a UTF-8 locale")
        extra = set(k for k in named if not k.endswith("#bars")) - set(devs)
        if extra:
            fail(name, f"{tag}: lines for devices the report does not have: {sorted(extra)}")
    return True


def classes(el):
    return set((el.get("class") or "").split())


def check_svg(name, numastor, root, doc, code, tmp):
    rc, out, err = run(numastor, root, "--format", "svg")
    if rc != code:
        fail(name, f"--format svg: exit {rc}, check --json said {code}: {err.strip()}")
        return None
    svg = os.path.join(tmp, name + ".svg")
    png = os.path.join(tmp, name + ".png")
    with open(svg, "w") as f:
        f.write(out)
    p = subprocess.run(["rsvg-convert", "-o", png, svg], capture_output=True, text=True)
    if p.returncode != 0:
        fail(name, f"rsvg-convert exit {p.returncode}: {p.stderr.strip()}")
    elif not os.path.exists(png) or os.path.getsize(png) == 0 or open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        fail(name, "rsvg-convert wrote no PNG")
    try:
        top = ET.fromstring(out)
    except ET.ParseError as e:
        fail(name, f"the SVG is not well-formed XML: {e}")
        return None
    if top.tag != SVG + "svg" or top.find(SVG + "title") is None:
        fail(name, "not an <svg> document with a <title>")
    parent = {c: p for p in top.iter() for c in p}
    groups = [g for g in top.iter(SVG + "g") if "node" in classes(g)]
    ids = [g.get("id") for g in groups]
    want = {f"node-{n['node']}" for n in doc["machine"]["nodes"]}
    if any(d["node"] is None for d in doc["devices"]):
        want.add("node-none")
    if sorted(ids) != sorted(want):
        fail(name, f"node groups {sorted(ids)}, expected {sorted(want)}")
    devgroups = {}
    for g in top.iter(SVG + "g"):
        if "device" in classes(g):
            devgroups.setdefault(g.get("data-device"), []).append(g)
    if set(devgroups) != {d["name"] for d in doc["devices"]}:
        fail(name, f"device groups {sorted(devgroups)}, the report has {sorted(d['name'] for d in doc['devices'])}")
    for d in doc["devices"]:
        gs = devgroups.get(d["name"], [])
        if len(gs) != 1:
            fail(name, f"{d['name']}: {len(gs)} device groups, not one")
            continue
        g = gs[0]
        if g.get("id") != "dev-" + d["name"]:
            fail(name, f"{d['name']}: id {g.get('id')!r}")
        home = parent.get(g)
        want_home = "node-none" if d["node"] is None else f"node-{d['node']}"
        if home is None or home.get("id") != want_home:
            fail(name, f"{d['name']}: inside {home.get('id') if home is not None else None}, not {want_home}")
        if ("forced" in classes(g)) != (d["node_source"] == "forced"):
            fail(name, f"{d['name']}: class {g.get('class')!r}, node_source {d['node_source']}")
        if ("misplaced" in classes(g)) != misplaced(doc, d["name"]):
            fail(name, f"{d['name']}: class {g.get('class')!r}, findings say misplaced {misplaced(doc, d['name'])}")
        fires = {}
        for e in g.iter():
            if e.get("data-share") is not None:
                fires.setdefault(int(e.get("data-node")), []).append(float(e.get("data-share")))
        shares = expected_shares(d)
        if set(fires) != set(shares) or any(len(v) != 1 for v in fires.values()):
            fail(name, f"{d['name']}: fire bars on nodes {fires}, its interrupts fired on {sorted(shares)}")
        elif any(abs(fires[n][0] - s) > 0.00051 for n, s in shares.items()):
            fail(name, f"{d['name']}: shares {fires}, expected {shares}")
    return top


def check_output_file(name, numastor, root, tmp):
    target = os.path.join(tmp, name + ".out.svg")
    rc, out, err = run(numastor, root, "--format", "svg", "--output-file", target)
    _, direct, _ = run(numastor, root, "--format", "svg")
    if out or not os.path.exists(target) or open(target).read() != direct:
        fail(name, f"--format svg --output-file: stdout {len(out)} bytes, the file is not the document")


def check_twins(numastor, roots):
    rc, out, _ = run(numastor, roots[HEALTHY], "--map")
    if any(ln.rstrip().endswith((" F", " !")) or ln.startswith("    ! ") for ln in out.splitlines()):
        fail(HEALTHY, "the healthy machine's map carries a mark")
    _, svg, _ = run(numastor, roots[HEALTHY], "--format", "svg")
    top = ET.fromstring(svg)
    marked = [g.get("id") for g in top.iter(SVG + "g") if classes(g) & {"forced", "misplaced"}]
    if marked:
        fail(HEALTHY, f"the healthy machine's SVG marks {marked}")
    # and its twin in trouble: every disk marked both ways
    _, out, _ = run(numastor, roots[CLOUD], "--map")
    # --format map is the same picture as --map (issue 31: every picture is a --format)
    rc, same, err = run(numastor, roots[CLOUD], "--format", "map")
    if rc == 3 or same != out:
        fail(CLOUD, f"--format map (exit {rc}, {err.strip()!r}) is not the picture --map draws")
    lines = [ln for ln in out.splitlines() if ln.startswith("  nvme")]
    if len(lines) != 8 or not all(ln.endswith("F !") for ln in lines):
        fail(CLOUD, f"not all eight disks marked F !: {lines}")
    _, svg, _ = run(numastor, roots[CLOUD], "--format", "svg")
    top = ET.fromstring(svg)
    marked = [g for g in top.iter(SVG + "g") if {"device", "forced", "misplaced"} <= classes(g)]
    if len(marked) != 8:
        fail(CLOUD, f"{len(marked)} disks with the forced and misplaced classes, expected 8")


def check_escaping(numastor, roots, tmp):
    """A model that says markup, quotes, a control byte and wide characters."""
    root = os.path.join(tmp, "evil")
    shutil.copytree(roots[HEALTHY], root, symlinks=True)
    udev = os.path.join(root, "run", "udev", "data", "b259:0")
    lines = open(udev).read().splitlines()
    with open(udev, "w") as f:
        for ln in lines:
            f.write(("E:ID_MODEL=" + EVIL_MODEL if ln.startswith("E:ID_MODEL=") else ln) + "\n")
    _, js, _ = run(numastor, root, "--json")
    model = [d for d in json.loads(js)["devices"] if d["name"] == "nvme0n1"][0]["identity"]["model"]
    if "<b>" not in (model or ""):
        fail("escaping", f"the fixture edit did not reach the model: {model!r}")
        return
    _, svg, _ = run(numastor, root, "--format", "svg")
    try:
        top = ET.fromstring(svg)
    except ET.ParseError as e:
        fail("escaping", f"a model with markup breaks the SVG: {e}")
        return
    if [e for e in top.iter() if e.tag == "b" or e.tag == SVG + "b"]:
        fail("escaping", "the model's <b> became an element")
    dev = [g for g in top.iter(SVG + "g") if g.get("id") == "dev-nvme0n1"][0]
    text = "".join(dev.itertext())
    if "Evil <b>&\"q'</b>\\x01" not in text:
        fail("escaping", f"the model is not carried as text (control byte as \\x01): {text[:200]!r}")
    p = subprocess.run(["rsvg-convert", "-o", os.path.join(tmp, "evil.png")], input=svg.encode(), capture_output=True)
    if p.returncode != 0:
        fail("escaping", f"rsvg-convert: {p.stderr.decode().strip()}")
    rc, out, _ = run(numastor, root, "--map")
    for ln in out.splitlines():
        if cols(ln) > 80 or "\x01" in ln:
            fail("escaping", f"map line {cols(ln)} columns or with a control byte: {ln!r}")
    # a device name with markup and quotes (a /sys/block entry may be called anything): the whole
    # text and SVG check holds on it, ids and data-device included
    root = os.path.join(tmp, "evil-name")
    shutil.copytree(roots[VM], root, symlinks=True)
    os.rename(os.path.join(root, "sys", "block", "sda"), os.path.join(root, "sys", "block", EVIL_NAME))
    rc, js, _ = run(numastor, root, "--json")
    doc = json.loads(js)
    if EVIL_NAME not in [d["name"] for d in doc["devices"]]:
        fail("escaping", f"the renamed disk is not in the report: {[d['name'] for d in doc['devices']]}")
        return
    check_text("escaping-name", numastor, root, doc, rc)
    check_svg("escaping-name", numastor, root, doc, rc, tmp)


def check_refusals(numastor, root):
    for args in (["--format", "svg", "--list"], ["--format", "svg", "--verbose"], ["--map", "--json"],
                 ["--map", "--list"], ["--map", "--format", "prometheus"],
                 ["--format", "map", "--list"], ["--format", "map", "--json"]):
        rc, out, err = run(numastor, root, *args)
        if rc != 3 or "Try 'numastor check --help'" not in err:
            fail("refusals", f"{' '.join(args)}: exit {rc}, stderr {err.strip()!r}: not refused")


def main():
    numastor = os.path.abspath(sys.argv[1])
    names = sys.argv[2:]
    if not shutil.which("rsvg-convert"):
        print("check-map: rsvg-convert (librsvg2-bin) is not installed: cannot test the SVG")
        return 1
    with tempfile.TemporaryDirectory(prefix="numastor-map.", dir=SCRATCH) as tmp:
        fx = os.path.join(tmp, "fx")
        subprocess.run([sys.executable, GEN, fx, *names], check=True)
        names = names or sorted(os.listdir(fx))
        roots = {n: os.path.join(fx, n) for n in names}
        for name in names:
            rc, js, err = run(numastor, roots[name], "--json")
            doc = json.loads(js)
            check_text(name, numastor, roots[name], doc, rc)
            check_svg(name, numastor, roots[name], doc, rc, tmp)
            print(f"  {name}: {len(doc['devices'])} devices, {len(doc['machine']['nodes'])} nodes")
        check_output_file(names[0], numastor, roots[names[0]], tmp)
        if HEALTHY in roots and CLOUD in roots and VM in roots:
            check_twins(numastor, roots)
            check_escaping(numastor, roots, tmp)
        check_refusals(numastor, roots[names[0]])
    if failures:
        print(f"check-map: {len(failures)} failure(s)")
        return 1
    print(f"check-map: {len(names)} fixtures: text maps fit, SVGs render and match the reports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
