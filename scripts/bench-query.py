#!/usr/bin/env python3
"""Times fresh `netpulse` processes answering queries on a bulk-loaded store.

Usage: bench-query.py NETPULSE CONFIG LABEL [RUNS] [cold]

Each query runs RUNS times (default 5) as a whole command, output to /dev/null; the table gives the median wall
time and the largest peak RSS (the store is read with pread, not mapped, so this is the process's own memory and
SQLite's page cache). With `cold` the page cache is dropped before every run (root), so the store is read from
disk.
"""
import datetime
import os
import statistics
import subprocess
import sys
import time

netpulse, config, label = sys.argv[1], sys.argv[2], sys.argv[3]
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
cold = len(sys.argv) > 5 and sys.argv[5] == "cold"

# An arbitrary 7-day window on 5-minute boundaries, ending about 21 hours ago: inside the last 8 days, where the
# largest stores keep their 5-minute rows (QueryBench.swift); the smaller ones have them for all 30 days.
now = datetime.datetime.now(datetime.timezone.utc)
start = (now - datetime.timedelta(days=7, hours=21)).replace(minute=35, second=0, microsecond=0)
week = ["--from", start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "--to", (start + datetime.timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%SZ")]

QUERIES = [
    ("top-10 interfaces by bytes, last 30 days", ["top", "--by", "bytes", "--last", "30d", "--format", "json"]),
    ("current 95th-percentile bills, every interface", ["bill", "--scope", "interface", "--format", "csv"]),
    ("top-10 interfaces by 95th percentile, a 7-day window", ["top", "--by", "p95", "--format", "json"] + week),
]


def run(arguments):
    """Wall time and peak RSS (bytes) of one fresh process."""
    if cold:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as caches:
            caches.write("3\n")
    began = time.monotonic()
    with open(os.devnull, "w") as devnull:
        child = subprocess.Popen([netpulse] + arguments + ["--config", config], stdout=devnull)
        _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.monotonic() - began
    if status != 0:
        sys.exit(f"netpulse {' '.join(arguments)} failed (status {status})")
    return elapsed, usage.ru_maxrss * 1024


for name, arguments in QUERIES:
    times = []
    peak = 0
    for _ in range(runs):
        elapsed, maxrss = run(arguments)
        times.append(elapsed)
        peak = max(peak, maxrss)
    print(f"  {label:<28} {name:<52} {statistics.median(times) * 1000:9.0f} ms  "
          f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}), peak RSS {peak / 1048576:.0f} MiB")
