#!/usr/bin/env python3
"""Output hygiene: a garbage corpus of strings sent through a fixture machine's files.

    check-hygiene.py NUMASTOR [CASE...]      (--list: the case names)

Each case writes ESC sequences, invalid UTF-8 (lone continuation bytes, overlong forms,
surrogates, code points past U+10FFFF, truncated sequences), C1 controls, bidi overrides,
NULs, carriage returns, huge values, or a `dev` of garbage into one kind of file of the
hba-megaraid-node1-irq-cpu0 fixture (irqbalance's cmdline: cloud-2n64c-8nvme-forced-node0; built by
tests/fixtures/gen-fixtures.py), replays it with
--sysroot and asserts, for check --json, fix --json, the text report (colour off and on) and
--format prometheus:

- JSON decodes as strict UTF-8 and validates under schema/numastor.schema.json (or
  numastor-fix.schema.json) including its patterns; a string from the machine equals the
  file's text with each invalid sequence replaced by U+FFFD;
- the text report is valid UTF-8 with no control byte but newline (with --color always, no
  ESC but numastor's own colours), no C1 control, no bidi override, and shows the value
  escaped as \\xNN;
- the Prometheus text passes `promtool check metrics` and is valid UTF-8 with no control byte
  but newline;
- a garbled `dev` gives devnum null and a note quoting the raw text escaped; every note is
  recorded escaped (\\xNN, no control character, no U+FFFD), whatever output shows it.

The schema's patterns are shown to bite first (a devnum, a PCI address and a cpulist of the
wrong form must fail it), so a pattern dropped from the schema fails this test too.
Scratch lives under $TMPDIR (default /dev/shm when it exists).
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
SCHEMA = json.load(open(os.path.join(TOP, "schema", "numastor.schema.json")))
FIX_SCHEMA = json.load(open(os.path.join(TOP, "schema", "numastor-fix.schema.json")))
FIXTURE = "hba-megaraid-node1-irq-cpu0"
# cases that need another machine: irqbalance running, a forced node (findings with evidence)
FIXTURE_OF = {"evidence": "cloud-2n64c-8nvme-forced-node0"}
SCRATCH = os.environ.get("TMPDIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)

# The corpus. Ends in a truncated sequence (\xc3), which no trailing-whitespace trim removes.
GARBAGE = (
    b"MR\x1b[31mEVIL\x1b]0;pwned\x07 \xff\xfe \xc0\xaf \xe0\x80\xaf \xed\xa0\x80 \xf4\x90\x80\x80"
    b" \xf0\x9f\x98 \xc2\x9b2J \xe2\x80\xaerev \x7f\r\x08\"q\"\\b caf\xc3\xa9 \xc3"
)
ONE_LINE = GARBAGE  # no newline: fits a udev data line
TWO_LINES = b"first\x1b[2K\nsecond\x1b[1A\xff"
NULS = b"MR\x00\x00EVIL\x00\x1b[5m"
HUGE = (b"X" * 97 + b"\x1b[H\xff") * 2000  # 200 KB

# numastor's own colours (cmd/text-report.h): the only ESC sequences --color always may emit
OWN_COLOURS = [b"\x1b[0m", b"\x1b[1m", b"\x1b[1;31m", b"\x1b[33m", b"\x1b[36m", b"\x1b[2m"]
# what no output may carry raw (a newline only between lines, never inside a value)
HIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
HIDDEN_IN_VALUE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def ref_text(data):
    """The text escaping, written independently of lib/base/escape.c: Python's strict decoder
    finds the invalid bytes, each shown as \\xNN like every byte of a hidden character."""
    out = []
    for ch in data.decode("utf-8", "backslashreplace"):
        if HIDDEN_IN_VALUE.match(ch):
            out.append("".join("\\x%02x" % b for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


def ref_json(data):
    """What a JSON string from the machine must hold: U+FFFD for each maximal invalid
    subpart (Python follows the same Unicode practice), NUL read as a space."""
    return data.replace(b"\0", b" ").decode("utf-8", "replace")


def ref_prom(data):
    return ref_text(data).replace("\\", "\\\\").replace('"', '\\"')


class Tree:
    def __init__(self, root, fixture=FIXTURE):
        self.root = root
        if fixture != FIXTURE:
            return
        self.scsi = self.one("sys/devices/pci*/*/*/host0/target*/[0-9]*:[0-9]*")
        self.pci = os.path.dirname(os.path.dirname(os.path.dirname(self.scsi)))
        self.disk = os.path.join(self.scsi, "block", "sda")

    def one(self, pattern):
        hits = glob.glob(os.path.join(self.root, pattern))
        assert len(hits) == 1, (pattern, hits)
        return hits[0]

    def write(self, path, data):
        path = path if os.path.isabs(path) else os.path.join(self.root, path)
        with open(path, "wb") as f:
            f.write(data + b"\n")

    def udev(self, key, value):
        path = os.path.join(self.root, "run/udev/data/b8:0")
        lines = open(path, "rb").read().split(b"\n")
        lines = [l for l in lines if not l.startswith(b"E:" + key + b"=")]
        lines.insert(0, b"E:" + key + b"=" + value)
        with open(path, "wb") as f:
            f.write(b"\n".join(lines))

    def relink(self, path, target):
        os.unlink(path)
        os.symlink(target, path)


# ---------------------------------------------------------------------------
# The cases: one kind of file each; `check` gets the outputs for its own assertions
# ---------------------------------------------------------------------------


def disk(doc):
    return doc["devices"][0]


def case_udev_model(t):
    t.udev(b"ID_MODEL", ONE_LINE)

    def check(o):
        assert disk(o.doc)["identity"]["model"] == ref_json(ONE_LINE), disk(o.doc)["identity"]["model"]
        assert flat(ref_text(ONE_LINE)) in o.text, "text report does not show the model escaped"
        assert 'model="%s"' % ref_prom(ONE_LINE) in o.prom, "prometheus model label not escaped as expected"

    return check


def case_udev_serial(t):
    t.udev(b"ID_SERIAL_SHORT", ONE_LINE)
    t.udev(b"ID_SERIAL", ONE_LINE)

    def check(o):
        assert disk(o.doc)["identity"]["serial"] == ref_json(ONE_LINE), disk(o.doc)["identity"]["serial"]
        assert flat("serial " + ref_text(ONE_LINE)) in o.text

    return check


def case_sysfs_model(t):
    os.unlink(os.path.join(t.root, "run/udev/data/b8:0"))
    t.write(os.path.join(t.scsi, "model"), TWO_LINES)

    def check(o):
        assert disk(o.doc)["identity"]["model"] == ref_json(TWO_LINES)
        assert flat(ref_text(TWO_LINES)) in o.text, "a newline inside a value must not start a line"

    return check


def case_nul_model(t):
    os.unlink(os.path.join(t.root, "run/udev/data/b8:0"))
    t.write(os.path.join(t.scsi, "model"), NULS)

    def check(o):
        assert disk(o.doc)["identity"]["model"] == ref_json(NULS), disk(o.doc)["identity"]["model"]

    return check


def case_huge_model(t):
    os.unlink(os.path.join(t.root, "run/udev/data/b8:0"))
    t.write(os.path.join(t.scsi, "model"), HUGE)

    def check(o):
        assert disk(o.doc)["identity"]["model"] == ref_json(HUGE)

    return check


def case_dev(t):
    raw = b"garb\x1b]0;t\x07age\xed\xa0\x80"
    t.write(os.path.join(t.disk, "dev"), raw)

    def check(o):
        d = disk(o.doc)
        assert d["devnum"] is None, "devnum must be null for a garbled dev, not %r" % d["devnum"]
        notes = [n for n in o.doc["notes"] if n["subject"] == "sda" and n["field"] == "devnum"]
        assert notes, "no note says why devnum is null"
        # the note quotes the raw text escaped (the same \xNN as the text report), not raw
        assert "'%s'" % ref_text(raw) in notes[0]["message"], notes[0]["message"]
        assert flat(ref_text(raw)) in o.text

    return check


def case_dev_numbers(t):
    # numbers that look almost right: each must be refused, none copied into devnum
    t.write(os.path.join(t.disk, "dev"), b"8:0:1")
    t.write(os.path.join(t.disk, "sda1", "dev"), b"08:01")

    def check(o):
        assert disk(o.doc)["devnum"] is None

    return check


def case_osrelease(t):
    t.write("proc/sys/kernel/osrelease", ONE_LINE)

    def check(o):
        assert o.doc["machine"]["kernel_release"] == ref_json(ONE_LINE)
        assert flat("kernel " + ref_text(ONE_LINE)) in o.text
        assert 'kernel="%s"' % ref_prom(ONE_LINE) in o.prom

    return check


def case_driver(t):
    name = b"mega\x1b[8mraid\xff"
    t.relink(os.path.join(t.pci, "driver"), b"../../../../bus/pci/drivers/" + name)

    def check(o):
        assert disk(o.doc)["paths"][0]["pci"]["driver"] == ref_json(name)
        assert flat("driver " + ref_text(name)) in o.text
        assert 'driver="%s"' % ref_prom(name) in o.prom

    return check


def case_scheduler(t):
    chosen = b"mq\x1b(B\xff-dl\x07\xc2\x9b"  # the reader shows the [selected] one
    t.write(os.path.join(t.disk, "queue", "scheduler"), b"none [" + chosen + b"] kyber")

    def check(o):
        assert disk(o.doc)["queue"]["scheduler"] == ref_json(chosen), disk(o.doc)["queue"]["scheduler"]
        assert flat("scheduler " + ref_text(chosen) + ",") in o.text

    return check


def case_irq_strings(t):
    t.write("sys/kernel/irq/96/actions", b"megasas0\x1b[2J\xff-msix0")
    t.write("sys/kernel/irq/96/chip_name", ONE_LINE)

    def check(o):
        irq = disk(o.doc)["paths"][0]["pci"]["irqs"][0]
        assert irq["chip"] == ref_json(ONE_LINE)
        assert irq["name"] == ref_json(b"megasas0\x1b[2J\xff-msix0")

    return check


def case_pci_ids(t):
    t.write(os.path.join(t.pci, "vendor"), b"0x10\x1b[0m\xff")
    t.write(os.path.join(t.pci, "device"), ONE_LINE)
    t.write(os.path.join(t.pci, "class"), TWO_LINES)

    def check(o):
        pci = disk(o.doc)["paths"][0]["pci"]
        for k in ("vendor", "device", "class"):  # ids of the wrong form: null with a note
            assert pci[k] is None, (k, pci[k])
            notes = [n for n in o.doc["notes"] if n["subject"] == pci["address"] and n["field"] == "pci." + k]
            assert notes and "garbled value" in notes[0]["message"], (k, notes)
        assert flat("[?:?]") in o.text

    return check


def case_pci_name(t, new="0000:81:0.0"):
    # a PCI function's directory named in a form the kernel never prints ("%04x:%02x:%02x.%d"
    # is its only form): not taken for a PCI function, so no address outside the schema's form
    old = os.path.basename(t.pci)
    os.rename(t.pci, os.path.join(os.path.dirname(t.pci), new))
    for dirpath, dirnames, filenames in os.walk(os.path.join(t.root, "sys")):
        for n in dirnames + filenames:
            path = os.path.join(dirpath, n)
            if os.path.islink(path) and old in os.readlink(path):
                t.relink(path, os.readlink(path).replace(old, new))

    def check(o):
        pcis = [p["pci"]["address"] for d in o.doc["devices"] for p in d["paths"] if p["pci"]]
        assert new not in pcis, pcis

    return check


def case_pci_name_upper(t):
    return case_pci_name(t, "0000:81:0A.0")  # hex digits, but capitals: never the kernel's


def case_srcversion(t):
    t.write("sys/module/megaraid_sas/srcversion", ONE_LINE)

    def check(o):
        mod = disk(o.doc)["paths"][0]["pci"]["module"]
        assert mod["srcversion"] == ref_json(ONE_LINE), mod["srcversion"]

    return check


def case_garbled_number(t):
    # a number's raw text is quoted in its note (numbers' readers pass it on as it is)
    t.write(os.path.join(t.disk, "size"), b"12\x1b[31m34\xff\xc0\xaf")
    t.write(os.path.join(t.disk, "queue", "nr_requests"), HUGE)

    def check(o):
        msgs = [n["message"] for n in o.doc["notes"] if n["subject"] == "sda"]
        size = [m for m in msgs if "/size " in m]
        assert size and "'12\\x1b[31m34\\xff\\xc0\\xaf'" in size[0], msgs
        # a huge raw value is quoted short, cut between escapes
        nr = [m for m in msgs if "nr_requests" in m]
        assert nr and len(nr[0]) < 400, nr

    return check


def case_evidence(t):
    # irqbalance's --policyscript (its cmdline) goes into irqbalance-confines' evidence, a
    # json-c object findings.c builds: check --json must make it valid too
    script = b"/etc/p\x1b[31m\xff\xc0\xaf\xe2\x80\xae"
    with open(os.path.join(t.root, "proc/812/cmdline"), "wb") as f:
        f.write(b"/usr/sbin/irqbalance\0--foreground\0--policyscript=" + script + b"\0")

    def check(o):
        want = ref_json(script)
        assert o.doc["machine"]["irqbalance"]["policyscript"] == want, o.doc["machine"]["irqbalance"]
        ev = [f["evidence"] for f in o.doc["findings"] if f["id"] == "irqbalance-confines"]
        assert ev and ev[0]["policyscript"] == want, ev
        assert flat(ref_text(script)) in o.text

    return check


def case_all(t):
    # every garbage at once (the sysfs model ones need the udev data gone, so not those);
    # a garbled dev hides the udev data, so their own checks are left to their cases
    skip = ("all", "sysfs-model", "nul-model", "huge-model", "dev-numbers", "pci-name", "pci-name-upper", *FIXTURE_OF)
    checks = {n: f(t) for n, f in CASES.items() if n not in skip}

    def check(o):
        for n in ("dev", "osrelease", "driver", "scheduler", "irq-strings", "garbled-number"):
            checks[n](o)

    return check


CASES = {
    "udev-model": case_udev_model,
    "udev-serial": case_udev_serial,
    "sysfs-model": case_sysfs_model,
    "nul-model": case_nul_model,
    "huge-model": case_huge_model,
    "dev": case_dev,
    "dev-numbers": case_dev_numbers,
    "osrelease": case_osrelease,
    "driver": case_driver,
    "scheduler": case_scheduler,
    "irq-strings": case_irq_strings,
    "pci-ids": case_pci_ids,
    "pci-name": case_pci_name,
    "pci-name-upper": case_pci_name_upper,
    "srcversion": case_srcversion,
    "garbled-number": case_garbled_number,
    "evidence": case_evidence,
    "all": case_all,
}


# ---------------------------------------------------------------------------
# Running and the general assertions
# ---------------------------------------------------------------------------


class Outputs:
    pass


def run(numastor, *args):
    p = subprocess.run([numastor, *args], capture_output=True, timeout=60)
    assert p.returncode <= 3, "%s exited %d" % (" ".join(args), p.returncode)
    assert b"AddressSanitizer" not in p.stderr and b"runtime error" not in p.stderr, p.stderr[:2000]
    return p.returncode, p.stdout


def strict_json(raw, schema, what):
    try:
        text = raw.decode("utf-8")  # strict: overlongs, surrogates, > U+10FFFF all refused
    except UnicodeDecodeError as e:
        raise AssertionError("%s is not valid UTF-8: %s" % (what, e))
    doc = json.loads(text)
    try:
        schemas.validate(doc, schema)
    except jsonschema.ValidationError as e:
        raise AssertionError("%s fails its schema at %s: %s" % (what, "/".join(map(str, e.absolute_path)), e.message[:300]))
    return doc


def flat(text):
    """The report's words with its wrapping undone: every run of whitespace one space (a value
    that wraps at the width is still shown whole)."""
    return re.sub(r"\s+", " ", text)


def clean_text(raw, what, colours=()):
    for c in colours:
        raw = raw.replace(c, b"")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AssertionError("%s is not valid UTF-8: %s" % (what, e))
    bad = HIDDEN.search(text)
    assert not bad, "%s has a raw control character %r near %r" % (what, bad.group(), text[max(0, bad.start() - 40) : bad.end() + 10])
    return text


def outputs(numastor, root):
    o = Outputs()
    code, raw = run(numastor, "check", "--sysroot", root, "--json")
    assert code != 3, "check --json could not check"
    o.doc = strict_json(raw, SCHEMA, "check --json")
    for n in o.doc["notes"]:  # recorded escaped: the same \xNN in every output, nothing raw
        for k in ("subject", "field", "message"):
            bad = HIDDEN_IN_VALUE.search(n[k]) or re.search("\ufffd", n[k])
            assert not bad, "a note's %s is not escaped: %r" % (k, n[k])
    # --verbose shows every value the machine gave (the default report only some)
    _, raw = run(numastor, "check", "--sysroot", root, "--color", "never", "--verbose")
    o.text = flat(clean_text(raw, "the text report"))
    _, raw = run(numastor, "check", "--sysroot", root, "--color", "never")
    clean_text(raw, "the default text report")
    for args in ((), ("--verbose",)):
        _, raw = run(numastor, "check", "--sysroot", root, "--color", "always", *args)
        clean_text(raw, "the text report in colour", OWN_COLOURS)
    _, raw = run(numastor, "check", "--sysroot", root, "--format", "prometheus")
    o.prom = clean_text(raw, "the prometheus text")
    p = subprocess.run(["promtool", "check", "metrics"], input=raw, capture_output=True, timeout=60)
    assert p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(), "promtool: %s" % (p.stdout + p.stderr)[:500]
    _, raw = run(numastor, "fix", "--sysroot", root, "--json")
    strict_json(raw, FIX_SCHEMA, "fix --json")
    _, raw = run(numastor, "fix", "--sysroot", root)
    clean_text(raw, "fix's text")
    _, raw = run(numastor, "fix", "--sysroot", root, "--verbose")  # each vector's name (issue 32)
    clean_text(raw, "fix's --verbose text")
    return o


def schema_bites(base_doc):
    """The patterns are in force: a document with a value of the wrong form must fail."""
    bad = [
        ("devnum", lambda d: disk(d).__setitem__("devnum", "garb\x1bage")),
        ("devnum", lambda d: disk(d).__setitem__("devnum", "8:0:1")),
        ("pci address", lambda d: disk(d)["paths"][0]["pci"].__setitem__("address", "0000:81:00.8")),
        ("cpulist", lambda d: disk(d).__setitem__("local_cpus", "0-3,")),
        ("pci vendor", lambda d: disk(d)["paths"][0]["pci"].__setitem__("vendor", "0x10\x1b")),
        ("pci class", lambda d: disk(d)["paths"][0]["pci"].__setitem__("class", "0x0104")),
        ("controller", lambda d: disk(d)["paths"][0].__setitem__("controller", "host0\x1b")),
    ]
    for what, spoil in bad:
        d = json.loads(json.dumps(base_doc))
        spoil(d)
        try:
            schemas.validate(d, SCHEMA)
        except jsonschema.ValidationError:
            continue
        raise AssertionError("the schema accepts a %s of the wrong form" % what)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--list":
        print("\n".join(CASES))
        return 0
    if not args:
        print(__doc__)
        return 2
    numastor = os.path.abspath(args[0])
    names = args[1:] or list(CASES)
    for n in names:
        if n not in CASES:
            print("unknown case %s (--list)" % n)
            return 2
    if not shutil.which("promtool"):
        print("FAIL: promtool is needed (prometheus package)")
        return 1
    failed = 0
    with tempfile.TemporaryDirectory(prefix="numastor-hygiene.", dir=SCRATCH) as tmp:
        fixtures = sorted({FIXTURE, *(FIXTURE_OF[n] for n in names if n in FIXTURE_OF)})
        subprocess.run([sys.executable, GEN, os.path.join(tmp, "base"), *fixtures], check=True, stdout=subprocess.DEVNULL)
        base = os.path.join(tmp, "base", FIXTURE)
        try:  # the clean machine passes the same assertions, and the schema bites
            o = outputs(numastor, base)
            assert disk(o.doc)["devnum"] == "8:0", disk(o.doc)["devnum"]
            schema_bites(o.doc)
            print("PASS clean")
        except (AssertionError, KeyError, IndexError, TypeError, ValueError) as e:
            print("FAIL clean: %s: %s" % (type(e).__name__, e))
            failed += 1
        for n in names:
            root = os.path.join(tmp, n)
            fixture = FIXTURE_OF.get(n, FIXTURE)
            shutil.copytree(os.path.join(tmp, "base", fixture), root, symlinks=True)
            try:
                check = CASES[n](Tree(root, fixture))
                check(outputs(numastor, root))
                print("PASS " + n)
            except (AssertionError, KeyError, IndexError, TypeError, ValueError) as e:
                print("FAIL %s: %s: %s" % (n, type(e).__name__, str(e)[:1500]))
                failed += 1
            shutil.rmtree(root)
    print("hygiene: %d cases, %d failed" % (len(names) + 1, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
