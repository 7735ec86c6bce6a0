#!/usr/bin/env python3
"""The rooms of lib/ and cmd/ import one another one way only: reader -> model -> findings ->
plan -> output/actions. A room is a header and the .c files named after it (modswap-*.c belong
to modswap); room A imports room B when one of A's files includes "B.h". This check fails on
any circle and prints it, e.g. `blockdev -> system -> blockdev`.

    check-layers.py [TOP]
    check-layers.py --self-test     a two-room circle must be reported, a one-way pair not
"""
import os
import re
import sys

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)
# headers that are no room of their own
SHARED = {"config", "testhook", "modswap-internal", "numastor"}


def room_of(path):
    base = os.path.basename(path).rsplit(".", 1)[0]
    if base.startswith("modswap"):
        return "modswap"
    return base


def graph(top):
    g = {}
    for sub in ("lib",):
        d = os.path.join(top, sub)
        for f in sorted(os.listdir(d)):
            if not f.endswith((".c", ".h")):
                continue
            a = room_of(f)
            text = open(os.path.join(d, f), encoding="utf-8").read()
            for inc in INCLUDE.findall(text):
                b = room_of(inc)
                if b in SHARED or b == a:
                    continue
                g.setdefault(a, set()).add(b)
            g.setdefault(a, set())
    return g


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
    with tempfile.TemporaryDirectory() as t:
        os.mkdir(os.path.join(t, "lib"))
        files = {"a.c": '#include "a.h"\n#include "b.h"\n', "a.h": "", "b.h": "",
                 "b.c": '#include "b.h"\n#include "util.h"\n'}
        for f, text in files.items():
            open(os.path.join(t, "lib", f), "w").write(text)
        assert cycles(graph(t)) == [], "a one-way pair reported as a circle"
        open(os.path.join(t, "lib", "b.c"), "a").write('#include "a.h"\n')
        assert cycles(graph(t)) == [["a", "b", "a"]], cycles(graph(t))
    print("layers self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    g = graph(sys.argv[1] if len(sys.argv) > 1 else TOP)
    c = cycles(g)
    for cyc in c:
        print("import circle: " + " -> ".join(cyc))
    if c:
        return 1
    print("layers: %d rooms, no import circle" % len(g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
