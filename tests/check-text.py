#!/usr/bin/env python3
"""The text report's layout, asserted from each fixture's JSON report, never from the golden
.txt files (numastor-check(8), THE REPORT):

- every fixture's default report has no line over 80 display columns (East Asian wide
  characters count two, combining marks none; escapes none);
- the findings are grouped: each (id, severity) of the JSON findings is one entry, naming
  exactly the devices the JSON gives it, and no other entry exists;
- the cloud fixture's report fits one screen (at most 50 lines) and names every disk of each of
  its findings, consecutive names compacted as one range;
- --verbose shows every hardware queue: per device as many queue rows as the JSON has
  hw_queues, each with the JSON's IRQ;
- a terminal's width is honoured: under a pty of 50 columns (TIOCSWINSZ) and with COLUMNS=60 on
  a pty that does not know its size, no line is wider, the default and --verbose reports alike;
- colour: --color always colours the rows a finding names in their severity's colour and no
  other; auto gives none under TERM=dumb or NO_COLOR, some on a plain terminal; `fix --color`
  is honoured (always, never, and auto under TERM=dumb);
- empty devices (size 0) are left out of the text, JSON and Prometheus reports unless -a/--all
  or named on the command line, and the text says how many it left out.

    check-text.py NUMASTOR [CASE...]

CASE narrows the run (a mutant's kill command names the cases that kill it; no CASE runs them
all): `fixtures` (every fixture's default and --verbose reports), a fixture's name (that part on
that fixture only), `width` (the terminal's width), `colour`, `empty` (empty devices).
"""
import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
SCRATCH = os.environ.get("TMPDIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
CLOUD = "cloud-2n64c-8nvme-forced-node0"
ESC = re.compile(r"\x1b\[[0-9;]*m")
SEV_ESC = {"critical": "\x1b[1;31m", "warning": "\x1b[33m", "info": "\x1b[36m"}

failures = []


def fail(what):
    failures.append(what)
    print("FAIL " + what)
    if os.environ.get("NUMASTOR_FAIL_FAST") == "1":  # tests/mutation/run.sh: the first one ends it
        sys.exit(1)


def columns(line):
    """Display width, as a terminal shows it."""
    w = 0
    for ch in ESC.sub("", line):
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def run(numastor, *args, env=None):
    e = dict(os.environ, NO_COLOR="1")
    e.pop("COLUMNS", None)
    e.update(env or {})
    p = subprocess.run([numastor, *args], capture_output=True, text=True, env=e, timeout=120)
    return p.returncode, p.stdout, p.stderr


def run_pty(numastor, *args, cols=0, env=None):
    """Run with stdout on a pty of `cols` columns (0: a pty that does not know its size)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR  # the bytes as written
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    e = dict(os.environ)
    for k in ("COLUMNS", "NO_COLOR"):
        e.pop(k, None)
    e.update(env or {})
    p = subprocess.Popen([numastor, *args], stdout=slave, stderr=subprocess.DEVNULL, env=e)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    p.wait(timeout=60)
    return p.returncode, out.decode("utf-8")


def natkey(name):
    return [int(x) if x.isdigit() else x for x in re.findall(r"\d+|\D+", name)]


def skeleton(name):
    return re.sub(r"\d+", "#", name)[:-1] if re.search(r"[a-z]$", name) and not re.search(r"\d", name) \
        else re.sub(r"\d+", "#", name)


def expand(listing, names):
    """The devices a list like "nvme0n1-nvme7n1, sda" stands for, read against the JSON's names:
    a token that is a name is that name; else first-last, every name of the same shape between."""
    out = []
    for tok in [x.strip() for x in listing.split(",") if x.strip()]:
        if tok in names:
            out.append(tok)
            continue
        hit = None
        for i in [m.start() for m in re.finditer("-", tok)]:
            a, b = tok[:i], tok[i + 1:]
            if a in names and b in names:
                hit = (a, b)
                break
        if not hit:
            raise AssertionError(f"{tok!r} is neither a device nor a range of devices")
        a, b = hit
        between = [n for n in names if skeleton(n) == skeleton(a) and natkey(a) <= natkey(n) <= natkey(b)]
        if len(between) < 2:
            raise AssertionError(f"range {tok!r} holds {between}")
        out += between
    return out


def groups(text):
    """The findings entries: [(severity, id, listing or None, count or None, cause)] in order;
    cause is None for a cause's entry, the id it names for an effect listed under it."""
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith("findings"))
    except StopIteration:
        raise AssertionError("no findings section")
    out = []
    k = start + 1
    because = None
    while k < len(lines) and lines[k]:
        eff = re.match(r"^    effects, because: (\S+)$", lines[k])
        if eff:
            because = eff.group(1)
            k += 1
            continue
        m = re.match(r"^(  |      )(critical|warning|info) +(\S+?)(:.*)?$", lines[k])
        if not m:
            k += 1
            continue
        cause = because if len(m.group(1)) == 6 else None
        if cause is None:
            because = None
        head = lines[k]
        if m.group(4):  # a device list: it ends with its count, maybe lines later
            while not re.search(r"\(\d+\)$", head) and k + 1 < len(lines):
                k += 1
                head += " " + lines[k].strip()
            mm = re.match(r"^ +(\S+) +(\S+?): (.*) \((\d+)\)$", head)
            assert mm, f"a findings entry without its device count: {head!r}"
            out.append((mm.group(1), mm.group(2), mm.group(3), int(mm.group(4)), cause))
        else:
            out.append((m.group(2), m.group(3), None, None, cause))
        k += 1
    return out


def check_groups(name, text, doc):
    """Every finding of the JSON is in one entry of the text, causes at the top, each effect
    under the cause the JSON names; entries of one key split only where their sentences
    differ, and then name no device twice."""
    names = [d["name"] for d in doc["devices"]]
    want = {}
    for f in doc["findings"]:
        want.setdefault((f["severity"], f["id"], f["caused_by"]), []).append(f["device"])
    got = groups(text)
    keys = [(s, i, c) for s, i, _, _, c in got]
    if set(keys) != set(want):
        fail(f"{name}: findings entries {sorted(set(keys), key=str)}, JSON {sorted(want, key=str)}")
    shown_by_key = {}
    for sev, fid, listing, count, cause in got:
        devs = want.get((sev, fid, cause))
        if devs is None:
            continue
        if listing is None:
            if devs != [None]:
                fail(f"{name}: {fid} names no device, JSON {devs}")
            continue
        try:
            shown = expand(listing, names)
        except AssertionError as e:
            fail(f"{name}: {fid}: {e}")
            continue
        if len(shown) != len(set(shown)) or count != len(shown):
            fail(f"{name}: {fid} ({sev}) names {shown} ({count})")
        shown_by_key.setdefault((sev, fid, cause), []).extend(shown)
    for key, shown in shown_by_key.items():
        if sorted(shown) != sorted(d for d in want[key] if d is not None):
            fail(f"{name}: {key[1]} ({key[0]}) names {sorted(shown)} in all, JSON {sorted(want[key])}")
    return got


def queue_rows(text):
    """Per device of a --verbose report: the IRQ column of each queue row ("-" or a number)."""
    rows, cur, head = {}, None, None
    in_devices = False
    for line in text.splitlines():
        if line.startswith("devices"):
            in_devices = True
            continue
        if not in_devices:
            continue
        if line.startswith("notes"):
            break
        m = re.match(r"^(\S+)  \S+  ", line)
        if m:
            cur, head = m.group(1), None
            rows[cur] = []
            continue
        if cur is None:
            continue
        if re.match(r"^ +(! +)?HWQ +CPUS ", line):
            head = (line.index("HWQ"), line.index(" IRQ ") + 1)
            continue
        if head and (re.match(r"^ +(irq \d+ |! a finding)", line) or re.match(r"^  [a-z]+[: ]", line)):
            head = None  # the table ends: its legend, the device's other IRQs, its allocations
            continue
        if head and line.startswith("  ") and len(line) > head[0]:
            if line[head[0]] != " ":
                rows[cur].append(line[head[1]:].split()[0] if len(line) > head[1] else "")
            continue
        head = None
    return rows


def check_verbose(name, text, doc):
    rows = queue_rows(text)
    for d in doc["devices"]:
        want = ["-" if q["irq"] is None else str(q["irq"]) for q in d["hw_queues"]]
        got = rows.get(d["name"])
        if got is None:
            fail(f"{name} --verbose: no block for {d['name']}")
        elif got != want:
            fail(f"{name} --verbose: {d['name']} queue rows (IRQ column) {got[:6]}... ({len(got)}), "
                 f"JSON {want[:6]}... ({len(want)})")


def named_rows(doc):
    """(device, hw_queue index) -> the worst severity of the findings whose evidence names its IRQ."""
    rank = {"info": 0, "warning": 1, "critical": 2}
    out = {}
    for d in doc["devices"]:
        for q in d["hw_queues"]:
            if q["irq"] is None:
                continue
            for f in doc["findings"]:
                if f["device"] != d["name"]:
                    continue
                ev = f["evidence"] or {}
                irqs = [e["irq"] if isinstance(e, dict) else e for e in ev.get("irqs") or []]
                if ev.get("irq") is not None:
                    irqs.append(ev["irq"])
                if q["irq"] in irqs:
                    key = (d["name"], q["index"])
                    if key not in out or rank[f["severity"]] > rank[out[key]]:
                        out[key] = f["severity"]
    return out


def too_wide(text, width):
    return [(columns(l), l) for l in text.splitlines() if columns(l) > width]


def add_empty_loop(root, name="loop7", devnum="7:7"):
    """An unattached loop device: loop0's directory again with size 0 and no backing file."""
    src = os.path.join(root, "sys/devices/virtual/block/loop0")
    dst = os.path.join(root, "sys/devices/virtual/block", name)
    shutil.copytree(src, dst, symlinks=True)
    with open(os.path.join(dst, "size"), "w") as f:
        f.write("0\n")
    with open(os.path.join(dst, "dev"), "w") as f:
        f.write(devnum + "\n")
    shutil.rmtree(os.path.join(dst, "loop"), ignore_errors=True)
    os.symlink("../devices/virtual/block/" + name, os.path.join(root, "sys/block", name))


PARTS = ("fixtures", "width", "colour", "empty")
WIDTH_FIXTURES = (CLOUD, "twin-2n-hba-managed-unknown", "garbage-numbers")


def main():
    numastor = os.path.abspath(sys.argv[1])
    every = subprocess.run([sys.executable, GEN, "--list"], capture_output=True, text=True,
                           check=True).stdout.split()
    cases = sys.argv[2:]
    unknown = [c for c in cases if c not in PARTS and c not in every]
    if unknown:
        print(f"check-text.py: no such case {unknown}: a part {list(PARTS)} or a fixture's name")
        return 2
    parts = set(PARTS) if not cases else {c for c in cases if c in PARTS}
    names = [n for n in every if n in cases]
    if names or "fixtures" in parts:
        parts.add("fixtures")
        names = names or every
    # the trees the parts asked for read, and nothing else generated
    need = set(names)
    need |= set(WIDTH_FIXTURES) if "width" in parts else set()
    need |= {CLOUD, "baremetal-2s-4nvme-healthy"} if "colour" in parts else set()
    need |= {"vm-1n-virtio-blk"} if "empty" in parts else set()
    with tempfile.TemporaryDirectory(prefix="numastor-text.", dir=SCRATCH) as tmp:
        subprocess.run([sys.executable, GEN, tmp, *[n for n in every if n in need]], check=True,
                       stdout=subprocess.DEVNULL)
        docs = {}

        def doc_of(name):
            if name not in docs:
                docs[name] = json.loads(run(numastor, "check", "-R", os.path.join(tmp, name), "--json")[1])
            return docs[name]

        for name in names:
            root = os.path.join(tmp, name)
            doc = doc_of(name)
            code, text, err = run(numastor, "check", "-R", root)
            wide = too_wide(text, 80)
            if wide:
                fail(f"{name}: {len(wide)} lines over 80 columns, the widest {wide[0][0]}: {wide[0][1][:100]!r}")
            try:
                got = check_groups(name, text, doc)
            except AssertionError as e:
                fail(f"{name}: {e}")
                continue
            if name == CLOUD:
                n = len(text.splitlines())
                if n > 50:
                    fail(f"{CLOUD}: {n} lines, more than one screen (50)")
                disks = sorted({f["device"] for f in doc["findings"]})
                if len(disks) != 8:
                    fail(f"{CLOUD}: the JSON's findings name {len(disks)} disks, not 8")
                for sev, fid, listing, count, cause in got:
                    if listing is None or "," in listing:
                        fail(f"{CLOUD}: {fid}: {listing!r} is not one range of consecutive names")
                # one cause at critical, its three effects under it
                top = [(sev, fid) for sev, fid, _, _, cause in got if cause is None]
                under = sorted(fid for _, fid, _, _, cause in got if cause == "node-forced")
                if top != [("critical", "node-forced")] or \
                        under != ["irq-confined", "irq-fires-remote", "irqbalance-confines"]:
                    fail(f"{CLOUD}: causes {top}, effects of node-forced {under}")
                if not re.search(r"^summary: CRITICAL, 8 devices: 1 cause \(node-forced\) critical \(exit 2\)$",
                                 text, re.M):
                    fail(f"{CLOUD}: summary {text.splitlines()[0]!r}")
                # each device's FINDINGS cell counts its causes by severity: one critical
                cells = re.findall(r"^  (nvme\dn1) .*  (\S+ \S+)$", text, re.M)
                if len(cells) != 8 or any(c != "1 crit" for _, c in cells):
                    fail(f"{CLOUD}: FINDINGS cells {cells}")
            if name == "twin-xen-2n-5nvme-confined":
                # confined to the device's own node (nvme1n1) and on a device without a node
                # (nvme4n1): two sentences, two entries
                conf = [listing for sev, fid, listing, _, _ in got if fid == "irq-confined" and sev == "warning"]
                if sorted(conf) != ["nvme1n1", "nvme4n1"]:
                    fail(f"{name}: irq-confined entries {conf}: one sentence would not hold for both")
            code, vtext, _ = run(numastor, "check", "-R", root, "--verbose")
            check_verbose(name, vtext, doc)
            wide = too_wide(vtext, 80)
            if wide:
                fail(f"{name} --verbose: {len(wide)} lines over 80 columns: {wide[0][1][:100]!r}")
            print(f"PASS {name}: {len(text.splitlines())} lines, {len(vtext.splitlines())} with --verbose")

        # a terminal's width: the ioctl's, else COLUMNS; the default and --verbose reports
        for fx in WIDTH_FIXTURES if "width" in parts else ():
            root = os.path.join(tmp, fx)
            for args in ((), ("--verbose",)):
                for cols, env in ((50, {"NO_COLOR": "1"}), (0, {"COLUMNS": "60", "NO_COLOR": "1"})):
                    width = cols or 60
                    _, text = run_pty(numastor, "check", "-R", root, *args, cols=cols, env=env)
                    wide = too_wide(text, width)
                    if not text.strip():
                        fail(f"{fx} {args} on a pty: no output")
                    elif wide:
                        fail(f"{fx} {' '.join(args)} on a {width}-column terminal: {len(wide)} lines wider, "
                             f"the widest {wide[0][0]}: {wide[0][1][:100]!r}")
                    elif max(columns(l) for l in text.splitlines()) <= width - 15:
                        fail(f"{fx} {args} on a {width}-column terminal: nothing near the width (not wrapped to it?)")
            try:
                check_groups(fx + " (50 columns)", run_pty(numastor, "check", "-R", root, cols=50,
                                                           env={"NO_COLOR": "1"})[1], doc_of(fx))
            except AssertionError as e:
                fail(f"{fx} at 50 columns: {e}")
        if "width" in parts:
            print("PASS terminal width (TIOCGWINSZ 50, COLUMNS=60)")
        if "colour" in parts:
            colour(numastor, tmp, doc_of(CLOUD))
        if "empty" in parts:
            empty(numastor, tmp)
    print(f"text: {'failed' if failures else 'passed'} ({len(failures)} failures)")
    return 1 if failures else 0


def colour(numastor, tmp, cloud_doc):
    root = os.path.join(tmp, CLOUD)
    _, text, _ = run(numastor, "check", "-R", root, "--verbose", "--color", "always")
    marked = [l for l in text.splitlines() if re.match(r"^ *(\x1b\[[0-9;]*m)?! ", l) and "a finding names" not in l]  # not the legend
    named = named_rows(cloud_doc)
    want = [sev for sev in named.values()]
    if len(marked) != len(want) or not want or \
            sorted(SEV_ESC[s] for s in want) != sorted(l.lstrip()[:len(l.lstrip()) - len(l.lstrip().lstrip("\x1b[0123456789;m"))] for l in marked):
        fail(f"{CLOUD}: {len(marked)} queue rows marked, the JSON's findings name {len(want)}; "
             f"each must be in its worst severity's colour: {marked[:2]!r}")
    _, text, _ = run(numastor, "check", "-R", os.path.join(tmp, "baremetal-2s-4nvme-healthy"), "--verbose",
                     "--color", "always")
    rows = [l for l in text.splitlines() if re.match(r"^ {2}(\x1b\[[0-9;]*m)?\d+ ", l)]
    if not rows or any("\x1b" in l for l in rows):
        fail(f"healthy fixture: queue rows coloured although no finding names them: {rows[:2]!r}")
    for env, want in (({"TERM": "dumb"}, False), ({"TERM": "xterm", "NO_COLOR": "1"}, False),
                      ({"TERM": "xterm"}, True)):
        for cmd in (["check", "-R", root], ["fix", "-R", root]):
            _, text = run_pty(numastor, *cmd, cols=100, env=env)
            if ("\x1b[" in text) != want:
                fail(f"{' '.join(cmd[:1])} --color auto on a terminal with {env}: colour {'expected' if want else 'given'}")
    for when, want in (("always", True), ("never", False)):
        _, text, _ = run(numastor, "fix", "-R", root, "--color", when)
        if ("\x1b[" in text) != want:
            fail(f"fix --color {when}: colour {'missing' if want else 'given'}")
    print("PASS colour (offending rows, TERM=dumb, NO_COLOR, fix --color)")


def empty(numastor, tmp):
    # empty devices
    root = os.path.join(tmp, "vm-1n-virtio-blk")
    add_empty_loop(root)
    _, text, _ = run(numastor, "check", "-R", root)
    _, js, _ = run(numastor, "check", "-R", root, "--json")
    _, prom, _ = run(numastor, "check", "-R", root, "--format", "prometheus")
    shown = lambda t: re.search(r"^\s*loop7\b", t, re.M) is not None
    if shown(text) or "loop7" in [d["name"] for d in json.loads(js)["devices"]] or 'device="loop7"' in prom:
        fail("an empty loop7 is listed without -a (text, JSON or Prometheus)")
    if not re.search(r"\b1 empty not shown: -a\b", text):
        fail("the text does not say that one empty device is not shown")
    for args in (("-a",), ("--all",), ("loop7",)):
        _, text, _ = run(numastor, "check", "-R", root, *args)
        _, js, _ = run(numastor, "check", "-R", root, "--json", *args)
        if not shown(text) or "loop7" not in [d["name"] for d in json.loads(js)["devices"]]:
            fail(f"check {' '.join(args)}: the empty loop7 is not listed")
    _, prom, _ = run(numastor, "check", "-R", root, "--format", "prometheus", "-a")
    if 'device="loop7"' not in prom:
        fail("check --format prometheus -a: the empty loop7 is not listed")
    print("PASS empty devices hidden unless -a or named")


if __name__ == "__main__":
    sys.exit(main())
