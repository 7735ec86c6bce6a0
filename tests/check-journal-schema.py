#!/usr/bin/env python3
"""The journals are checked like input, and schema/journal.schema.json says how: a corpus of
journals (the fix journal run/numastor/journal.json and the swap journal
var/lib/numastor/swap.json; the issue's damaged ones among them) goes through python3-jsonschema
and through `numastor fix --revert` on a fixture copy (arguments after the binary: only the cases of those names) (NUMASTOR_TEST_SYSROOT_WRITES=1), and the two
must agree: what the schema refuses, numastor refuses with exit 3, keeping the file byte for byte
and writing no IRQ; what the schema takes, numastor reverts. The only disagreements allowed are
listed in C_STRICTER, each a rule a JSON Schema cannot state. A refused fix journal is refused by
`fix` (placing) too, with the same message and the file kept.
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "journal.schema.json")))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
FIXTURE = "cloud-2n64c-8nvme-forced-node0"
REL = "6.1.0-57-amd64"


def irq_cases(good):
    """(name, text) of fix journals: the good one numastor wrote, and damaged variants."""
    def edit(fn):
        j = copy.deepcopy(good)
        fn(j)
        return json.dumps(j, indent=1)

    def entry(key, value):
        return lambda j: j["irqs"][0].__setitem__(key, value)

    def drop(key):
        return lambda j: j["irqs"][0].pop(key)

    yield "as written", json.dumps(good)
    yield "irq null", edit(entry("irq", None))
    yield "no counts", edit(drop("counts"))
    yield "boot_id null", edit(lambda j: j.__setitem__("boot_id", None))
    yield "version 2.0", json.dumps(good).replace('"version": 2', '"version": 2.0', 1)
    yield "trailing newline", json.dumps(good) + "\n\n"
    # the cases
    yield "irqs a string", edit(lambda j: j.__setitem__("irqs", "57"))
    yield "irqs an object", edit(lambda j: j.__setitem__("irqs", {"57": j["irqs"][0]}))
    yield "irqs missing", edit(lambda j: j.pop("irqs"))
    yield "previous zz,,", edit(entry("previous", "zz,,"))
    # structure
    yield "probe a string", edit(lambda j: j.__setitem__("probe", "before: 3.4k"))
    yield "probe an object", edit(lambda j: j.__setitem__("probe", {"parameters": {"seconds": 3}, "devices": []}))
    yield "rq_affinity missing", edit(lambda j: j.pop("rq_affinity"))
    yield "rq_affinity a string", edit(lambda j: j.__setitem__("rq_affinity", ""))
    yield "an entry a string", edit(lambda j: j["irqs"].__setitem__(0, "nvme0q0"))
    yield "entry key unknown", edit(entry("prev", "0"))
    yield "top key unknown", edit(lambda j: j.__setitem__("installed", []))
    yield "placed missing", edit(drop("placed"))
    yield "pci missing", edit(drop("pci"))
    yield "pci a path", edit(entry("pci", "../../x"))
    yield "name empty", edit(entry("name", ""))
    yield "irq negative", edit(entry("irq", -1))
    yield "irq a string", edit(entry("irq", "57"))
    yield "previous empty", edit(entry("previous", ""))
    yield "previous trailing comma", edit(entry("previous", "0-3,"))
    yield "previous a number", edit(entry("previous", 5))
    yield "previous with spaces", edit(entry("previous", "0, 1"))
    yield "placed garbage", edit(entry("placed", "0-31x"))
    yield "counts garbage", edit(entry("counts", "1,,2"))
    yield "boot_id a number", edit(lambda j: j.__setitem__("boot_id", 5))
    yield "version 1", edit(lambda j: j.__setitem__("version", 1))
    yield "version a string", edit(lambda j: j.__setitem__("version", "2"))
    yield "rq previous 3", edit(lambda j: j.__setitem__(
        "rq_affinity", [{"disk": "wwid:eui.1", "device": "nvme0n1", "previous": 3, "placed": 2}]))
    yield "rq disk a name", edit(lambda j: j.__setitem__(
        "rq_affinity", [{"disk": "nvme0n1", "device": "nvme0n1", "previous": 1, "placed": 2}]))
    yield "an array", json.dumps([good])
    yield "not JSON", "{\"version\": 2, \"irqs\": ["
    yield "trailing garbage", json.dumps(good) + " {}"
    yield "empty", ""
    # zero-filled blocks (a crash before the data reached the disk): NULs are never JSON
    yield "NUL bytes between tokens", json.dumps(good)[:1] + "\0" * 32 + json.dumps(good)[1:]
    yield "NUL bytes in a string", json.dumps(good).replace('"name": "', '"name": "\0\0\0\0', 1)
    yield "NUL bytes at the end", json.dumps(good) + "\0" * 512
    # stricter than a schema can say: a range out of order
    yield "previous 3-1", edit(entry("previous", "3-1"))
    # counts at placement in runs (issue 28: 900 bytes an entry at 448 CPUs made journals no
    # revert could read)
    yield "counts in runs", edit(entry("counts", "0*60,17,0,0,3"))
    yield "counts run of 0", edit(entry("counts", "5,0*0"))
    yield "counts leading zero", edit(entry("counts", "01,2"))
    yield "counts of 8193 CPUs", edit(entry("counts", "0*8193"))
    yield "counts above 2^32", edit(entry("counts", "4294967296"))
    # a key twice: json-c (and Python) keep the last, so this one would read as no IRQs at all
    text = json.dumps(good)
    yield "irqs named twice", text[:-1] + ', "irqs": []}'
    yield "irqs named twice, once escaped", text[:-1] + ', "\\u0069rqs": []}'
    yield "entry key named twice", text.replace('"placed": ', '"placed": "0", "placed": ', 1)
    # json-c takes a single-quoted key even in strict mode: appended, it would empty the journal
    yield "irqs named twice, once single-quoted", text[:-1] + ", 'irqs': []}"


def swap_cases():
    base = {"version": 1, "boot_id": None, "kernel_release": REL, "runtime": False, "groups": [],
            "modules": [], "removed_pci": [], "disks": [],
            "installed": [f"lib/modules/{REL}/updates/numastor/nvme.ko"], "initramfs_updated": False}

    def edit(fn):
        j = copy.deepcopy(base)
        fn(j)
        return json.dumps(j)

    yield "swap: as written", json.dumps(base)
    yield "swap: installed outside", edit(lambda j: j.__setitem__("installed", ["../../../../tmp/victim"]))
    yield "swap: installed absolute", edit(lambda j: j.__setitem__(
        "installed", [f"/lib/modules/{REL}/updates/numastor/nvme.ko"]))
    yield "swap: installed a string", edit(lambda j: j.__setitem__("installed", "x"))
    yield "swap: installed in a subdirectory", edit(lambda j: j.__setitem__(
        "installed", [f"lib/modules/{REL}/updates/numastor/a/nvme.ko"]))
    yield "swap: installed without a release", edit(lambda j: j.__setitem__("kernel_release", None))
    yield "swap: modules missing", edit(lambda j: j.pop("modules"))
    yield "swap: NUL bytes", json.dumps(base)[:1] + "\0" * 32 + json.dumps(base)[1:]
    yield "swap: stock_path absolute", edit(lambda j: j.__setitem__(
        "modules", [{"name": "nvme", "loaded": True, "stock_path": "/lib/x.ko"}]))
    yield "swap: top key unknown", edit(lambda j: j.__setitem__("irqs", []))
    yield "swap: module key unknown", edit(lambda j: j.__setitem__(
        "modules", [{"name": "nvme", "loaded": True, "stock": "kernel/nvme.ko"}]))
    yield "swap: disk key unknown", edit(lambda j: j.__setitem__("disks", [{"name": "sda", "node": 1}]))
    yield "swap: installed named twice", json.dumps(base)[:-1] + ', "installed": []}'
    # stricter than a schema can say: another release's directory than the journal's own
    yield "swap: installed of another release", edit(lambda j: j.__setitem__(
        "installed", ["lib/modules/6.1.0-99-amd64/updates/numastor/nvme.ko"]))


# Cases where the schema takes a journal numastor refuses, each for a rule no schema can state.
C_STRICTER = {
    "previous 3-1": "a CPU list's range out of order",
    "swap: installed of another release": "an installed file must be of the journal's own kernel_release",
    "counts of 8193 CPUs": "at most 8192 CPUs (the largest NR_CPUS)",
    "counts above 2^32": "a per-CPU count is 32 bits",
    "irqs named twice": "a key named twice in one object (a parser keeps one of the two)",
    "irqs named twice, once escaped": "a key named twice, in two spellings",
    "entry key named twice": "a key named twice in one object",
    "swap: installed named twice": "a key named twice in one object",
}


# What numastor's refusal must say is wrong, for some cases (the among them).
REASONS = {
    "irqs a string": 'its "irqs" is a string, not an array',
    "irqs an object": 'its "irqs" is an object, not an array',
    "irqs missing": 'its "irqs" is missing',
    "previous zz,,": "irqs[0].previous is missing or not a CPU list",
    "an array": "it is an array, not an object",
    "NUL bytes between tokens": "it holds NUL bytes",
    "swap: installed outside": "swap.json is malformed",
    "an entry a string": "irqs[0] is a string, not an object",
    "irqs named twice": 'its key "irqs" appears twice in one object',
    "irqs named twice, once escaped": "names one key twice in one object, written in two forms",
    "irqs named twice, once single-quoted": "a single-quoted string",
    "entry key named twice": 'its key "placed" appears twice',
}


def schema_valid(text):
    try:
        doc = json.loads(text)
    except ValueError:
        return False, "not JSON"
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    return not errors, errors[0].message[:120] if errors else ""


def affinities(root):
    d = os.path.join(root, "proc", "irq")
    return {n: open(os.path.join(d, n, "smp_affinity_list")).read() for n in os.listdir(d)
            if os.path.exists(os.path.join(d, n, "smp_affinity_list"))}


def main():
    numastor = os.path.abspath(sys.argv[1])
    env = dict(os.environ, NUMASTOR_TEST_SYSROOT_WRITES="1", NO_COLOR="1")
    if b"NUMASTOR_TEST_SYSROOT_WRITES" not in open(numastor, "rb").read():
        print(f"FAIL: {numastor} was built without the test-only switches (-Dtest_hooks=true): nothing was tested")
        return 1
    fails = 0
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="numastor-journal-schema.", dir=scratch) as tmp:
        subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), tmp, FIXTURE],
                       check=True, stdout=subprocess.DEVNULL)
        placed = os.path.join(tmp, "placed")
        shutil.copytree(os.path.join(tmp, FIXTURE), placed, symlinks=True)
        r = subprocess.run([numastor, "fix", "--sysroot", placed], env=env, capture_output=True, text=True)
        # exit 1: the fixture's irqbalance runs without numastor's policy script, and fix says so
        assert r.returncode == 1 and "will move these vectors back" in r.stdout, (r.returncode, r.stderr)
        jpath = os.path.join("run", "numastor", "journal.json")
        good = json.load(open(os.path.join(placed, jpath)))
        assert good["irqs"], "fix journaled nothing"
        cases = [(n, t, jpath) for n, t in irq_cases(good)]
        cases += [(n, t, os.path.join("var", "lib", "numastor", "swap.json")) for n, t in swap_cases()]
        if sys.argv[2:]:  # only the cases named (a mutant's kill command)
            cases = [c for c in cases if c[0] in sys.argv[2:]]
            assert len(cases) == len(sys.argv[2:]), f"no such case among {sys.argv[2:]}"
        for name, text, rel in cases:
            t = os.path.join(tmp, "t")
            subprocess.run(["rm", "-rf", t], check=True)
            subprocess.run(["cp", "-a", placed, t], check=True)
            if not rel.endswith("journal.json"):
                os.unlink(os.path.join(t, jpath))
            os.makedirs(os.path.dirname(os.path.join(t, rel)), exist_ok=True)
            with open(os.path.join(t, rel), "w") as f:
                f.write(text)
            before = affinities(t)
            valid, why = schema_valid(text)
            r = subprocess.run([numastor, "fix", "--sysroot", t, "--revert"], env=env, capture_output=True, text=True)
            refused = r.returncode == 3 and ("is malformed" in r.stderr or "is a version" in r.stderr)
            kept = os.path.exists(os.path.join(t, rel)) and open(os.path.join(t, rel)).read() == text
            problems = []
            if name in C_STRICTER:
                if not (valid and refused):
                    problems.append(f"expected schema valid and numastor refusing ({C_STRICTER[name]}): "
                                    f"schema {'valid' if valid else 'invalid: ' + why}, numastor exit {r.returncode}")
            elif valid == refused:
                problems.append(f"schema says {'valid' if valid else 'invalid (' + why + ')'}, numastor "
                                f"{'refused' if refused else 'took it'} (exit {r.returncode}: {r.stderr.strip()[:300]})")
            if refused:
                if not kept:
                    problems.append("refused, but the file was not kept byte for byte")
                if affinities(t) != before:
                    problems.append("refused, but an IRQ was written")
                if "is malformed" in r.stderr and "(" not in r.stderr.split("is malformed", 1)[1][:3]:
                    problems.append(f"the refusal does not say what is wrong: {r.stderr.strip()[:300]}")
                if name in REASONS and REASONS[name] not in r.stderr:
                    problems.append(f"the refusal does not say {REASONS[name]!r}: {r.stderr.strip()[:300]}")
                if rel == jpath:
                    f = subprocess.run([numastor, "fix", "--sysroot", t], env=env, capture_output=True, text=True)
                    if (f.returncode != 3 or open(os.path.join(t, rel)).read() != text or affinities(t) != before
                            or ("is malformed" in r.stderr and "journal.json is malformed (" not in f.stderr)):
                        problems.append(f"fix (placing) took the refused journal: exit {f.returncode}: {f.stderr[:300]}")
            print(("FAIL " if problems else "ok   ") + name + "".join("\n     " + p for p in problems))
            fails += bool(problems)
    print(f"journal schema: {len(cases) - fails} agree, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
