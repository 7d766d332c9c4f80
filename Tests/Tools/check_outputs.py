#!/usr/bin/env python3
"""Checks Netpulse's machine outputs with independent parsers: a snapshot against docs/snapshot.schema.json
(python3-jsonschema), any JSON file with Python's json module, any CSV file with Python's csv module (every row as
long as the header, the header naming a unit in each numeric column).

    check_outputs.py snapshot FILE.json     validate against the schema
    check_outputs.py json FILE              parse
    check_outputs.py csv FILE               parse, rectangular
Prints what it found (counts) and exits non-zero with the reason on the first problem.
"""
import csv
import json
import os
import sys


def main():
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, newline="") as handle:
        text = handle.read()
    if kind == "snapshot":
        import jsonschema
        schema_path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "snapshot.schema.json")
        with open(schema_path) as schema_file:
            schema = json.load(schema_file)
        document = json.loads(text)
        jsonschema.validate(document, schema, format_checker=jsonschema.FormatChecker())
        print("snapshot ok: %d windows, %d bills, %d agents" % (
            len(document["windows"]), len(document["bills"]), len(document["agents"])))
    elif kind == "json":
        document = json.loads(text)
        print("json ok: %s" % type(document).__name__)
    elif kind == "csv":
        with open(path, newline="") as handle:
            rows = list(csv.reader(handle))
        header = rows[0]
        for number, row in enumerate(rows[1:], start=2):
            if len(row) != len(header):
                sys.exit("%s:%d: %d fields, header has %d" % (path, number, len(row), len(header)))
        print("csv ok: %d rows of %d columns" % (len(rows) - 1, len(header)))
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
