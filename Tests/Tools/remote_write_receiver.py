#!/usr/bin/env python3
"""A remote-write receiver for the tests, standing where Prometheus, Mimir or VictoriaMetrics would.

    remote_write_receiver.py --port-file PATH --log PATH [--statuses 500,200]

Listens on 127.0.0.1 (a free port, written to --port-file once it listens), answers each POST with the next
status of --statuses (200 once the list is used up), and appends one JSON line per request to --log: the status it
answered, the headers the remote-write 1.0 specification requires, and the request decoded: a list of series, each
{"labels": {...}, "samples": [[timestamp_ms, value], ...]}, or "error" when the body is not a snappy-compressed
WriteRequest.

The snappy block format and the protobuf wire format are decoded here from their published descriptions (snappy's
format_description.txt; protobuf's encoding guide; the field numbers of prometheus/prompb: WriteRequest.timeseries
= 1; TimeSeries.labels = 1, samples = 2; Label.name = 1, value = 2; Sample.value = 1 (double), timestamp = 2), not
with the libraries netpulsed uses, so the test checks what went over the wire independently.
"""

import json
import struct
import sys

import scripted_receiver


def varint(data, position):
    value = 0
    shift = 0
    while True:
        if position >= len(data):
            raise ValueError("truncated varint")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte & 0x80 == 0:
            return value, position
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def snappy_uncompress(data):
    """Snappy's block format: the uncompressed length as a varint, then literals and back-references."""
    length, position = varint(data, 0)
    output = bytearray()
    while position < len(data):
        tag = data[position]
        position += 1
        kind = tag & 3
        if kind == 0:  # literal
            size = tag >> 2
            if size >= 60:
                extra = size - 59
                size = int.from_bytes(data[position:position + extra], "little")
                position += extra
            size += 1
            output += data[position:position + size]
            position += size
            continue
        if kind == 1:  # copy, 1-byte offset
            size = ((tag >> 2) & 7) + 4
            offset = ((tag >> 5) << 8) | data[position]
            position += 1
        elif kind == 2:  # copy, 2-byte offset
            size = (tag >> 2) + 1
            offset = int.from_bytes(data[position:position + 2], "little")
            position += 2
        else:  # copy, 4-byte offset
            size = (tag >> 2) + 1
            offset = int.from_bytes(data[position:position + 4], "little")
            position += 4
        if offset == 0 or offset > len(output):
            raise ValueError("bad copy offset")
        for _ in range(size):  # byte by byte: a copy may overlap what it writes
            output.append(output[-offset])
    if len(output) != length:
        raise ValueError(f"uncompressed {len(output)} bytes, header says {length}")
    return bytes(output)


def fields(data):
    """The (field number, wire type, value) of a protobuf message."""
    position = 0
    while position < len(data):
        key, position = varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = varint(data, position)
        elif wire == 1:
            value = data[position:position + 8]
            position += 8
        elif wire == 2:
            size, position = varint(data, position)
            value = data[position:position + size]
            position += size
        elif wire == 5:
            value = data[position:position + 4]
            position += 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def write_request(data):
    series = []
    for number, wire, value in fields(data):
        if number != 1 or wire != 2:
            raise ValueError(f"unexpected WriteRequest field {number}")
        labels = {}
        samples = []
        for field, kind, part in fields(value):
            if field == 1 and kind == 2:
                pair = {1: "", 2: ""}
                for n, _, text in fields(part):
                    pair[n] = text.decode("utf-8")
                labels[pair[1]] = pair[2]
            elif field == 2 and kind == 2:
                sample_value, timestamp = 0.0, 0
                for n, k, raw in fields(part):
                    if n == 1 and k == 1:
                        sample_value = struct.unpack("<d", raw)[0]
                    elif n == 2 and k == 0:
                        timestamp = raw - (1 << 64) if raw >= 1 << 63 else raw
                samples.append([timestamp, sample_value])
            else:
                raise ValueError(f"unexpected TimeSeries field {field}")
        series.append({"labels": labels, "samples": samples})
    return series


def record(request, status, body):
    entry = {
        "status": status,
        "content_encoding": request.headers.get("Content-Encoding"),
        "content_type": request.headers.get("Content-Type"),
        "version": request.headers.get("X-Prometheus-Remote-Write-Version"),
    }
    try:
        entry["series"] = write_request(snappy_uncompress(body))
    except Exception as error:  # reported to the test, which fails on it
        entry["error"] = str(error)
    return entry


def answer(status):
    return None, b"" if status < 300 else f"status {status} from the test receiver\n".encode()


def main():
    return scripted_receiver.serve(record, answer)


if __name__ == "__main__":
    sys.exit(main())
