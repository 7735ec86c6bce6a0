#!/usr/bin/env python3
"""Hold the documents a fuzz harness wrote ($NS_FUZZ_DUMP) against their schema: each must be
valid UTF-8, parse as JSON and validate (patterns included).

    validate.py [--input] SCHEMA DIR     exit 1 naming the first documents that fail (at most 5)

--input: the documents are inputs a C reader accepted (journals), held to the schema on their
content: raw control characters and bytes that are not UTF-8 inside a string, which json-c's
parser takes and RFC 8259 does not, are not judged here (the JSON text is cut at a NUL, as the
C reader's strlen cuts it). Without it (numastor's own output) the JSON must be strict.
"""
import json
import os
import sys

import jsonschema


def main(argv):
    lenient = "--input" in argv
    argv = [a for a in argv if a != "--input"]
    schema_path, d = argv[1], argv[2]
    schema = json.load(open(schema_path))
    cls = jsonschema.validators.validator_for(schema)
    v = cls(schema)
    names = sorted(os.listdir(d))
    bad = 0
    for n in names:
        raw = open(os.path.join(d, n), "rb").read()
        try:
            if lenient:
                doc = json.loads(raw.split(b"\0")[0].decode("utf-8", errors="replace"), strict=False)
            else:
                doc = json.loads(raw.decode("utf-8", errors="strict"))
            v.validate(doc)
        except (UnicodeDecodeError, json.JSONDecodeError, jsonschema.ValidationError) as e:
            bad += 1
            if bad <= 5:
                msg = e.message if isinstance(e, jsonschema.ValidationError) else str(e)
                where = "/".join(str(p) for p in getattr(e, "absolute_path", []))
                print("validate: %s fails %s at %s: %s" % (n, os.path.basename(schema_path), where or "-",
                                                           msg[:300]))
    print("validate: %d of %d documents fail %s" % (bad, len(names), os.path.basename(schema_path)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
