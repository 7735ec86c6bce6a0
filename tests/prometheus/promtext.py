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
