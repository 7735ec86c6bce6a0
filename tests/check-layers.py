#!/usr/bin/env python3
"""The house's one-way flow, checked from the includes.

lib/ is grouped in folders by the stage each room serves (HACKING.md draws them):

    base -> read -> state -> model -> act -> swap
                               \\-> probe -> trace
                                        \\-> out (from act)

A room is a header and the .c file of the same name in one folder; room A imports room B when
one of A's files includes "B's stage/B.h". A stage may include its own rooms and those of the
stages STAGES lists for it, never one downstream (a reader never includes a model header, the
model never an action's); lib/ never includes cmd/; cmd/ may include every stage. This check
fails on any such include and on any import circle between rooms, and prints each, e.g.
`read/blockdev.c includes model/system.h: read may not include model` or
`read/blockdev -> read/pci -> read/blockdev`.

    check-layers.py [TOP]
    check-layers.py --self-test     a circle and a reader including a model header must be
                                    reported, a one-way pair and an allowed include not
"""
import os
import re
import sys

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)

# stage -> the other stages its files may include
STAGES = {
    "base": [],
    "read": ["base"],
    "state": ["base", "read"],
    "model": ["base", "read", "state"],
    "act": ["base", "read", "state", "model"],
    "swap": ["base", "read", "state", "model", "act"],
    "probe": ["base", "read", "model"],
    "trace": ["base", "read", "model", "probe"],
    "out": ["base", "read", "state", "model", "act"],
}
# headers that are no room of their own: the build's config.h and the front end's own
SHARED = {"config", "trace.skel"}  # trace.skel.h: bpftool's skeleton of lib/trace/bpf/, made by the build


def sources(top):
    """(folder relative to top, file name) of every .c/.h under lib/ and cmd/."""
    out = []
    for sub in ["lib/" + s for s in STAGES] + ["cmd"]:
        d = os.path.join(top, sub)
        if not os.path.isdir(d):
            continue
        out += [(sub, f) for f in sorted(os.listdir(d)) if f.endswith((".c", ".h"))]
    stray = [f for f in (os.listdir(os.path.join(top, "lib")) if os.path.isdir(os.path.join(top, "lib")) else [])
             if f.endswith((".c", ".h"))]
    return out, ["lib/" + f for f in stray]


def graph(top):
    """(rooms -> rooms they import, problems): problems are includes against the stage order."""
    g, problems = {}, []
    files, stray = sources(top)
    problems += ["%s sits in no stage folder" % f for f in stray]
    for sub, f in files:
        stage = sub.split("/", 1)[1] if sub.startswith("lib/") else "cmd"
        a = "%s/%s" % (stage, f.rsplit(".", 1)[0])
        g.setdefault(a, set())
        text = open(os.path.join(top, sub, f), encoding="utf-8").read()
        for inc in INCLUDE.findall(text):
            if inc in SHARED:
                continue
            if "/" not in inc:
                if stage == "cmd" and os.path.exists(os.path.join(top, "cmd", inc + ".h")):
                    b = "cmd/" + inc
                else:
                    problems.append("%s/%s includes \"%s.h\": name its stage (\"read/%s.h\")" % (sub, f, inc, inc))
                    continue
            else:
                b = inc
                bstage = inc.split("/", 1)[0]
                if bstage not in STAGES:
                    problems.append("%s/%s includes \"%s.h\": no such stage" % (sub, f, inc))
                    continue
                if stage != "cmd" and bstage != stage and bstage not in STAGES[stage]:
                    problems.append("%s/%s includes %s.h: %s may not include %s" % (sub, f, inc, stage, bstage))
            if b != a:
                g[a].add(b)
    return g, problems


def cycles(g):
    found, state, stack = [], {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == 1:
                found.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(g):
        if n not in state:
            visit(n)
    return found


def self_test():
    import tempfile

    def tree(t, files):
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(t, path)), exist_ok=True)
            open(os.path.join(t, path), "w").write(text)

    with tempfile.TemporaryDirectory() as t:
        tree(t, {"lib/read/a.c": '#include "read/a.h"\n#include "read/b.h"\n#include "base/u.h"\n',
                 "lib/read/a.h": "", "lib/read/b.h": "", "lib/base/u.h": "",
                 "lib/read/b.c": '#include "read/b.h"\n', "lib/model/m.h": '#include "read/a.h"\n',
                 "cmd/c.c": '#include "model/m.h"\n#include "c.h"\n', "cmd/c.h": ""})
        g, problems = graph(t)
        assert cycles(g) == [] and problems == [], (cycles(g), problems)
        tree(t, {"lib/read/b.c": '#include "read/b.h"\n#include "read/a.h"\n'})
        g, problems = graph(t)
        assert cycles(g) == [["read/a", "read/b", "read/a"]], cycles(g)
        tree(t, {"lib/read/b.c": '#include "read/b.h"\n#include "model/m.h"\n'})
        g, problems = graph(t)
        assert problems == ["lib/read/b.c includes model/m.h: read may not include model"], problems
        tree(t, {"lib/read/b.c": '#include "b.h"\n'})
        g, problems = graph(t)
        assert len(problems) == 1 and "name its stage" in problems[0], problems
        tree(t, {"lib/read/b.c": "", "lib/loose.c": ""})
        g, problems = graph(t)
        assert problems == ["lib/loose.c sits in no stage folder"], problems
    print("layers self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    g, problems = graph(sys.argv[1] if len(sys.argv) > 1 else TOP)
    for p in problems:
        print("layer: " + p)
    c = cycles(g)
    for cyc in c:
        print("import circle: " + " -> ".join(cyc))
    if c or problems:
        return 1
    print("layers: %d rooms in %d stages and cmd/, each stage including only those before it, no import circle"
          % (len(g), len(STAGES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
