"""The Prometheus text exposition as numastor writes it (no timestamps), for the tests here."""
import re

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')
TYPE = re.compile(r'^# TYPE (\S+) (\S+)$')


def parse(text):
    """[(name, {label: value as escaped}, float)], and {family: type}."""
    series, types = [], {}
    for line in text.splitlines():
        t = TYPE.match(line)
        if t:
            types[t.group(1)] = t.group(2)
        if not line or line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m:
            raise ValueError("unparsed line: %r" % line)
        series.append((m.group(1), dict(LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return series, types


def selector(name, labels):
    """name{k="v",...} with the values as escaped in the exposition (PromQL reads them so)."""
    return "%s{%s}" % (name, ",".join('%s="%s"' % kv for kv in labels.items()))


def trace_replays(fixtures_dir, trees_dir, tmp):
    """(name, fixture, root, replay file) of each trace replay fixture (tests/fixtures/trace/) whose
    machine tree was generated under trees_dir, its replay written into tmp for
    NUMASTOR_TEST_TRACE_REPLAY."""
    import json
    import os
    for fn in sorted(os.listdir(fixtures_dir)):
        with open(os.path.join(fixtures_dir, fn)) as f:
            fx = json.load(f)
        root = os.path.join(trees_dir, fx["tree"])
        if not os.path.isdir(root):
            continue
        replay = os.path.join(tmp, fn)
        with open(replay, "w") as f:
            json.dump(fx["replay"], f)
        yield fn[:-5], fx, root, replay
