#!/usr/bin/env python3
"""Checks Netpulse's machine outputs with independent parsers: a snapshot against docs/snapshot.schema.json
(python3-jsonschema), any JSON file with Python's json module, any CSV file with Python's csv module (every row as
long as the header, the header naming a unit in each numeric column).

    check_outputs.py snapshot FILE.json     validate against the schema
    check_outputs.py json FILE              parse
    check_outputs.py csv FILE               parse, rectangular
    check_outputs.py svg FILE.svg           well-formed (libxml2's xmllint), renders in librsvg and is not blank
    check_outputs.py alert-chart FILE.svg RULE   as svg, and it draws a firing span of some width and a rule
                                            whose title starts with RULE (such as "Fire threshold 20 Mbit/s")
    check_outputs.py index DIR/index.html   parses as HTML; every image and link it names is a file beside it
Prints what it found (counts) and exits non-zero with the reason on the first problem.
"""
import csv
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def png_ink(path):
    """The share of pixels of an 8-bit RGB(A) PNG that differ from its most common colour."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    position, compressed = 8, b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            compressed += body
    if depth != 8 or colour not in (2, 6):
        sys.exit("%s: PNG of depth %d and colour type %d" % (path, depth, colour))
    size = 4 if colour == 6 else 3
    stride = width * size
    raw = zlib.decompress(compressed)
    previous, counts, position = bytearray(stride), {}, 0
    for _ in range(height):
        kind, line = raw[position], bytearray(raw[position + 1:position + 1 + stride])
        position += 1 + stride
        for i in range(stride):  # undo the row filter (PNG specification, section 9)
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                best = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                line[i] = (line[i] + best[2]) & 255
        for i in range(0, stride, size):
            pixel = bytes(line[i:i + size])
            counts[pixel] = counts.get(pixel, 0) + 1
        previous = line
    return 1 - max(counts.values()) / (width * height)


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.targets = []

    def handle_starttag(self, tag, attributes):
        for name, value in attributes:
            if (tag, name) in (("img", "src"), ("a", "href"), ("object", "data")) and value:
                self.targets.append(value)


def check_alert_chart(path, rule):
    """The chart's marks carry <title> children (their tooltips): the firing span is a shape titled "Firing"
    with a width, the threshold a line titled with the rule's text."""
    import xml.etree.ElementTree as ElementTree
    namespace = "{http://www.w3.org/2000/svg}"
    titled = []
    for element in ElementTree.parse(path).iter():
        title = element.find(namespace + "title")
        if title is not None and title.text:
            titled.append((title.text, element))
    spans = [e for text, e in titled if text == "Firing" and e.tag == namespace + "rect"]
    if not spans:
        sys.exit("%s: no firing span (no rectangle titled Firing)" % path)
    if not any(float(span.get("width", "0")) > 0 and float(span.get("height", "0")) > 0 for span in spans):
        sys.exit("%s: the firing span has no area" % path)
    if not any(text.startswith(rule) for text, _ in titled):
        sys.exit("%s: no mark titled %r; titles: %s" % (path, rule, sorted({t for t, _ in titled})[:20]))


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
    elif kind in ("svg", "alert-chart"):
        for tool in ("xmllint", "rsvg-convert"):
            if shutil.which(tool) is None:
                sys.exit(tool + " is not installed (apt-get install libxml2-utils librsvg2-bin)")
        checked = subprocess.run(["xmllint", "--noout", path], capture_output=True, text=True)
        if checked.returncode != 0:
            sys.exit("%s: xmllint: %s" % (path, checked.stderr.strip()))
        with tempfile.TemporaryDirectory() as directory:
            png = os.path.join(directory, "render.png")
            rendered = subprocess.run(["rsvg-convert", "--width", "240", "--keep-aspect-ratio", path, "-o", png],
                                      capture_output=True, text=True)
            if rendered.returncode != 0:
                sys.exit("%s: rsvg-convert: %s" % (path, rendered.stderr.strip()))
            ink = png_ink(png)
        if ink < 0.003:
            sys.exit("%s: renders blank (%.4f of pixels differ from the background)" % (path, ink))
        if kind == "alert-chart":
            check_alert_chart(path, sys.argv[3])
        print("svg ok: %.3f of pixels inked" % ink)
    elif kind == "index":
        links = Links()
        links.feed(text)
        links.close()
        local = [target for target in links.targets if "://" not in target and not target.startswith("#")]
        for target in local:
            if not os.path.isfile(os.path.join(os.path.dirname(path), target.split("#")[0])):
                sys.exit("%s names %s, which is not there" % (path, target))
        print("index ok: %d local links and images" % len(local))
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
