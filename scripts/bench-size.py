#!/usr/bin/env python3
"""Store size per interface at the default retention, beside an rrdtool RRD of the same resolutions.

Usage: bench-size.py STORE.db INTERFACES HOURS WORKDIR

STORE.db was filled by `netpulse-bench fill` with INTERFACES interfaces for HOURS hours. Each table is weighed with
SQLite's dbstat (pages, indexes included) and scaled to the retention the configuration reference gives
(docs/configuration.md, [retention]): raw 48 h, 1 min 30 days, 5 min 400 days, 1 h 730 days, 1 day for ever (shown
per 10 years, as an RRD must be given a length). A level's size is its bytes per row (dbstat) times the rows it holds
when full: a bucket per series per period (host, group and fleet series shared out over the interfaces), a raw row
per agent per 10-second batch.
The RRD is made by `rrdtool create` with one RRA per resolution and is weighed with stat: rrdtool allocates a
file's whole length at creation.
"""
import os
import sqlite3
import subprocess
import sys

path, interfaces, hours, workdir = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
DAY = 24.0
# Level, table, retention in hours, RRD step in seconds, rows the RRD keeps.
LEVELS = [
    ("raw (1 s)", "raw", 48.0, 1, 48 * 3600),
    ("1 min", "rollup_60s", 30 * DAY, 60, 30 * 1440),
    ("5 min", "rollup_300s", 400 * DAY, 300, 400 * 288),
    ("1 h", "rollup_3600s", 730 * DAY, 3600, 730 * 24),
    ("1 day (10 years)", "rollup_86400s", 3650 * DAY, 86400, 3650),
]

db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
pages = {name: size for name, size in db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")}
indexes = {}
for name, table in db.execute("SELECT name, tbl_name FROM sqlite_schema WHERE type = 'index'"):
    indexes.setdefault(table, []).append(name)


def weight(table):
    return pages.get(table, 0) + sum(pages.get(index, 0) for index in indexes.get(table, []))


def full_size(table, keep_hours, step):
    """Bytes per interface of `table` holding `keep_hours` of data."""
    rows = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    if table == "raw":
        full_rows = rows / hours * keep_hours
    else:
        series = db.execute(f"SELECT COUNT(DISTINCT series_id) FROM {table}").fetchone()[0]
        full_rows = series * keep_hours * 3600 / step
    return weight(table) / rows * full_rows / interfaces


# The RRD: the eight counters the rollups sum (bytes, packets, errors and drops, in and out) and the link speed;
# an AVERAGE archive at 1 s for the raw samples, AVERAGE and MAX (the peak rate) at every rolled-up level.
rrd = os.path.join(workdir, "interface.rrd")
sources = [f"DS:{name}:COUNTER:120:0:U" for name in
           ["rx_bytes", "rx_packets", "rx_errors", "rx_drops", "tx_bytes", "tx_packets", "tx_errors", "tx_drops"]]
sources.append("DS:speed:GAUGE:120:0:U")
archives = ["RRA:AVERAGE:0.5:1:%d" % LEVELS[0][4]]
for _, _, _, step, rows in LEVELS[1:]:
    archives += ["RRA:AVERAGE:0.5:%d:%d" % (step, rows), "RRA:MAX:0.5:%d:%d" % (step, rows)]
subprocess.run(["rrdtool", "create", rrd, "--step", "1", "--start", "now-10s"] + sources + archives, check=True)

# One archive alone, to give the RRD's size level by level.
def rrd_size(archive_list):
    single = os.path.join(workdir, "one.rrd")
    subprocess.run(["rrdtool", "create", single, "--step", "1", "--start", "now-10s"] + sources + archive_list,
                   check=True)
    size = os.path.getsize(single)
    os.remove(single)
    return size


empty = rrd_size(["RRA:AVERAGE:0.5:1:1"])


def mib(value):
    return f"{value / 1048576:.2f} MiB" if value >= 1048576 else f"{value / 1024:.1f} KiB"


print(f"store size per interface at the default retention ({interfaces} interfaces filled for {hours:g} h, "
      f"scaled; busy interfaces, every counter moving every second):")
print(f"  {'level':<18} {'kept':>10} {'netpulse':>12} {'rrdtool RRD':>12}")
ours_total = 0
rrd_total = 0
for (label, table, keep, step, rows), archive in zip(
        LEVELS, [archives[0:1]] + [archives[1 + 2 * i:3 + 2 * i] for i in range(len(LEVELS) - 1)]):
    ours = full_size(table, keep, step)
    theirs = rrd_size(archive) - empty
    ours_total += ours
    rrd_total += theirs
    kept = f"{keep / DAY:g} d" if keep >= DAY else f"{keep:g} h"
    print(f"  {label:<18} {kept:>10} {mib(ours):>12} {mib(theirs):>12}")
state = sum(size for name, size in pages.items()
            if not any(name == table or name in indexes.get(table, []) for _, table, _, _, _ in LEVELS))
print(f"  {'catalogue, state':<18} {'':>10} {mib(state / interfaces):>12} {mib(empty):>12}")
ours_total += state / interfaces
print(f"  {'total':<18} {'':>10} {mib(ours_total):>12} {mib(os.path.getsize(rrd)):>12}")
print(f"  rrdtool's file, all archives: {os.path.getsize(rrd)} bytes (sum of the parts: {rrd_total + empty})")
