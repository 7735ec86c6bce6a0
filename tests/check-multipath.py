#!/usr/bin/env python3
"""NVMe multipath paths and nodes (issue 33 item 3): the per-path attributes the kernel writes on
6.15 and later (a path disk's numa_nodes, queue_depth) and its ana_state, read with "absent",
"empty" and "unreadable" kept apart, and the nodes each path serves held to facts read from the
fixture tree itself (the path disks' own files and their controllers' numa_node), not to the
goldens nor to numastor's rules:

- the tree's numa_nodes, where the file holds a node list, is each path's serves_nodes with
  serves_nodes_source "kernel"; queue_depth's number is the path's queue_depth; ana_state's text
  is its ana_state;
- the 0 bytes the kernel prints under another iopolicy are "empty": null, no note;
- a file that cannot be read (a directory in its place: EISDIR) or does not parse (garbage) is a
  note naming the file, and the fact stays unknown: numa_nodes then leaves the path "inferred"
  (never a kernel answer made up), queue_depth null;
- a path whose files are removed (a kernel before 6.15) is "inferred", without a note.

    check-multipath.py NUMASTOR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
sys.path.insert(0, HERE)
import schemas  # noqa: E402

SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor.schema.json")))
SUBSYS = "sys/devices/virtual/nvme-subsystem/nvme-subsys0"


def check(numastor, root):
    p = subprocess.run([numastor, "check", "--sysroot", root, "--json"], capture_output=True, text=True)
    doc = json.loads(p.stdout)
    schemas.validate(doc, SCHEMA)
    assert not p.stderr, p.stderr
    return doc


def path_disks(root):
    """{controller: path disk dir (absolute)} as the tree links them: the head's multipath/."""
    out = {}
    mp = os.path.join(root, SUBSYS, "nvme0n1", "multipath")
    for name in sorted(os.listdir(mp)):
        real = os.path.realpath(os.path.join(mp, name))
        out[os.path.basename(os.path.dirname(real))] = real
    return out


def tree_file(d, attr):
    p = os.path.join(d, attr)
    if not os.path.isfile(p):
        return None
    return open(p).read()


def node_list(text):
    nodes = []
    for part in filter(None, text.strip().split(",")):
        a, _, b = part.partition("-")
        nodes += range(int(a), int(b or a) + 1)
    return nodes


def paths_of(doc):
    (d,) = [x for x in doc["devices"] if x["kind"] == "nvme-multipath"]
    return {p["controller"]: p for p in d["paths"]}


def notes_for(doc, field):
    return [n for n in doc["notes"] if n["field"] == field]


def main():
    numastor = os.path.abspath(sys.argv[1])
    failed = 0
    with tempfile.TemporaryDirectory(prefix="numastor-multipath.") as tmp:
        names = ["nvme-multipath-72-numa", "nvme-multipath-72-remote", "nvme-multipath-72-qdepth"]
        subprocess.run([sys.executable, GEN, tmp, *names, "nvme-multipath-72-qdepth-nodeless"], check=True,
                       stdout=subprocess.DEVNULL)

        def case(label, fn):
            nonlocal failed
            try:
                fn()
                print("PASS " + label)
            except (AssertionError, KeyError, ValueError) as e:
                print(f"FAIL {label}: {type(e).__name__}: {str(e)[:1500]}")
                failed += 1

        # 1. each fixture as generated: the report says what the tree's files say
        for name in names:
            root = os.path.join(tmp, name)

            def as_read(root=root):
                doc = check(numastor, root)
                got = paths_of(doc)
                for ctrl, pd in path_disks(root).items():
                    p = got[ctrl]
                    assert p["disk"] == os.path.basename(pd), (p["disk"], pd)
                    nn, qd, ana = tree_file(pd, "numa_nodes"), tree_file(pd, "queue_depth"), tree_file(pd, "ana_state")
                    assert p["ana_state"] == (ana.strip() if ana else None), (ctrl, p["ana_state"], ana)
                    assert p["queue_depth"] == (int(qd) if qd else None), (ctrl, p["queue_depth"], qd)
                    if nn:  # a node list (a lone newline: the empty list), iopolicy numa
                        assert (p["serves_nodes"], p["serves_nodes_source"]) == (node_list(nn), "kernel"), \
                            (ctrl, p["serves_nodes"], p["serves_nodes_source"], nn)
                    else:  # 0 bytes: not the kernel's answer under this iopolicy
                        assert p["serves_nodes_source"] != "kernel", (ctrl, p)
                assert not [n for n in doc["notes"] if n["field"].startswith("paths.")], doc["notes"]
            case(name + ": as the tree says", as_read)

        # the verbose device says the same, per path (text wrapped: compared without line breaks)
        def verbose():
            root = os.path.join(tmp, "nvme-multipath-72-qdepth")
            p = subprocess.run([numastor, "check", "--sysroot", root, "--verbose"], capture_output=True, text=True)
            flat = " ".join(p.stdout.split())
            assert "iopolicy: queue-depth" in flat, flat[:2000]
            for ctrl, pd in path_disks(root).items():
                want = "path %s (%s): ANA %s, serves nodes 0-1 (iopolicy), queue depth %d" % (
                    ctrl, os.path.basename(pd), tree_file(pd, "ana_state").strip(), int(tree_file(pd, "queue_depth")))
                assert want in flat, (want, flat[:3000])
        case("nvme-multipath-72-qdepth: --verbose", verbose)

        # the VM bed's shape on a kernel without numa_nodes: one controller on no node (-1), one on
        # node 1, iopolicy numa. The kernel counts a node-less controller as local to every node
        # (__nvme_find_path: LOCAL_DISTANCE), so node 0 takes it and node 1 ties between both
        def bed_shape():
            root = os.path.join(tmp, "nvme-multipath-72-qdepth-nodeless")
            with open(os.path.join(root, SUBSYS, "iopolicy"), "w") as f:
                f.write("numa\n")
            for pd in path_disks(root).values():
                for attr in ("numa_nodes", "queue_depth"):
                    os.unlink(os.path.join(pd, attr))
            doc = check(numastor, root)
            got = {c: (p["pci"]["numa_node"], p["serves_nodes"], p["serves_nodes_source"])
                   for c, p in paths_of(doc).items()}
            assert got == {"nvme0": (-1, [0, 1], "inferred"), "nvme1": (1, [1], "inferred")}, got
            ids = {f["id"] for f in doc["findings"]}
            assert not ids & {"path-remote-while-local", "paths-on-different-nodes"}, ids
        case("the bed's shape (-1 and 1), iopolicy numa, no numa_nodes", bed_shape)

        root = os.path.join(tmp, "nvme-multipath-72-numa")
        pds = path_disks(root)

        # 2. unreadable numa_nodes (a directory in its place) and garbled queue_depth on nvme1
        def unreadable():
            nn = os.path.join(pds["nvme1"], "numa_nodes")
            os.unlink(nn)
            os.mkdir(nn)
            with open(os.path.join(pds["nvme1"], "queue_depth"), "w") as f:
                f.write("many\n")
            doc = check(numastor, root)
            got = paths_of(doc)
            # the other path's kernel answer stands; this one's is unknown, so inferred
            assert (got["nvme0"]["serves_nodes"], got["nvme0"]["serves_nodes_source"]) == ([0], "kernel"), got["nvme0"]
            assert got["nvme1"]["serves_nodes_source"] == "inferred", got["nvme1"]
            assert got["nvme1"]["queue_depth"] is None, got["nvme1"]
            n = notes_for(doc, "paths.numa_nodes")
            assert len(n) == 1 and "nvme0c1n1/numa_nodes" in n[0]["message"], n
            q = notes_for(doc, "paths.queue_depth")
            assert len(q) == 1 and "many" in q[0]["message"], q
            shutil.rmtree(nn)
        case("nvme-multipath-72-numa: unreadable numa_nodes, garbled queue_depth", unreadable)

        # 3. garbage in numa_nodes: a note with what it said, the fact unknown
        def garbled():
            with open(os.path.join(pds["nvme1"], "numa_nodes"), "w") as f:
                f.write("node one\n")
            doc = check(numastor, root)
            assert paths_of(doc)["nvme1"]["serves_nodes_source"] == "inferred", paths_of(doc)["nvme1"]
            n = notes_for(doc, "paths.numa_nodes")
            assert len(n) == 1 and "node one" in n[0]["message"], n
        case("nvme-multipath-72-numa: garbled numa_nodes", garbled)

        # 4. absent (a kernel before 6.15): inferred, no note
        def absent():
            for pd in pds.values():
                for attr in ("numa_nodes", "queue_depth"):
                    if os.path.lexists(os.path.join(pd, attr)):
                        os.unlink(os.path.join(pd, attr))
            doc = check(numastor, root)
            got = paths_of(doc)
            assert {c: (p["serves_nodes"], p["serves_nodes_source"]) for c, p in got.items()} == \
                {"nvme0": ([0], "inferred"), "nvme1": ([1], "inferred")}, got
            assert not [n for n in doc["notes"] if n["field"].startswith("paths.")], doc["notes"]
        case("nvme-multipath-72-numa: files absent", absent)
    print(f"multipath: {'FAIL' if failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
