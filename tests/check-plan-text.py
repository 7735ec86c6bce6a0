#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The fix plan as a report (issue 32 item 1), on every fixture machine.

For each fixture (tests/fixtures/gen-fixtures.py --list), `numastor fix --sysroot` is run three
ways with COLUMNS=80 and its output piped: the text, `--verbose` and `--json`. Asserted, from the
JSON (the plan's own document, not re-derived) to the text:
- no line of either text is wider than 80 columns;
- a plan that changes something says the journal and the exact undo command
  (`numastor fix --revert`) before any device;
- the --verbose text has exactly one line per vector (`irq N NAME (DEV...): affinity CUR -> TGT
  ACTION`), with the JSON's target and action;
- the grouped text: every vector of the JSON inside exactly one shown IRQ range, under its
  device's block, on a line with its action; when the line names one target, it is the vector's;
- each rq_affinity write of the JSON under its device (`rq_affinity CUR -> TGT`);
- the cloud fixture (136 moves) in at most 60 lines.
A fixture whose exclusion input does not parse is refused (tests/check-fixtures.py asserts the
refusal): it has no plan to read.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
WIDTH = 80
CLOUD = "cloud-2n64c-8nvme-forced-node0"
CLOUD_MAX_LINES = 60
REFUSED = {"broken-inputs"}


def run(numastor, root, *args):
    env = dict(os.environ, NO_COLOR="1", COLUMNS=str(WIDTH), LANG="C.UTF-8", LC_ALL="C.UTF-8",
               NUMASTOR_TEST_NOW="1767225600")
    p = subprocess.run([numastor, "fix", "--sysroot", root, *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def ranges(text):
    """'58-73,90' -> {58..73, 90}"""
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def logical(text):
    """The lines, each with its continuation (the next lines indented by exactly six spaces after
    a line indented by four: the wrapped rest of a vector's line) joined to it."""
    out = []
    for line in text.splitlines():
        if out and out[-1].startswith("    ") and re.match(r"^      \S", line):
            sep = "" if out[-1].endswith((",", "/")) else " "
            out[-1] += sep + line.strip()
        else:
            out.append(line)
    return out


def blocks(text):
    """The device blocks: {device: [lines]} (a block starts at two spaces and a device name)."""
    out, cur = {}, None
    for line in logical(text):
        m = re.match(r"^  (\S+) \(PCI [^)]*\):|^  (\S+):$", line)
        if m and not line.startswith(("  would ", "  moves ", "  journal:", "  irqbalance", "  nothing")):
            cur = m.group(1) or m.group(2)
            out.setdefault(cur, [])
            continue
        if cur and line.startswith("    "):
            out[cur].append(line)
        elif not line.startswith("      "):
            cur = None
    return out


def check(name, text, vtext, plan):
    errs = []
    for kind, t in (("text", text), ("--verbose text", vtext)):
        for i, line in enumerate(t.splitlines()):
            if len(line) > WIDTH:
                errs.append(f"{kind} line {i + 1} is {len(line)} columns: {line!r}")
    irqs, rqs = plan["irqs"], plan["rq_affinity"]
    changes = [e for e in irqs if e["action"] == "move"] + [e for e in rqs if e["action"] == "move"]
    if changes:
        head = text.split("\n  ", 3)
        pos = text.find("numastor fix --revert")
        first_dev = min([text.find(f"  {e['device']} ") for e in irqs + rqs if text.find(f"  {e['device']} ") >= 0] or [len(text)])
        if pos < 0 or pos > first_dev:
            errs.append("the undo command `numastor fix --revert` is not said before the devices")
        if "/run/numastor/journal.json" not in text[:first_dev]:
            errs.append("the journal /run/numastor/journal.json is not said before the devices")
    # --verbose: one line per vector
    vlines = {}
    for line in logical(vtext):
        m = re.match(r"^    irq (\d+) \S+ \((\S+?)(?: hctx \d+)?\) (move|skip|unchanged)\b[^:]*: affinity (\S*)(?: -> (\S+))?", line)
        if m:
            vlines.setdefault(int(m.group(1)), []).append((m.group(2), m.group(5), m.group(3)))
    for e in irqs:
        got = vlines.get(e["irq"], [])
        want = (e["device"], e["target"], e["action"])
        if got != [want]:
            errs.append(f"--verbose: irq {e['irq']}: lines {got}, expected one {want}")
    # grouped: each vector inside exactly one shown range of its device's block
    bl = blocks(text)
    for e in irqs:
        lines = []
        for line in bl.get(e["device"], []):
            m = re.match(r"^    irq ([0-9,-]+) (.*)$", line)
            if m and e["irq"] in ranges(m.group(1)):
                lines.append(m.group(2))
        if len(lines) != 1:
            errs.append(f"text: irq {e['irq']} ({e['device']}) is in {len(lines)} shown ranges of its device's block")
            continue
        rest = lines[0]
        if not re.match(rf"^(?:\S+ )?(?:\(\d+ vectors\) )?(?:\(hctx \d+\) )?{e['action']}\b", rest):
            errs.append(f"text: irq {e['irq']}: its line does not say {e['action']}: {rest!r}")
        m = re.search(r"(?: -> | to |already on )(\d[0-9,-]*)\b", rest)
        if m and m.group(1) != e["target"]:
            errs.append(f"text: irq {e['irq']}: shown target {m.group(1)}, the plan's {e['target']}")
        if e["action"] != "skip" and not re.search(r" -> | to |already on ", rest):
            errs.append(f"text: irq {e['irq']}: moved or kept, but its line says not where: {rest!r}")
    for e in rqs:
        want = f"rq_affinity {e['action']}: {e['current']} -> {e['target']}"
        if not any(want in line for line in bl.get(e["device"], [])):
            errs.append(f"text: {e['device']}'s {want!r} not in its block")
    if name == CLOUD:
        n = len(text.splitlines())
        if n > CLOUD_MAX_LINES:
            errs.append(f"the cloud plan is {n} lines, more than {CLOUD_MAX_LINES}")
        if len(irqs) < 100:
            errs.append(f"the cloud plan has {len(irqs)} vectors: the fixture no longer tests grouping")
    return errs


def main():
    numastor = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or subprocess.run([sys.executable, GEN, "--list"], capture_output=True, text=True,
                                           check=True).stdout.split()
    failed = checked = 0
    with tempfile.TemporaryDirectory(prefix="numastor-plantext.") as tmp:
        subprocess.run([sys.executable, GEN, tmp, *names], check=True)
        for name in names:
            root = os.path.join(tmp, name)
            code, out, err = run(numastor, root, "--json")
            if name in REFUSED:
                if code != 3:
                    print(f"FAIL {name}: expected the refusal (exit 3), got {code}")
                    failed += 1
                continue
            try:
                plan = json.loads(out)
            except json.JSONDecodeError:
                print(f"FAIL {name}: fix --json exit {code}: {err[:300]}")
                failed += 1
                continue
            _, text, _ = run(numastor, root)
            _, vtext, _ = run(numastor, root, "--verbose")
            errs = check(name, text, vtext, plan)
            checked += 1
            if errs:
                failed += 1
                print(f"FAIL {name}:")
                for e in errs[:12]:
                    print("  " + e)
            else:
                print(f"PASS {name} ({len(plan['irqs'])} vectors, {len(text.splitlines())} lines)")
    if checked < 10:
        print(f"FAIL: only {checked} fixtures had a plan to check")
        return 1
    print(f"plan text: {checked - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
