#!/usr/bin/env python3
"""irqbalance's ban list on the cloud fixture (issue 28, item 3): each form of
/etc/default/irqbalance and of the daemon's environ that once planned moves onto CPUs 0-3 with no
note, and its twins. `numastor fix --dry-run --json` must either plan onto exactly the CPUs
irqbalance leaves free (allowed_cpus, no target on a banned CPU) or refuse with exit 3 and the
error document quoting the line (or the value) it cannot be sure of. tests/unit/test-envfile.c
holds the parser's whole table; this holds the reader, the plan and the refusal end to end.

    check-banlist.py NUMASTOR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
FIXTURE = "cloud-2n64c-8nvme-forced-node0"
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
L, M = "IRQBALANCE_BANNED_CPULIST", "IRQBALANCE_BANNED_CPUS"
ALL = set(range(64))

# (what, options-file lines appended, environ entries or None (no environ file), expected)
# expected: a CPU list string (the banned CPUs), or ("refused", TEXT the message must quote)
CASES = [
    # the forms
    ("blank after =", L + "= 0-3", None, ("refused", "/etc/default/irqbalance:10 reads '" + L + "= 0-3'")),
    ("blank before =", L + " =0-3", None, ("refused", "/etc/default/irqbalance:10 reads '" + L + " =0-3'")),
    ("export", "export " + L + "=0-3", None,
     ("refused", "/etc/default/irqbalance:10 reads 'export " + L + "=0-3', a line a shell sourcing the file and systemd's EnvironmentFile= may read differently")),
    ("empty, then 0-3", L + "=\n" + L + "=0-3", None, "0-3"),
    ("4-63, then 0-3: the last wins", L + "=4-63\n" + L + "=0-3", None, "0-3"),
    ("environ: another value holds the name", None,
     ["LANG=C", "X=a " + L + "=4-63", L + "=0-3"], "0-3"),
    # twins: what both readers take alike
    ("plain", L + "=0-3", None, "0-3"),
    ("double quotes", L + '="0-3"', None, "0-3"),
    ("single quotes, blanks around", "  " + L + "='0-3'  ", None, "0-3"),
    ("environ plain", None, ["LANG=C", L + "=0-3"], "0-3"),
    # more that only a shell decides, or that the readers read apart
    ("trailing comment", L + "=0-3 # the RT CPUs", None,
     ("refused", "reads '" + L + "=0-3 # the RT CPUs'")),
    ("a variable", "CPUS=0-3\n" + L + "=$CPUS", None, ("refused", ":11 reads '" + L + "=$CPUS'")),
    ("another file sourced", ". /etc/irqbalance.local", None, ("refused", "reads '. /etc/irqbalance.local'")),
    ("a quote left open", "IRQBALANCE_ARGS=\"--journal\n" + L + "=0-3\n\"", None,
     ("refused", "reads 'IRQBALANCE_ARGS=\"--journal'")),
    # irqbalance 1.9: the mask first, in the kernel's 32-bit groups; empty is unset
    ("mask in groups", M + "=f,1", None, "0,32-35"),
    ("the mask wins over the list", L + "=8-9\n" + M + "=f", None, "0-3"),
    ("an empty mask is unset", M + "=\n" + L + "=8-9", None, "8-9"),
    ("environ: the mask wins", None, [L + "=8-9", M + "=f"], "0-3"),
    # a list irqbalance reads to another set than numastor would: refused, never narrower
    ("a blank inside the list", L + "='0, 1'", None,
     ("refused", L + " in /etc/default/irqbalance is '0, 1', which does not parse as a CPU list")),
    ("an empty item", L + "=0-3,,5", None, ("refused", "is '0-3,,5'")),
    # the environ is the daemon's when it sets either; else the file (what it takes at its start)
    ("environ sets neither", L + "=0-3", ["LANG=C"], "0-3"),
    ("environ's empty value is unset", L + "=0-3", [L + "="], "0-3"),
    ("environ wins over the file", L + "=0-3", [L + "=4-7"], "4-7"),
    ("environ's garbled value", L + "=0-3", [L + "=0-3,"],
     ("refused", L + " in /proc/812/environ is '0-3,'")),
]


def cpus(s):
    out = set()
    for part in (s or "").split(","):
        if part:
            a, _, b = part.partition("-")
            out |= set(range(int(a), int(b or a) + 1))
    return out


def cpulist(cs):
    out, cs = [], sorted(cs)
    i = 0
    while i < len(cs):
        j = i
        while j + 1 < len(cs) and cs[j + 1] == cs[j] + 1:
            j += 1
        out.append(str(cs[i]) if i == j else "%d-%d" % (cs[i], cs[j]))
        i = j + 1
    return ",".join(out)


def main():
    numastor = os.path.abspath(sys.argv[1])
    fails = 0
    env = dict(os.environ, NO_COLOR="1", NUMASTOR_TEST_NOW="1767225600")
    with tempfile.TemporaryDirectory(prefix="numastor-banlist.", dir=SCRATCH) as tmp:
        subprocess.run([sys.executable, GEN, tmp, FIXTURE], check=True, stdout=subprocess.DEVNULL)
        tree = os.path.join(tmp, FIXTURE)
        default = os.path.join(tree, "etc/default/irqbalance")
        environ = os.path.join(tree, "proc/812/environ")
        with open(os.path.join(tree, "proc/812/comm")) as f:
            assert f.read().strip() == "irqbalance", "the fixture's pid 812 is not irqbalance"
        with open(default) as f:
            stock = f.read()
        assert stock.count("\n") == 9, "the fixture's options file is not 9 lines: fix the line numbers above"
        for what, lines, entries, want in CASES:
            with open(default, "w") as f:
                f.write(stock + (lines + "\n" if lines is not None else ""))
            if entries is None:
                if os.path.exists(environ):
                    os.unlink(environ)
            else:
                with open(environ, "wb") as f:
                    f.write(b"".join(e.encode() + b"\0" for e in entries))
            p = subprocess.run([numastor, "fix", "--sysroot", tree, "--dry-run", "--json"], env=env,
                               capture_output=True, text=True)
            try:
                doc = json.loads(p.stdout)
                if isinstance(want, tuple):
                    assert p.returncode == 3, f"exit {p.returncode}, expected the refusal (3)"
                    assert "irqs" not in doc and doc["error"]["exit_code"] == 3, "no error document"
                    msg = doc["error"]["message"]
                    assert want[1] in msg, f"the refusal does not say {want[1]!r}: {msg}"
                else:
                    banned = cpus(want)
                    assert p.returncode == 0, f"exit {p.returncode}: {p.stderr.strip()}"
                    allowed = cpulist(ALL - banned)
                    assert doc["allowed_cpus"] == allowed, f"allowed_cpus {doc['allowed_cpus']}, expected {allowed}"
                    moves = [e for e in doc["irqs"] if e["action"] == "move"]
                    assert moves, "nothing planned"
                    onto = [e["irq"] for e in moves if cpus(e["target"]) & banned]
                    assert not onto, f"IRQs {onto} planned onto banned CPUs {want}"
            except (AssertionError, ValueError, KeyError) as e:
                fails += 1
                print(f"FAIL {what}: {e}")
                if os.environ.get("NUMASTOR_FAIL_FAST") == "1":
                    break
                continue
            print(f"PASS {what}")
    print(f"banlist: {len(CASES) - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
