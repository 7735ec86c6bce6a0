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
import struct
import subprocess
import sys
import tempfile
import unicodedata
import xml.etree.ElementTree as ET
import zlib

SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
MARGIN_PX = 8  # the bottom and right rows of pixels that stay background
SVG = "{http://www.w3.org/2000/svg}"
HEALTHY = "baremetal-2s-4nvme-healthy"
CLOUD = "cloud-2n64c-8nvme-forced-node0"
VM = "vm-1n-virtio-blk"
EVIL_NAME = "s&d\"a<'"
EVIL_MODEL = "Evil <b>&\"q'</b>\x01 " + "\u56fa\u6001\u786c\u76d8" * 12

failures = []


# what the last numastor run printed on stderr and the notes of the fixture's --json, shown with
# a failure (issue 36: a one-off failure must say what numastor could not read)
LAST = {"args": None, "rc": None, "err": "", "notes": []}


def context():
    lines = [f"    last run: check {' '.join(LAST['args'] or [])}: exit {LAST['rc']}"]
    err = LAST["err"].strip()
    lines.append("    its stderr: " + (err.replace("\n", "\n      ") if err else "(empty)"))
    notes = LAST["notes"]
    lines.append(f"    the fixture's --json notes ({len(notes)}):" if notes else "    the fixture's --json notes: none")
    for nt in notes[:20]:
        lines.append(f"      {nt.get('subject')}: {nt.get('field')}: {nt.get('message')}")
    return "\n".join(lines)


def fail(name, msg):
    failures.append(f"{name}: {msg}")
    print(f"  FAIL {name}: {msg}")
    print(context())
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
    LAST.update(args=list(args), rc=p.returncode, err=p.stderr.decode("utf-8", "replace"))
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


def worst(doc, name):
    """The worst severity of the findings naming the device: "critical", "warning" or None."""
    sev = {f["severity"] for f in doc["findings"] if f["device"] == name}
    return "critical" if "critical" in sev else "warning" if "warning" in sev else None


def cpuset(text):
    out = set()
    for part in (text or "").split(","):
        if part:
            lo, _, hi = part.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    return out


def expected_split(doc, dev):
    """{(node, where): share}, where is local, remote or unplaced: a node the vector's queues'
    CPUs sit on (the device's node for a queue serving every node with CPUs, or for a vector of
    no queue) is local; no such node at all is unplaced. From the JSON's hw_queues and IRQs."""
    with_cpus = {n["node"] for n in doc["machine"]["nodes"] if n.get("cpu_count")}
    acc, seen = {}, set()
    for path in dev["paths"]:
        pci = path.get("pci")
        if not pci or pci["address"] in seen:
            continue
        seen.add(pci["address"])
        for irq in pci["irqs"]:
            counts = judged(irq)
            if not counts:
                continue
            qs = [q for q in dev.get("hw_queues") or []
                  if q.get("irq") == irq["irq"] and (q.get("online_cpus") is None or q.get("online_cpus") != "")]
            qnodes = set().union(*[set(q.get("nodes") or []) for q in qs]) if qs else set()
            if qnodes and not with_cpus <= qnodes:
                ref = qnodes
            else:
                ref = {dev["node"]} if dev["node"] is not None else None
            for c in counts:
                where = "unplaced" if ref is None else "local" if c["node"] in ref else "remote"
                acc[(c["node"], where)] = acc.get((c["node"], where), 0) + c["count"]
    total = sum(acc.values())
    return {k: c / total for k, c in acc.items() if c} if total else {}


LEGEND = ("bar:", "!!")
SHARES = re.compile(r"(\d+)% local((?:  remote(?: n\d+ <?\d+%)+)?)((?:  unplaced(?: n\d+ <?\d+%)+)?)$")


def parse_shares(text):
    """{(node, percent, below)}: "n1 <1%" is (1, 1, True): a share that rounds to 0."""
    return {(int(n), int(p), lt == "<") for n, lt, p in re.findall(r"n(\d+) (<?)(\d+)%", text)}


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
        # a line per device under its node, nothing else but the node lines, the legend, blanks
        groups = len(want_nodes) + any(d["node"] is None for d in doc["devices"])
        if len(lines) != 3 + 2 * groups + len(devs):
            fail(name, f"{tag}: {len(lines)} lines, not 3 + 2 per node ({groups}) + 1 per device ({len(devs)})")
        group, named = None, {}
        for ln in lines:
            if ln.startswith("node "):
                group = int(ln.split()[1].rstrip(":"))
            elif ln.startswith("no node"):
                group = None
            elif ln.startswith("  ") and not ln.startswith("   "):
                if group is None and ln.split()[0] in LEGEND and not named:
                    continue  # the legend, above every group
                named.setdefault(ln.split()[0], []).append((group, ln))
        for dname, d in devs.items():
            seen = named.get(dname, [])
            if len(seen) != 1:
                fail(name, f"{tag}: {dname} named {len(seen)} times, not once")
                continue
            grp, ln = seen[0]
            if grp != d["node"]:
                fail(name, f"{tag}: {dname} drawn under node {grp}, its node is {d['node']}")
            toks = ln[2 + len(dname):].split()
            marks = []
            while toks and toks[0] in ("!!", "!", "F"):
                marks.append(toks.pop(0))
            sev = worst(doc, dname)
            want_marks = (["!!"] if sev == "critical" else ["!"] if sev == "warning" else []) + \
                (["F"] if d["node_source"] == "forced" else [])
            if marks != want_marks:
                fail(name, f"{tag}: {dname} marks {marks}, expected {want_marks} (worst {sev}, "
                     f"node_source {d['node_source']}): {ln!r}")
            want = expected_split(doc, d)
            body = " ".join(toks)
            if not want:
                if not re.match(r"(virtual: no|interrupts: no)", body):
                    fail(name, f"{tag}: {dname} has no counts, its line says {body!r}")
                continue
            if not toks:
                fail(name, f"{tag}: {dname} has no bar: {ln!r}")
                continue
            bar = toks[0]
            alphabet = {"C": "#x?"}.get(lang, "\u2588\u2592\u2591")
            if not all(ch in alphabet for ch in bar):
                fail(name, f"{tag}: {dname} bar {bar!r} not of {alphabet!r}")
                continue
            local = sum(s for (n, w), s in want.items() if w == "local")
            if abs(bar.count(alphabet[0]) - local * len(bar)) > 1:
                fail(name, f"{tag}: {dname} bar {bar!r}: {bar.count(alphabet[0])} local cells, local share {local:.3f}")
            if width < 80:  # the bar gives way to the answer: the local share is whole at every width
                if not re.search(r" \d+% local", ln):
                    fail(name, f"{tag}: {dname}: the local share is cut: {ln!r}")
                continue  # the shares by node may be cut at narrower widths; their width is checked
            m = SHARES.search(ln)
            if not m:
                fail(name, f"{tag}: {dname}: no local share and shares by node: {ln!r}")
                continue
            if abs(int(m.group(1)) - 100 * local) > 0.51:
                fail(name, f"{tag}: {dname} {m.group(1)}% local, its interrupts' local share {local:.4f}")
            for where, text in (("remote", m.group(2)), ("unplaced", m.group(3))):
                got = parse_shares(text)
                exp = {n: s for (n, w), s in want.items() if w == where}
                if {n for n, _, _ in got} != set(exp) or any(
                        (100 * exp[n] >= 0.5) if lt else abs(p - 100 * exp[n]) > 0.51 for n, p, lt in got):
                    fail(name, f"{tag}: {dname} {where} {sorted(got)}, its interrupts' {where} shares {exp}")
        extra = set(named) - set(devs)
        if extra:
            fail(name, f"{tag}: lines for devices the report does not have: {sorted(extra)}")
    return True


def classes(el):
    return set((el.get("class") or "").split())


def png_pixels(path):
    """(width, height, rows of RGBA tuples) of an 8-bit RGB/RGBA PNG, decoded with zlib and struct."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        ln, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + ln]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(f"PNG depth {depth} colour type {ctype} interlace {interlace}")
            bpp = 4 if ctype == 6 else 3
        elif typ == b"IDAT":
            idat += body
        pos += 12 + ln
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                cur[i] = (cur[i] + cur[i - bpp]) & 0xFF
        elif f == 2:
            cur = bytearray((a + b) & 0xFF for a, b in zip(cur, prev))
        elif f == 3:
            for i in range(stride):
                cur[i] = (cur[i] + ((cur[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(cur)
        prev = cur
    if bpp == 3:
        rows = [bytearray(b for i in range(0, len(r), 3) for b in (*r[i:i + 3], 255)) for r in rows]
    return w, h, rows


def check_pixels(name, svg_text, tmp, width, height):
    """Render at the declared size: the bottom and right margins are background (white). Render
    again on a canvas 80 px larger each way: nothing is drawn outside the declared one."""
    png = os.path.join(tmp, name + ".png")
    p = subprocess.run(["rsvg-convert", "-o", png], input=svg_text.encode(), capture_output=True)
    if p.returncode != 0:
        fail(name, f"rsvg-convert exit {p.returncode}: {p.stderr.decode().strip()}")
        return
    w, h, rows = png_pixels(png)
    if (w, h) != (width, height):
        fail(name, f"the PNG is {w} x {h}, the SVG declares {width} x {height}")
        return
    for y in range(h - MARGIN_PX, h):
        if rows[y] != bytearray(b"\xff" * (4 * w)):
            x = next(i // 4 for i in range(0, 4 * w, 4) if rows[y][i:i + 4] != b"\xff\xff\xff\xff")
            fail(name, f"bottom margin row {y} of {h} is not background at x {x}")
            return
    for y in range(h):
        if rows[y][4 * (w - MARGIN_PX):] != bytearray(b"\xff" * (4 * MARGIN_PX)):
            fail(name, f"right margin of row {y} is not background")
            return
    grown = re.sub(r'<svg ([^>]*?)width="\d+" height="\d+" viewBox="0 0 \d+ \d+"',
                   lambda m: f'<svg {m.group(1)}width="{width + 80}" height="{height + 80}" '
                   f'viewBox="0 0 {width + 80} {height + 80}"', svg_text, count=1)
    big = os.path.join(tmp, name + ".big.png")
    subprocess.run(["rsvg-convert", "-o", big], input=grown.encode(), capture_output=True)
    bw, bh, brows = png_pixels(big)
    if (bw, bh) != (width + 80, height + 80):
        fail(name, f"the grown canvas rendered {bw} x {bh}")
        return
    for y in range(bh):
        row = brows[y]
        outside = row[4 * width:] if y < height else row
        if any(outside[i + 3] for i in range(0, len(outside), 4)):
            fail(name, f"drawn outside the {width} x {height} canvas on row {y}")
            return


def check_geometry(name, top, width, height):
    """Every shape and text inside the canvas by its coordinates (a text's width: the monospace
    advance, 0.61 of its font size a column): what the pixel test cannot see, far outside."""
    for e in top.iter():
        tag = e.tag.replace(SVG, "")
        if e.get("class") == "background":
            continue
        if tag == "rect" and e.get("x") is not None:
            x, y, w, h = (float(e.get(k)) for k in ("x", "y", "width", "height"))
            box = (x, y, x + w, y + h)
        elif tag == "circle":
            cx, cy, r = (float(e.get(k)) for k in ("cx", "cy", "r"))
            box = (cx - r, cy - r, cx + r, cy + r)
        elif tag == "polygon":
            pts = [tuple(map(float, p.split(","))) for p in e.get("points").split()]
            box = (min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts))
        elif tag == "text":
            size = 14 if "title" in classes(e) else 10 if "seg-label" in classes(e) else 12
            x, y = float(e.get("x")), float(e.get("y"))
            box = (x, y - size, x + cols("".join(e.itertext())) * size * 0.61, y)
        else:
            continue
        if box[0] < 0 or box[1] < 0 or box[2] > width + 0.5 or box[3] > height + 0.5:
            fail(name, f"a {tag} ({e.get('class')}) spans {box}, outside the {width} x {height} canvas")
            return


def check_svg(name, numastor, root, doc, code, tmp, bound=(1920, 1080)):
    rc, out, err = run(numastor, root, "--format", "svg")
    if rc != code:
        fail(name, f"--format svg: exit {rc}, check --json said {code}: {err.strip()}")
        return None
    try:
        top = ET.fromstring(out)
    except ET.ParseError as e:
        fail(name, f"the SVG is not well-formed XML: {e}")
        return None
    if top.tag != SVG + "svg" or top.find(SVG + "title") is None:
        fail(name, "not an <svg> document with a <title>")
    width, height = int(top.get("width")), int(top.get("height"))
    if top.get("viewBox") != f"0 0 {width} {height}":
        fail(name, f"viewBox {top.get('viewBox')!r} is not the canvas {width} x {height}")
    if bound and (width > bound[0] or height > bound[1]):
        fail(name, f"the canvas is {width} x {height}, over {bound[0]} x {bound[1]}")
    check_pixels(name, out, tmp, width, height)
    check_geometry(name, top, width, height)
    style = "".join(e.text or "" for e in top.iter(SVG + "style"))
    fills = dict(re.findall(r"\.(local|remote|unplaced) \{ fill: ([^;]+);", style))
    if len(set(fills.values())) != 3 or not fills.get("remote", "").startswith("url(#") or \
            fills.get("local", "").startswith("url("):
        fail(name, f"local, remote and unplaced fills {fills}: not three, local a colour, remote a pattern")
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
        sev = worst(doc, d["name"])
        got_sev = classes(g) & {"sev-critical", "sev-warning"}
        if got_sev != ({f"sev-{sev}"} if sev else set()):
            fail(name, f"{d['name']}: severity classes {got_sev}, worst finding {sev}")
        marks = [m for m in g.iter(SVG + "g") if "sev-mark" in classes(m)]
        shape = {"critical": SVG + "circle", "warning": SVG + "polygon"}.get(sev)
        if len(marks) != (1 if sev else 0) or (sev and marks[0].find(shape) is None):
            fail(name, f"{d['name']}: {len(marks)} severity marks, worst {sev} wants one {shape}")
        got = {}
        for e in g.iter():
            if e.get("data-share") is not None:
                kind = classes(e) & {"local", "remote", "unplaced"}
                if len(kind) != 1 or "share" not in classes(e):
                    fail(name, f"{d['name']}: a share of classes {e.get('class')!r}")
                    continue
                key = (int(e.get("data-node")), kind.pop())
                got[key] = got.get(key, 0) + float(e.get("data-share"))
        want = expected_split(doc, d)
        if want and abs(sum(got.values()) - 1) > 0.0006:
            fail(name, f"{d['name']}: shares sum to {sum(got.values()):.4f}, not 1")
        if set(got) != set(want):
            fail(name, f"{d['name']}: shares {sorted(got)}, its interrupts fired {sorted(want)}")
        elif any(abs(got[k] - s) > 0.00051 for k, s in want.items()):
            fail(name, f"{d['name']}: shares {got}, expected {want}")
    return top


def check_output_file(name, numastor, root, tmp):
    target = os.path.join(tmp, name + ".out.svg")
    rc, out, err = run(numastor, root, "--format", "svg", "--output-file", target)
    _, direct, _ = run(numastor, root, "--format", "svg")
    if out or not os.path.exists(target) or open(target).read() != direct:
        fail(name, f"--format svg --output-file: stdout {len(out)} bytes, the file is not the document")


def check_twins(numastor, roots):
    rc, out, _ = run(numastor, roots[HEALTHY], "--map")
    if any(re.match(r"^  \S+ +(!!|!|F) ", ln) for ln in out.splitlines()):
        fail(HEALTHY, "the healthy machine's map carries a mark")
    _, svg, _ = run(numastor, roots[HEALTHY], "--format", "svg")
    top = ET.fromstring(svg)
    devices = [g for g in top.iter(SVG + "g") if "device" in classes(g)]
    marked = [g.get("id") for g in devices for e in g.iter() if classes(e) & {"forced", "misplaced", "sev-critical",
                                                                            "sev-warning", "sev-mark"}]
    if marked:
        fail(HEALTHY, f"the healthy machine's SVG marks {marked}")
    remote = [e for e in top.iter() if {"remote", "unplaced"} & classes(e) and e.get("data-share")]
    if remote:
        fail(HEALTHY, f"the healthy machine's SVG draws {len(remote)} remote or unplaced shares")
    # and its twin in trouble: every disk marked both ways, on one screen of 80 x 50
    _, out, _ = run(numastor, roots[CLOUD], "--map")
    if len(out.splitlines()) > 50 or max(cols(ln) for ln in out.splitlines()) > 80:
        fail(CLOUD, f"the map is {len(out.splitlines())} lines, not within 80 x 50")
    # --format map is the same picture as --map (issue 31: every picture is a --format)
    rc, same, err = run(numastor, roots[CLOUD], "--format", "map")
    if rc == 3 or same != out:
        fail(CLOUD, f"--format map (exit {rc}, {err.strip()!r}) is not the picture --map draws")
    lines = [ln for ln in out.splitlines() if ln.startswith("  nvme")]
    if len(lines) != 8 or not all(ln.split()[1:3] == ["!!", "F"] for ln in lines):
        fail(CLOUD, f"not all eight disks marked !! F: {lines}")
    _, svg, _ = run(numastor, roots[CLOUD], "--format", "svg")
    top = ET.fromstring(svg)
    marked = [g for g in top.iter(SVG + "g") if {"device", "forced", "misplaced", "sev-critical"} <= classes(g)]
    if len(marked) != 8:
        fail(CLOUD, f"{len(marked)} disks with the forced, misplaced and sev-critical classes, expected 8")


def check_large(numastor, tmp):
    """The 8-node, 448-CPU, 64-NVMe machine: the SVG within 1920 x 1080, nothing outside it; the
    text a line per device; each node's CPUs one thread per core, as the tree's own
    thread_siblings_list files have them."""
    out = os.path.join(tmp, "large")
    subprocess.run([sys.executable, GEN, "--large", out], check=True, capture_output=True)
    root = os.path.join(out, os.listdir(out)[0])
    rc, js, _ = run(numastor, root, "--json")
    doc = json.loads(js)
    name = "large-8n448c-64nvme"
    if len(doc["machine"]["nodes"]) != 8 or len(doc["devices"]) != 64:
        fail(name, "not the 8-node, 64-disk machine")
    check_svg(name, numastor, root, doc, rc, tmp, bound=(1920, 1080))
    rc, text, _ = run(numastor, root, "--map")
    if len(text.splitlines()) != 3 + 2 * 8 + 64:
        fail(name, f"the map is {len(text.splitlines())} lines, not 3 + 2 per node + 1 per device")
    cpu = os.path.join(root, "sys", "devices", "system", "cpu")
    for n in doc["machine"]["nodes"]:
        firsts, threads = set(), set()
        for c in sorted(cpuset(n["cpus"])):
            sib = cpuset(open(os.path.join(cpu, f"cpu{c}", "topology", "thread_siblings_list")).read().strip())
            threads.add(len(sib))
            if min(sib) == c:
                firsts.add(c)
        want = f"node {n['node']}: CPUs {fmt_cpus(firsts)} x{threads.pop()} SMT ({n['cpu_count']})"
        if not any(ln.startswith(want + ",") for ln in text.splitlines()):
            fail(name, f"no node line {want!r}")


def fmt_cpus(s):
    out, run_start, prev = [], None, None
    for c in sorted(s) + [None]:
        if c is not None and prev is not None and c == prev + 1:
            prev = c
            continue
        if run_start is not None:
            out.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
        run_start = prev = c
    return ",".join(out)


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
            LAST["notes"] = doc.get("notes") or []
            check_text(name, numastor, roots[name], doc, rc)
            check_svg(name, numastor, roots[name], doc, rc, tmp)
            print(f"  {name}: {len(doc['devices'])} devices, {len(doc['machine']['nodes'])} nodes")
        check_output_file(names[0], numastor, roots[names[0]], tmp)
        if HEALTHY in roots and CLOUD in roots and VM in roots:
            check_twins(numastor, roots)
            check_escaping(numastor, roots, tmp)
        check_refusals(numastor, roots[names[0]])
        if os.environ.get("NUMASTOR_MAP_LARGE", "1") == "1":
            check_large(numastor, tmp)
    if failures:
        print(f"check-map: {len(failures)} failure(s)")
        return 1
    print(f"check-map: {len(names)} fixtures: text maps fit, SVGs render and match the reports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
