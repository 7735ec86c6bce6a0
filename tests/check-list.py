#!/usr/bin/env python3
"""numastor check --list and device arguments (issue 12, parts 2 and 3).

Every column of the one table (cmd/columns.c, as `check --help` prints it) is listed with -o
on several fixture machines and its value compared with what the same fixture's JSON report
(`check --json`) says, computed here from the report, never written down by hand; the forms
(-n, -r, -P, --json and its schema) have their shapes asserted; device arguments (/dev/X, X,
by-id links under a sysroot, partitions, duplicates, bad names); and --help, the man page's
COLUMNS section and the bash/zsh/fish completions list exactly the table's columns.

    check-list.py NUMASTOR [CASE...]

CASE narrows the run (a mutant's kill command names the cases that kill it; no CASE runs them
all): `docs` (--help, the man page, the schema, the completions), `fixtures` (every column on
every fixture), a fixture's name (that part on that fixture only), `options` (-o's forms and
errors, escaping), `devices` (device arguments). NUMASTOR_FAIL_FAST=1 stops at the first failure.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..")
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
SCHEMA = json.load(open(os.path.join(TOP, "schema", "numastor-list.schema.json")))
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
FIXTURES = [
    "cloud-2n64c-8nvme-forced-node0",
    "baremetal-2s-4nvme-healthy",
    "hba-megaraid-node1-irq-cpu0",
    "vm-1n-virtio-blk",
    "nvme-multipath-2ctrl-2nodes",
    "hba-mpt3sas-61-managed-unknown",
    "broken-inputs",
]
SEVERITY = {"info": 0, "warning": 1, "critical": 2}

fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)
    if os.environ.get("NUMASTOR_FAIL_FAST") == "1":  # tests/mutation/run.sh: the first one ends it
        sys.exit(1)


def run(numastor, *args):
    return subprocess.run([numastor, *args], capture_output=True, text=True)


# --- the table, as --help prints it -------------------------------------------------------


def help_columns(numastor):
    """[(NAME, description)] of check --help's column list, and the default columns."""
    out = run(numastor, "check", "--help").stdout
    cols, on, default = [], False, None
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Columns of --list"):
            on = True
            # the default columns close the heading: "...default\nNAME,TRAN,...):"
            m = re.search(r"([A-Z,]+)\):$", line) or re.search(r"^([A-Z,]+)\):$", lines[i + 1])
            default = m.group(1).split(",") if m else None
            continue
        if on:
            m = re.match(r"^  ([A-Z]+) +(\S.*)$", line)
            if m:
                cols.append((m.group(1), m.group(2)))
    return cols, default


# --- what each column must say, from the JSON report --------------------------------------


def uniq(seq):
    out = []
    for v in seq:
        if v is not None and v not in out:
            out.append(v)
    return out


def pcis(d):
    out, seen = [], set()
    for p in d["paths"]:
        if p["pci"] and p["pci"]["address"] not in seen:
            seen.add(p["pci"]["address"])
            out.append(p["pci"])
    return out


def judged(irq):
    """(counts by node, total) as the fire-location rule judges them (lib/read/rates.h)."""
    basis = irq["count_basis"]
    if basis == "since-boot":
        return {c["node"]: c["count"] for c in irq["counts_by_node"]}, irq["total_count"]
    if basis == "since-fix":
        c = {x["node"]: x["count"] for x in irq["counts_since_fix_by_node"]}
        return c, sum(c.values())
    assert basis == "none", f"count basis {basis} is not computed by this test"
    return None, 0


def fires(doc, d):
    irqs = {i["irq"]: i for p in pcis(d) for i in p["irqs"]}
    cpu_nodes = {n["node"] for n in doc["machine"]["nodes"] if n["cpus"]}
    on = total_all = 0
    seen = set()
    for q in d["hw_queues"]:
        if q["irq"] is None or q["irq"] in seen:
            continue
        counts, total = judged(irqs[q["irq"]])
        if not counts or not total:
            continue
        seen.add(q["irq"])
        if cpu_nodes <= set(q["nodes"]):
            if d["node"] is None:
                continue
            ref = {d["node"]}
        else:
            ref = set(q["nodes"])
        on += sum(c for n, c in counts.items() if n in ref)
        total_all += total
    return int(on * 1000 / total_all) / 10 if total_all else None


def expected(doc, d):
    """{json key: value} of every column for device d of report doc."""
    ps = pcis(d)
    irqs = [i for p in ps for i in p["irqs"]]
    ids = uniq(f["id"] for f in doc["findings"] if f["device"] == d["name"])
    sevs = [SEVERITY[f["severity"]] for f in doc["findings"] if f["device"] == d["name"]]
    joined = lambda v: ",".join(v) if v else None
    return {
        "name": d["name"],
        "kind": d["kind"],
        "tran": joined(uniq(p["transport"] for p in d["paths"] if p["transport"] != "other")),
        "pci": joined([p["address"] for p in ps]),
        "driver": joined(uniq(p["driver"] for p in ps)),
        "node": d["node"],
        "source": d["node_source"],
        "cpus": d["local_cpus"] or None,
        "irqs": len(irqs) if ps else None,
        "managed": (None if not irqs or any(i["managed"] is None for i in irqs)
                    else sum(1 for i in irqs if i["managed"])),
        "fires": fires(doc, d),
        "queues": len(d["hw_queues"]),
        "findings": ids,
        "severity": [k for k, v in SEVERITY.items() if sevs and v == max(sevs)][0] if sevs else None,
        "size": d["size_bytes"],
        "model": d["identity"]["model"],
        "serial": d["identity"]["serial"],
        "by_id": d["identity"]["by_id"],
    }


def key_of(col):
    return "by_id" if col == "BYID" else col.lower()


def text_of(v, pairs=False):
    """A value as --raw / --pairs print it (before escaping)."""
    if v is None or v == []:
        return "" if pairs else "-"
    if isinstance(v, list):
        return ",".join(v)
    if isinstance(v, float):
        return "%.1f%%" % v
    return str(v)


def raw_escape(s):
    return "".join("\\x%02x" % b if b <= 0x20 or b >= 0x7F or b == 0x5C else chr(b) for b in s.encode())


def pairs_escape(s):
    return "".join("\\x%02x" % b if b < 0x20 or b >= 0x7F or chr(b) in '\\"`$' else chr(b) for b in s.encode())


# --- the checks ---------------------------------------------------------------------------


def check_fixture(numastor, root, name, cols, default):
    names = [c for c, _ in cols]
    rep = run(numastor, "check", "--sysroot", root, "--json")
    doc = json.loads(rep.stdout)
    want = [expected(doc, d) for d in doc["devices"]]
    devs = [d["name"] for d in doc["devices"]]

    # --list --json with every column: typed values, the schema, each value as the report says
    r = run(numastor, "check", "--sysroot", root, "--list", "--json", "-o", ",".join(names))
    if r.returncode != rep.returncode:
        fail(f"{name}: --list --json exit {r.returncode}, the report's is {rep.returncode}")
    lst = json.loads(r.stdout)
    try:
        schemas.validate(lst, SCHEMA)
    except jsonschema.ValidationError as e:
        fail(f"{name}: --list --json does not validate against numastor-list.schema.json: {e.message}")
    got_names = [row.get("name") for row in lst["devices"]]
    if got_names != devs:
        fail(f"{name}: --list --json devices {got_names}, the report's {devs}")
    for row, w in zip(lst["devices"], want):
        if list(row) != [key_of(c) for c in names]:
            fail(f"{name}: --list --json keys {list(row)}, expected the columns asked for in order")
        for c in names:
            k = key_of(c)
            if row.get(k) != w[k]:
                fail(f"{name} {w['name']}: column {c} is {row.get(k)!r} in --list --json, the report says {w[k]!r}")

    # each column alone with -o (any case), raw and pairs: the same values as text
    for c in names:
        r = run(numastor, "check", "--sysroot", root, "-o", c.lower(), "-r", "-n")
        lines = r.stdout.splitlines()
        exp = [raw_escape(text_of(w[key_of(c)])) for w in want]
        if lines != exp:
            fail(f"{name}: -o {c.lower()} -r -n gave {lines}, the report says {exp}")
    r = run(numastor, "check", "--sysroot", root, "-P", "-o", ",".join(names))
    for line, w in zip(r.stdout.splitlines(), want):
        if not re.fullmatch(r'[A-Z]+="[^"]*"( [A-Z]+="[^"]*")*', line):
            fail(f"{name}: -P line is not KEY=\"value\" pairs: {line!r}")
            continue
        got = dict(kv.split("=", 1) for kv in shlex.split(line))
        if list(got) != names:
            fail(f"{name}: -P keys {list(got)}, expected {names}")
        for c in names:
            # shlex unquoted the value; the \xNN escapes stay as printed
            e = pairs_escape(text_of(w[key_of(c)], pairs=True))
            if got.get(c) != e:
                fail(f"{name} {w['name']}: -P {c}={got.get(c)!r}, the report says {e!r}")
    if len(r.stdout.splitlines()) != len(devs):
        fail(f"{name}: -P printed {len(r.stdout.splitlines())} lines for {len(devs)} devices")

    # the default listing: heading = the default columns, one aligned line per device
    r = run(numastor, "check", "--sysroot", root, "--list")
    lines = r.stdout.splitlines()
    if not lines or lines[0].split() != default:
        fail(f"{name}: --list heading {lines[:1]}, expected the default columns {default}")
    elif len(lines) != len(devs) + 1:
        fail(f"{name}: --list printed {len(lines)} lines for {len(devs)} devices and a heading")
    else:
        head = lines[0]
        starts = [m.start() for m in re.finditer(r"\S+", head)]
        for line, w in zip(lines[1:], want):
            # left-aligned columns start where their heading does; every cell is there
            for col, at in zip(default, starts):
                if col in ("NAME", "TRAN", "PCI", "SOURCE", "CPUS"):
                    cell = text_of(w[key_of(col)])
                    if line[at:at + len(cell)] != cell or (at and line[at - 1] != " "):
                        fail(f"{name}: --list column {col} of {w['name']} is not aligned under its heading: {line!r}")
    r = run(numastor, "check", "--sysroot", root, "--list", "-n")
    if r.stdout.splitlines() != lines[1:]:
        fail(f"{name}: --list -n is not --list without its heading")
    r = run(numastor, "check", "--sysroot", root, "-r")
    for line in r.stdout.splitlines():
        if len(line.split(" ")) != len(default):
            fail(f"{name}: -r line has {len(line.split(' '))} fields, not {len(default)}: {line!r}")
    if r.stdout.splitlines()[:1] != [" ".join(default)]:
        fail(f"{name}: -r heading {r.stdout.splitlines()[:1]}")
    return doc


def check_options(numastor, root, cols, default):
    names = [c for c, _ in cols]
    # +COL appends to the defaults; case does not matter
    r = run(numastor, "check", "--sysroot", root, "-o", "+size,Model")
    if r.stdout.splitlines()[0].split() != default + ["SIZE", "MODEL"]:
        fail(f"-o +size,Model heading {r.stdout.splitlines()[:1]}")
    for bad in ("NAME,BOGUS", "bogus", "NAME,,NODE", ""):
        r = run(numastor, "check", "--sysroot", root, "-o", bad)
        err = r.stderr.splitlines()
        if r.returncode != 3 or r.stdout or len(err) != 2 or "Try 'numastor check --help'." != err[1]:
            fail(f"-o {bad!r}: exit {r.returncode}, stderr {err}: expected one line, the pointer to --help, exit 3")
            continue
        word = [w for w in bad.split(",") if w.upper() not in names]
        if word and word[0] and f"'{word[0]}'" not in err[0]:
            fail(f"-o {bad!r}: the error does not name the column: {err[0]}")
        if not all(n in err[0] for n in names):
            fail(f"-o {bad!r}: the error does not list every valid column: {err[0]}")
    r = run(numastor, "check", "--sysroot", root, "-o", "/var/lib/node_exporter/numastor.prom")
    if r.returncode != 3 or "--output-file" not in r.stderr or "columns" not in r.stderr:
        fail(f"-o FILE: exit {r.returncode}, {r.stderr!r}: expected the pointer to --output-file")
    r = run(numastor, "check", "--sysroot", root, "-r", "-P")
    if r.returncode != 3 or len(r.stderr.splitlines()) != 2:
        fail(f"-r -P: exit {r.returncode}, {r.stderr!r}: expected a usage error")

    # -r and -P escape what the machine said as lsblk does; the aligned form as the text report
    tree = os.path.join(os.path.dirname(root), "escapes")
    shutil.copytree(root, tree, symlinks=True)
    db = os.path.join(tree, "run", "udev", "data", "b8:0")
    txt = open(db).read()
    txt = re.sub(r"E:ID_MODEL=.*", 'E:ID_MODEL=MR 9361 "8i"\\\\$x\tq', txt)
    open(db, "w").write(txt)
    model = 'MR 9361 "8i"\\$x\tq'
    r = run(numastor, "check", "--sysroot", tree, "-r", "-n", "-o", "NAME,MODEL")
    want = "sda " + raw_escape(model)
    if r.stdout.splitlines() != [want] or want != "sda MR\\x209361\\x20\"8i\"\\x5c$x\\x09q":
        fail(f"-r escaping: {r.stdout!r}, expected {want!r}")
    r = run(numastor, "check", "--sysroot", tree, "-P", "-o", "NAME,MODEL")
    want = 'NAME="sda" MODEL="MR 9361 \\x228i\\x22\\x5c\\x24x\\x09q"'
    if r.stdout.splitlines() != [want]:
        fail(f"-P escaping: {r.stdout!r}, expected {want!r}")
    r = run(numastor, "check", "--sysroot", tree, "-n", "-o", "MODEL")
    if r.stdout.splitlines() != ['MR 9361 "8i"\\$x\\x09q']:
        fail(f"aligned --list escaping: {r.stdout!r}")
    r = run(numastor, "check", "--sysroot", tree, "--list", "--json", "-o", "MODEL")
    if json.loads(r.stdout)["devices"] != [{"model": model}]:
        fail(f"--list --json model: {r.stdout!r}")


def listed(numastor, root, *devs):
    r = run(numastor, "check", "--sysroot", root, "-n", "-o", "NAME", *devs)
    return r.stdout.split(), r


def check_devices(numastor, vm, hba):
    vm_doc = json.loads(run(numastor, "check", "--sysroot", vm, "--json").stdout)
    by_id = {d["name"]: d["identity"]["by_id"] for d in vm_doc["devices"]}
    cases = [
        (vm, ["vda"], ["vda"]),
        (vm, ["/dev/vda"], ["vda"]),
        (vm, [by_id["vda"]], ["vda"]),  # under a sysroot: the udev database's S: line
        (vm, [by_id["sda"]], ["sda"]),
        (vm, ["/dev/disk/by-id/test-link"], ["zram0"]),  # the tree's own dev/ link
        (vm, ["/dev/vdisk"], ["vda"]),  # an alias link at the top of the tree's dev/
        (vm, ["/dev/vol-alias"], ["vda"]),  # an alias only the udev database knows
        (vm, ["/dev/disk/by-id/virtio-vol-root-part1"], ["vda"]),  # a partition's link
        (vm, ["vda1"], ["vda"]),
        (vm, ["/dev/vda2"], ["vda"]),
        # the same disk by name, path, link and partition: once; the report's order
        (vm, ["vda", "/dev/vda", by_id["vda"], "vda1", "/dev/vda2"], ["vda"]),
        (vm, ["vda", "sda", "vda"], ["sda", "vda"]),
        (hba, ["sda1", "/dev/sda", "sda"], ["sda"]),
    ]
    for root, args, want in cases:
        got, r = listed(numastor, root, *args)
        if got != want or r.returncode not in (0, 1, 2):
            fail(f"devices {args}: listed {got} (exit {r.returncode}, {r.stderr.strip()!r}), expected {want}")
    # a partition stands for its disk, with a note saying so: in the report, on stderr, in --list --json
    r = run(numastor, "check", "--sysroot", vm, "--json", "vda1")
    doc = json.loads(r.stdout)
    notes = [n for n in doc["notes"] if n["field"] == "device-argument"]
    if [d["name"] for d in doc["devices"]] != ["vda"] or len(notes) != 1 or "vda1 is a partition of vda" not in notes[0]["message"]:
        fail(f"check --json vda1: devices {[d['name'] for d in doc['devices']]}, notes {notes}")
    r = run(numastor, "check", "--sysroot", vm, "--list", "vda1")
    if "vda1 is a partition of vda" not in r.stderr:
        fail(f"check --list vda1: no note on stderr ({r.stderr!r})")
    r = run(numastor, "check", "--sysroot", vm, "--list", "--json", "vda1")
    lst = json.loads(r.stdout)
    schemas.validate(lst, SCHEMA)
    if not any("vda1 is a partition of vda" in n["message"] for n in lst["notes"]):
        fail(f"check --list --json vda1: no note ({lst['notes']})")
    r = run(numastor, "check", "--sysroot", vm, "vda")
    if "partition" in r.stderr:
        fail(f"check vda: a partition note for a disk ({r.stderr!r})")
    # names that are none of these: one line, exit 3, nothing on stdout
    for bad in ("nosuchdisk", "/dev/nosuchdisk", "/dev/disk/by-id/nosuch", "vda9", "../vda", "/dev/../vda", ".", "..",
                "sys/block/vda", ""):
        for extra in ([], ["--list"]):
            r = run(numastor, "check", "--sysroot", vm, *extra, "vda", bad)
            err = r.stderr.splitlines()
            if r.returncode != 3 or r.stdout or len(err) != 1 or "no block device named" not in err[0]:
                fail(f"device {bad!r} {extra}: exit {r.returncode}, stdout {r.stdout[:80]!r}, stderr {err}: "
                     "expected one line, exit 3")


def check_docs(numastor, cols, default):
    names = [c for c, _ in cols]
    if not names:
        fail("check --help lists no columns")
        return
    if default is None or not set(default) <= set(names):
        fail(f"check --help's default columns {default} are not all in the table")
    for line in run(numastor, "check", "--help").stdout.splitlines():
        if len(line) > 80 and not line.startswith("  -"):
            fail(f"check --help line over 80 columns: {line!r}")
    # the man page's COLUMNS section: exactly the table, in its order, with its descriptions
    scd = open(os.path.join(TOP, "man", "numastor-check.8.scd")).read()
    m = re.search(r"^# COLUMNS\n(.*?)^# ", scd, re.S | re.M)
    if not m:
        fail("man/numastor-check.8.scd has no COLUMNS section")
    else:
        man = re.findall(r"^\*([A-Z]+)\*\n\t(.*)$", m.group(1), re.M)
        if man != cols:
            fail(f"man COLUMNS {man} differ from the table (check --help) {cols}")
        if ",".join(default or []) not in m.group(1):
            fail("man COLUMNS does not state the default columns")
    # the JSON keys: the schema knows exactly the table's columns
    props = SCHEMA["properties"]["devices"]["items"]["properties"]
    if set(props) != {key_of(c) for c in names}:
        fail(f"schema device properties {sorted(props)} differ from the table's {sorted(key_of(c) for c in names)}")

    # bash: driven for real
    def complete(*words):
        script = '''
            source /usr/share/bash-completion/bash_completion
            source "$0"
            COMP_WORDS=("${@}")
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            COMP_LINE="${COMP_WORDS[*]}"
            COMP_POINT=${#COMP_LINE}
            _numastor numastor "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
            printf "%s\\n" "${COMPREPLY[@]}"
        '''
        bash = os.path.join(TOP, "completions", "numastor.bash")
        return subprocess.run(["bash", "-c", script, bash, *words], capture_output=True, text=True).stdout.split()

    if not os.path.exists("/usr/share/bash-completion/bash_completion"):
        fail("bash-completion is not installed: the completion cannot be driven")
    else:
        for opt in ("-o", "--output"):
            got = complete("numastor", "check", opt, "")
            if sorted(got) != sorted(names):
                fail(f"bash completion of 'check {opt}' offers {got}, the table has {names}")
        for cur, want in (("na", ["NAME"]), ("NAME,tr", ["NAME,TRAN"]), ("+si", ["+SIZE"]),
                          ("+SIZE,MO", ["+SIZE,MODEL"])):
            got = complete("numastor", "check", "-o", cur)
            if got != want:
                fail(f"bash completion of '-o {cur}' gave {got}, expected {want}")
    zsh = open(os.path.join(TOP, "completions", "_numastor")).read()
    m = re.search(r"\{-o,--output\}'\[the columns of --list\]:columns:_sequence compadd - ([A-Z ]+)'", zsh)
    if not m or m.group(1).split() != names:
        fail(f"zsh completion's columns {m.group(1).split() if m else None} differ from the table {names}")
    fish = open(os.path.join(TOP, "completions", "numastor.fish")).read()
    m = re.search(r"-s o -l output -x -a '([A-Z ]+)'", fish)
    if not m or m.group(1).split() != names:
        fail(f"fish completion's columns {m.group(1).split() if m else None} differ from the table {names}")


# --- what a list reads: its columns' files, and judges only when it shows findings --------------

PER_IRQ = re.compile(r"(^|/)proc/irq/|(^|/)sys/kernel/irq/|/msi_irqs(/|$)|(^|/)sys/kernel/debug/irq/")
PER_QUEUE = re.compile(r"/mq(/|$)|/queue/(rq_affinity|nr_requests|scheduler)$|(^|/)sys/kernel/debug/block/")


def opened(numastor, root, *args):
    """The paths the check opens (strace: openat, openat2), relative to its root, and its exit.
    LeakSanitizer cannot run under ptrace (a sanitizer build would abort at exit): off for these."""
    no_leaks = ":".join(o for o in [os.environ.get("ASAN_OPTIONS", ""), "detect_leaks=0"] if o)
    with tempfile.NamedTemporaryFile(prefix="numastor-list-reads.", dir=SCRATCH) as log:
        r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat,openat2", "-o", log.name, numastor, "check",
                            "--sysroot", root, *args], capture_output=True, text=True,
                           env=dict(os.environ, NUMASTOR_THREADS="1", ASAN_OPTIONS=no_leaks))
        paths = re.findall(r'openat2?\([^,]*, "([^"]*)"', open(log.name).read())
    return [p for p in paths if not p.startswith("/")], r.returncode


def check_reads(numastor, root, name):
    rep = run(numastor, "check", "--sysroot", root, "--json")
    cases = (
        # columns, reads per-IRQ files, reads per-queue files
        ("NAME,PCI,NODE", False, False),  # lstopo's job: the device-to-node map
        ("NAME,KIND,TRAN,DRIVER,SOURCE,CPUS,SIZE", False, False),
        ("NAME,IRQS", True, False),
        ("NAME,MANAGED", True, False),
        ("NAME,QUEUES", False, True),
        ("NAME,FIRES", True, True),
        ("NAME,SEVERITY", True, True),  # it judges: everything, as --json
    )
    for cols, irqs, queues in cases:
        paths, code = opened(numastor, root, "-l", "-o", cols)
        got_irqs = any(PER_IRQ.search(p) for p in paths)
        got_queues = any(PER_QUEUE.search(p) for p in paths)
        if (got_irqs, got_queues) != (irqs, queues):
            fail(f"{name}: -l -o {cols} reads per-IRQ files: {got_irqs} (expected {irqs}), per-queue files: "
                 f"{got_queues} (expected {queues})")
        judges = "FINDINGS" in cols or "SEVERITY" in cols
        want = rep.returncode if judges else 0
        if code != want:
            fail(f"{name}: -l -o {cols} exits {code}, expected {want} "
                 f"({'the report' if judges else 'a list that judges nothing lists'}; the report exits {rep.returncode})")
    return rep.returncode


PARTS = ("docs", "fixtures", "options", "devices", "reads")


def main():
    numastor = os.path.abspath(sys.argv[1])
    cases = sys.argv[2:]
    unknown = [c for c in cases if c not in PARTS and c not in FIXTURES]
    if unknown:
        print(f"check-list.py: no such case {unknown}: a part {list(PARTS)} or one of the fixtures {FIXTURES}")
        sys.exit(2)
    parts = set(PARTS) if not cases else {c for c in cases if c in PARTS}
    names = [n for n in FIXTURES if n in cases]
    if names or "fixtures" in parts:
        parts.add("fixtures")
        names = names or FIXTURES
    cols, default = help_columns(numastor)
    if "docs" in parts:
        check_docs(numastor, cols, default)
    if not parts & {"fixtures", "options", "devices", "reads"}:
        return finish(cols, parts)
    hba_name, vm_name = "hba-megaraid-node1-irq-cpu0", "vm-1n-virtio-blk"
    need = set(names)
    need |= {hba_name} if "options" in parts else set()
    need |= {hba_name, vm_name} if "devices" in parts else set()
    need |= {hba_name, "nvme-multipath-2ctrl-2nodes"} if "reads" in parts else set()
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        fx = os.path.join(tmp, "fx")
        subprocess.run([sys.executable, GEN, fx, *[n for n in FIXTURES if n in need]], check=True)
        for name in names:
            check_fixture(numastor, os.path.join(fx, name), name, cols, default)
        hba = os.path.join(fx, hba_name)
        vm = os.path.join(fx, vm_name)
        if "options" in parts:
            check_options(numastor, hba, cols, default)
        if "reads" in parts:
            if shutil.which("strace"):
                codes = [check_reads(numastor, os.path.join(fx, n), n) for n in (hba_name, "nvme-multipath-2ctrl-2nodes")]
                if not any(codes):
                    fail("reads: every report exits 0, so the exit statuses prove nothing: a fixture with findings")
            else:
                fail("reads: strace is not installed (tools/install-deps installs it)")
        if "devices" in parts:
            # a link the tree holds itself, and a partition's link only the udev database knows
            os.makedirs(os.path.join(vm, "dev", "disk", "by-id"))
            os.symlink("../../zram0", os.path.join(vm, "dev", "disk", "by-id", "test-link"))
            os.symlink("vda", os.path.join(vm, "dev", "vdisk"))
            with open(os.path.join(vm, "run", "udev", "data", "b254:0"), "a") as f:
                f.write("S:vol-alias\n")
            with open(os.path.join(vm, "run", "udev", "data", "b254:1"), "w") as f:
                f.write("S:disk/by-id/virtio-vol-root-part1\nE:ID_PART_ENTRY_NUMBER=1\n")
            check_devices(numastor, vm, hba)
    finish(cols, parts, names)


def finish(cols, parts, names=()):
    if fails:
        print(f"list: {len(fails)} failed")
        sys.exit(1)
    if parts == set(PARTS) and len(names) == len(FIXTURES):
        print(f"list: {len(cols)} columns on {len(FIXTURES)} fixtures, forms, device arguments, docs: ok")
    else:
        print(f"list: {', '.join(sorted(parts))}{' on ' + ', '.join(names) if names else ''}: ok")


if __name__ == "__main__":
    main()
