#!/usr/bin/env python3
"""Reference computation of Netpulse's figures, written from docs/windows.md and docs/configuration.md alone.

Reads a case (JSON on stdin: the daemon's configuration file as netpulsed reads it, batches of counter samples as
agents send them, the order they arrive in, and the queries to answer) and prints what docs/windows.md says the
rollups, window figures and bills are (JSON on stdout). It shares no code, constant or setting with the Swift
implementation: every setting comes from the configuration text, with the defaults docs/configuration.md gives,
and the tests feed both the same case and compare.

Everything is integer arithmetic, as the document specifies, so results must agree to the last digit.
"""

import fnmatch
import json
import os
import sys
import tomllib
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

COUNTERS = ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_dropped", "tx_dropped"]
EVENTS = ["epoch", "wrap", "reset", "implausible", "clock", "ambiguous"]
U64 = (1 << 64) - 1
I64 = (1 << 63) - 1
DAY = 86_400_000


def floor_div(a, b):
    return a // b


# ---------------------------------------------------------------------------------------------------------------
# The daemon's configuration (docs/configuration.md): the same TOML text netpulsed reads, with the defaults that
# page gives for every key it leaves out.

DURATION_UNITS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def duration(text):
    """'250ms', '10s', '5m', '48h', '7d' (docs/configuration.md, "Durations") in milliseconds."""
    for unit in ("ms", "s", "m", "h", "d"):
        if text.endswith(unit) and text[:-len(unit)].isdigit():
            return int(text[:-len(unit)]) * DURATION_UNITS[unit]
    raise ValueError("not a duration: %r" % text)


def system_zone():
    """The system's zone as docs/configuration.md defines it for an unset [daemon] time_zone (the stores the oracle
    checks are new, so none has recorded another): the tz database name /etc/localtime links to, else the one in
    /etc/timezone; UTC when neither names one, and UTC's other names are UTC."""
    name = ""
    try:
        target = os.readlink("/etc/localtime")
        if "zoneinfo/" in target:
            name = target.split("zoneinfo/", 1)[1]
    except OSError:
        try:
            with open("/etc/timezone") as handle:
                name = handle.read().strip()
        except OSError:
            pass
    if name in ("", "UTC", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu"):
        return "UTC"
    return name


class Config:
    """What the oracle needs of a netpulsed.toml, defaults from docs/configuration.md."""

    def __init__(self, text):
        doc = tomllib.loads(text)
        daemon, ingest, rollups = doc.get("daemon", {}), doc.get("ingest", {}), doc.get("rollups", {})
        self.time_zone = daemon.get("time_zone") or system_zone()
        self.levels = [duration(level) for level in rollups.get("levels", ["1m", "5m", "1h", "1d"])]
        # [retention]: how long each level's buckets are kept (None: for ever), by the level's name.
        retention = doc.get("retention", {})
        kept = {"1m": "30d", "5m": "400d", "1h": "730d", "1d": "forever"}
        self.keep = {}
        for level in rollups.get("levels", ["1m", "5m", "1h", "1d"]):
            text = retention.get(level, kept.get(level, "forever"))
            self.keep[duration(level)] = None if text == "forever" else duration(text)
        self.max_rate = ingest.get("max_rate", 50_000_000_000)
        self.clock_tolerance = duration(ingest.get("clock_tolerance", "30s"))
        self.max_skew = duration(ingest.get("max_skew", "1d"))
        self.max_age = duration(ingest.get("max_age", "14d"))
        self.outage_after = duration(ingest.get("outage_after", "15m"))
        aggregation = doc.get("aggregation", {})
        # [aggregation] and [aggregation.NAME]: (kinds, exclude globs) for the fleet and hosts, and per group.
        self.rule = (set(aggregation.get("count", ["bond", "physical"])), aggregation.get("exclude", []))
        self.group_rules = []
        for name, table in aggregation.items():
            if isinstance(table, dict):
                self.group_rules.append((table["match"], (set(table.get("count", list(self.rule[0]))),
                                                          table.get("exclude", self.rule[1]))))
        labels = doc.get("labels", {})
        self.from_agents = labels.get("from_agents", [])
        self.own_labels = {agent: table for agent, table in labels.items() if isinstance(table, dict)}
        billing = doc.get("billing", {})
        self.group_by = billing.get("group_by", [])
        self.billing_zone = billing.get("time_zone", self.time_zone)
        self.close_after = duration(billing.get("close_after", "1h"))
        self.terms = {"day": billing.get("day", 1), "method": billing.get("method", "max"),
                      "interpolated": billing.get("interpolated", "count"), "flagged": billing.get("flagged", "count"),
                      "rank": billing.get("rank", "round")}
        self.overrides = [(table["match"], table) for table in billing.values() if isinstance(table, dict)]

    def labels(self, agent, sent):
        """docs/windows.md, "Scopes": of what an agent sends, the keys [labels] from_agents allows (never one of
        [billing] group_by), then the daemon's own labels for it, which win."""
        own = self.own_labels.get(agent, {})
        result = {key: value for key, value in sent.items()
                  if key in self.from_agents and key not in self.group_by and key not in own}
        result.update(own)
        return result

    def group_rule(self, group):
        for match, rule in self.group_rules:
            if match == group:
                return rule
        return self.rule

    def billing_terms(self, scope):
        """A scope's terms: the first [billing.NAME] whose match names it (the fleet, a group, an agent or
        agent/interface), over [billing]."""
        terms = dict(self.terms)
        for match, table in self.overrides:
            if match == scope:
                for key in ("day", "method", "interpolated", "flagged", "rank"):
                    if key in table:
                        terms[key] = table[key]
                break
        for key, allowed in (("method", ("in", "out", "max", "sum")), ("interpolated", ("count", "exclude")),
                             ("flagged", ("count", "exclude")), ("rank", ("round", "nearest-rank"))):
            if terms[key] not in allowed:
                raise ValueError("[billing] %s = %r is none of %s" % (key, terms[key], allowed))
        if not 1 <= terms["day"] <= 31:
            raise ValueError("[billing] day = %r is not a day of the month" % terms["day"])
        return terms


# ---------------------------------------------------------------------------------------------------------------
# Counting a step (docs/windows.md, "Counting a step" and "Ceilings")

def bytes_ceiling(speed, elapsed, max_rate):
    if speed > 0:
        value = speed * 125 * elapsed * 3 // 2
    else:
        value = max_rate * elapsed * 3 // 2000
    return min(min(value, U64) + 65536, U64)


def step_start(p, n):
    """"A new epoch's counts begin with it": A is N's epoch start when the epochs differ and it lies strictly
    between the two samples, else P.t."""
    began = n["began"]
    if p["epoch"] != n["epoch"] and began is not None and p["t"] < began < n["t"]:
        return began
    return p["t"]


def count_step(p, n, max_rate, max_age, outage_after):
    """Returns (counted[8], timing, events set)."""
    a = step_start(p, n)
    g = n["t"] - a
    events = set()
    if n["shifted"]:
        events.add("clock")
    same_epoch = p["epoch"] == n["epoch"]
    counted = [0] * 8
    if same_epoch:
        elapsed = g if g > 0 else n["interval"]
        bc = bytes_ceiling(n["speed"], elapsed, max_rate)
        pc = min(bc // 84 + 64, U64)
        m = 2**32
        judged = []
        for i in range(8):
            ceiling = bc if i < 2 else pc
            before, after = p["c"][i], n["c"][i]
            # "Counting a step": a 32-bit counter's count with one wrap when it went down; more than one count
            # fitting the ceiling (delta + m <= C) is ambiguous, and the least that fits is counted.
            if n["width"] == 32 and before < m and after < m:
                delta = after - before if after >= before else m - before + after
                if delta + m <= ceiling:
                    judged.append(("ambiguous", after - before if after >= before else after))
                    continue
            if after >= before:
                judged.append(("implausible" if after - before > ceiling else "up", after - before))
            elif n["width"] == 32 and before < m and after < m and (m - before + after) <= ceiling:
                judged.append(("wrap", m - before + after))
            else:
                judged.append(("reset", after))
        kinds = {kind for kind, _ in judged}
        # "A reset is the sample's": one clear reset makes the step a reset; every counter that went down counts n.
        sample_reset = "reset" in kinds
        for i, (kind, value) in enumerate(judged):
            counted[i] = n["c"][i] if sample_reset and n["c"][i] < p["c"][i] else value
        for kind in ("ambiguous", "implausible", "reset"):
            if kind in kinds:
                events.add(kind)
        if "wrap" in kinds and not sample_reset:
            events.add("wrap")
    else:
        counted = list(n["c"])
        events.add("epoch")
    # No step counts more than 2**63 - 1 of a counter ("Counting a step").
    counted = [min(value, I64) for value in counted]
    # "Time that cannot be placed": checked before the other classes.
    # A step that starts at N's epoch start owes nothing to P's time.
    if (not p["placeable"] and a == p["t"]) or not n["placeable"] or g > max_age:
        return counted, "unplaced", events
    if g <= 0:
        timing = "instant"
        events.add("clock")
    elif same_epoch and 2 * g <= 3 * n["interval"]:
        timing = "measured"
    elif same_epoch and n["heartbeat"] > 0 and p["c"] == n["c"] and 2 * g <= 2 * n["heartbeat"] + 3 * n["interval"]:
        timing = "idle"
    elif g > outage_after:
        # "Time classes": a gap longer than outage_after is an outage, spread but not covered.
        timing = "outage"
    else:
        timing = "gap"
    return counted, timing, events


# ---------------------------------------------------------------------------------------------------------------
# Buckets: a list of 20 numbers, in the order of the rollup columns:
# 0-7 the eight counters, 8 measured ms, 9 interpolated ms, 10 peak rx, 11 peak tx, 12 speed, 13-18 events,
# 19 flagged ms, 20 member ms, 21 capacity (Mbit/s x ms).

FLAGGED = 13 + len(EVENTS)
MEMBER, CAPACITY = FLAGGED + 1, FLAGGED + 2
SUMS = list(range(10)) + list(range(13, CAPACITY + 1))


def new_bucket():
    return [0] * (CAPACITY + 1)


def spread(counted, timing, events, p, n, width, add, within=None):
    """Calls add(start, part) for each bucket of `width` the step touches; with `within` (lo, hi), only for the part of
    its span in [lo, hi) ("Scopes": the time its agent was in a group), F of the whole step restricted to it, the
    events only with the part that holds the step's end."""
    ev = [1 if e in events else 0 for e in EVENTS]
    if timing == "instant":
        add(n["t"] // width * width, list(counted) + [0, 0, 0, 0, 0] + ev + [0, 0, 0])  # no time, peaks or speed
        return
    t0, t1 = step_start(p, n), n["t"]
    g = t1 - t0
    peak_rx = peak_tx = 0
    # "Peaks": only a measured step at least half an interval long (2g >= I) gives one.
    if timing == "measured" and 2 * g >= n["interval"]:
        peak_rx = counted[0] * 1000 // g
        peak_tx = counted[1] * 1000 // g
    speed = n["speed"] if timing in ("measured", "idle") else 0
    event_bucket = (t1 - 1) // width * width
    first, last = (t0, t1) if within is None else (max(t0, within[0]), min(t1, within[1]))
    if last < t1:
        event_bucket = None
    b = first // width * width
    while b < last:
        lo, hi = max(b, first), min(b + width, last)
        part = [counted[i] * (hi - t0) // g - counted[i] * (lo - t0) // g for i in range(8)]
        # Measured and idle steps' time is measured, a gap's interpolated, an outage's neither.
        part += {"gap": [0, hi - lo], "outage": [0, 0]}.get(timing, [hi - lo, 0])
        part += [peak_rx, peak_tx, speed]
        part += ev if b == event_bucket else [0] * len(EVENTS)
        part += [hi - lo if "implausible" in events else 0]  # flagged ms
        # "Rollups": every class spread is member time, and its overlap times N's speed capacity.
        part += [hi - lo, (hi - lo) * n["speed"]]
        add(b, part)
        b += width


def merge(into, part, sums_only=False):
    for i in SUMS:
        into[i] += part[i]
    if not sums_only:
        for i in (10, 11, 12):
            if part[i] > into[i]:
                into[i] = part[i]


# ---------------------------------------------------------------------------------------------------------------
# Scopes (docs/windows.md, "Scopes")

def counts(rule, kind, relation, name):
    """"No double counting": whether an interface of this kind and relation counts under a rule (kinds, globs)."""
    kinds, exclude = rule
    if kind not in kinds:
        return False
    if "bond_slave" in relation and "bond" in kinds:
        return False
    if "bridge_port" in relation and "bridge" in kinds:
        return False
    return not any(fnmatch.fnmatchcase(name, pattern) for pattern in exclude)


# ---------------------------------------------------------------------------------------------------------------

def samples_of(config, batches):
    """Every sample by logical interface, with the clock check applied per batch ("Clocks"), and whether its time
    can be placed ("Time that cannot be placed")."""
    by_interface = {}
    for arrival, batch in enumerate(batches):
        received = batch["received"]
        last = max(s[1] for section in batch["sections"] for s in section["samples"])
        ahead = last - received
        shift = -ahead if config.clock_tolerance < ahead <= config.max_skew else 0
        for section in batch["sections"]:
            key = (batch["agent"], section["name"])
            links = sorted(section["links"])
            for tick, t, c in section["samples"]:
                speed, kind, relation = 0, "unknown", []
                for link in links:
                    if link[0] <= tick:
                        speed, kind, relation = link[1], link[2], link[3]
                by_interface.setdefault(key, []).append({
                    "order": batch["order"], "tick": tick, "t": t + shift, "c": c, "received": received,
                    "arrival": arrival,
                    "placeable": received - config.max_age <= t + shift <= received + config.clock_tolerance,
                    "epoch": (section["boot"], section["ifindex"], section["width"]), "width": section["width"],
                    "interval": batch["interval"], "heartbeat": batch["heartbeat"], "speed": speed, "kind": kind,
                    "relation": relation, "shifted": shift != 0,
                    # "Words": the epoch's start, moved by the clock check with its batch; None when not known.
                    "began": section["began"] + shift if section.get("began") is not None else None,
                })
    for samples in by_interface.values():
        samples.sort(key=lambda s: (s["order"], s["tick"]))
    return by_interface


def memberships_of(config, agents, batches):
    """"Scopes": each agent's groups (its labels as the daemon takes them, one group per key=value) with their
    history. A batch whose labels differ from the agent's changes them at its receive time, in arrival order, unless
    it was received before the agent's groups last changed (labels move forward in receive time only); a batch
    carries the labels its agent sent (the case's "labels"), or the agent's. Returns agent -> [[group, from, to,
    since, until]]: since and until are the arrival indices of the batches that began and ended the membership."""
    sent = {agent["name"]: agent["labels"] for agent in agents}
    history = {}
    for arrival, batch in enumerate(batches):
        agent = batch["agent"]
        groups = {"%s=%s" % item for item in config.labels(agent, batch.get("labels", sent[agent])).items()}
        received = batch["received"]
        if agent not in history:
            history[agent] = [[group, received, None, arrival, None] for group in sorted(groups)]
            continue
        current = {membership[0] for membership in history[agent] if membership[2] is None}
        last_move = max((max(m[1], m[2] if m[2] is not None else m[1]) for m in history[agent]), default=None)
        if current == groups or (last_move is not None and received < last_move):
            continue
        for membership in history[agent]:
            if membership[2] is None and membership[0] not in groups:
                membership[2] = received
                membership[4] = arrival
        history[agent] += [[group, received, None, arrival, None] for group in sorted(groups - current)]
    return history


def recorded_by(history, arrival):
    """"Scopes": a step's groups are worked out when it is formed, when the later of its two samples arrives, with the
    memberships recorded by then: the history as it stood after the batch at index `arrival`, as [group, from, to]."""
    return [[group, start, end if until is not None and until <= arrival else None]
            for group, start, end, since, until in history if since <= arrival]


def groups_at(memberships, t):
    """The groups in force at t; before the first membership began, the first ones."""
    if not memberships:
        return []
    at = max(t, min(membership[1] for membership in memberships))
    return sorted(group for group, start, end in memberships if start <= at and (end is None or at < end))


def group_parts(memberships, start, end):
    """The parts of [start, end) between the times the agent's groups change, each with its groups."""
    cuts = sorted({start} | {time for membership in memberships for time in membership[1:]
                             if time is not None and start < time < end})
    return [((lo, hi), groups_at(memberships, lo)) for lo, hi in zip(cuts, cuts[1:] + [end])]


def rollups(config, agents, batches, levels=None):
    """The buckets of every series at `levels` (default: every level), and the unplaced totals by series and UTC day
    of receipt."""
    memberships = memberships_of(config, agents, batches)
    series = {}
    unplaced = {}

    def bucket_of(name, width, start):
        return series.setdefault(name, {}).setdefault(width, {}).setdefault(start, new_bucket())

    for (agent, interface), samples in samples_of(config, batches).items():
        series.setdefault("interface:%s/%s" % (agent, interface), {})
        for p, n in zip(samples, samples[1:]):
            counted, timing, events = count_step(p, n, config.max_rate, config.max_age, config.outage_after)
            targets = []
            if counts(config.rule, n["kind"], n["relation"], interface):
                targets += ["host:" + agent, "fleet"]
            history = recorded_by(memberships.get(agent, []), max(p["arrival"], n["arrival"]))

            def in_groups(groups):
                """Of `groups`, those whose rule counts the interface (by N's kind)."""
                return ["group:" + group for group in groups
                        if counts(config.group_rule(group), n["kind"], n["relation"], interface)]
            if timing == "unplaced":
                # The step's receive time: the later of its two samples' batches' receive times; the groups then.
                received = max(p["received"], n["received"])
                day = received // DAY * DAY
                groups = in_groups(groups_at(history, received))
                for name in ["interface:%s/%s" % (agent, interface)] + targets + groups:
                    series.setdefault(name, {})  # a series with no bucket still exists
                    row = unplaced.setdefault(name, {}).setdefault(day, [0] * 9)
                    for i in range(8):
                        row[i] += counted[i]
                    row[8] += 1
                continue
            # "Scopes": an instant step goes to the groups at N.t; a step with a span to the groups of each part of
            # it, by time.
            if timing == "instant":
                parts = [(None, in_groups(groups_at(history, n["t"])))]
            else:
                parts = [(part, in_groups(groups)) for part, groups in group_parts(history, step_start(p, n), n["t"])]
            for target in targets + [group for _, groups in parts for group in groups]:
                series.setdefault(target, {})
            for width in config.levels if levels is None else levels:
                def add(start, part):
                    merge(bucket_of("interface:%s/%s" % (agent, interface), width, start), part)
                    for target in targets:
                        merge(bucket_of(target, width, start), part, sums_only=True)
                spread(counted, timing, events, p, n, width, add)
                for within, groups in parts:
                    def add_to_groups(start, part):
                        for group in groups:
                            merge(bucket_of(group, width, start), part, sums_only=True)
                    spread(counted, timing, events, p, n, width, add_to_groups, within)
    return series, unplaced


# ---------------------------------------------------------------------------------------------------------------
# Named windows and their resolution (docs/windows.md, "Windows")

def local_day(zone, at):
    return datetime.fromtimestamp(at / 1000, tz=zone).date()


def midnight(zone, date):
    return int(datetime(date.year, date.month, date.day, tzinfo=zone).timestamp() * 1000)


def calendar_span(zone, unit, at):
    """The day, ISO week (Monday to Monday), month or year of the zone holding `at`."""
    date = local_day(zone, at)
    if unit == "day":
        first, after = date, date + timedelta(days=1)
    elif unit == "week":
        first = date - timedelta(days=date.weekday())
        after = first + timedelta(days=7)
    elif unit == "month":
        first = date.replace(day=1)
        after = (first + timedelta(days=32)).replace(day=1)
    else:
        first = date.replace(month=1, day=1)
        after = first.replace(year=first.year + 1)
    return midnight(zone, first), midnight(zone, after)


def named_window(config, name, now):
    """[from, to) of a window named as the CLI and snapshots name them."""
    zone = ZoneInfo(config.time_zone)
    if name.startswith("last-") and name not in ("last-week", "last-month", "last-billing-period"):
        finest = min(config.levels)
        to = now // finest * finest + finest
        return (to - duration(name[len("last-"):])) // finest * finest, to
    if name in ("billing-period", "last-billing-period"):
        start, end = billing_period(config.billing_zone, config.terms["day"], now)
        return billing_period(config.billing_zone, config.terms["day"], start - 1) if name.startswith("last") \
            else (start, end)
    unit = {"today": "day", "yesterday": "day", "this-week": "week", "last-week": "week",
            "this-month": "month", "last-month": "month", "this-year": "year"}[name]
    start, end = calendar_span(zone, unit, now)
    return calendar_span(zone, unit, start - 1) if name in ("yesterday", "last-week", "last-month") else (start, end)


def resolution(config, start, end, now):
    """The level a window is read at: of the levels whose width divides both ends and that are kept for the whole
    window, the finest giving at most 10,080 buckets, else the coarsest; None when there is none."""
    candidates = sorted(width for width in config.levels
                        if start % width == 0 and end % width == 0
                        and (config.keep[width] is None or start >= now - config.keep[width]))
    for width in candidates:
        if (end - start) // width <= 10_080:
            return width
    return candidates[-1] if candidates else None


# ---------------------------------------------------------------------------------------------------------------
# Windows, figures and bills (docs/windows.md, "Windows" and "95th-percentile billing")

def rate(byte_count, ms):
    return byte_count * 1_000_000 // ms if ms > 0 else None


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, (p * len(sorted_values) + 50) // 100 - 1))
    return sorted_values[index]


def figures(buckets, width, window, now, is_interface):
    start, end = window
    inside = sorted((s, b) for s, b in buckets.items() if start <= s < end)
    totals = new_bucket()
    # "members" and a scope's speed: the largest of its buckets' (those begun by now), each its member time and its
    # capacity over its time up to now, rounded up; an interface is 1 member of its largest speed.
    members, scope_speed = (1, 0) if is_interface else (0, 0)
    for s, b in inside:
        merge(totals, b)
        if not is_interface and s < now:
            time = min(s + width, now) - s
            members = max(members, -(-b[MEMBER] // time))
            scope_speed = max(scope_speed, -(-b[CAPACITY] // time))
    elapsed = max(0, min(end, now) - start)
    rx_rates, tx_rates = [], []
    last = [None, None]
    for s, b in inside:
        if b[8] + b[9] > 0 and s < now:
            if s + width <= now:
                rx, tx = rate(b[0], width), rate(b[1], width)
            else:
                # "bucket rate": the bucket holding now, over the time its data covers per member.
                covered = b[8] + b[9]
                rx = b[0] * 1_000_000 * max(members, 1) // covered
                tx = b[1] * 1_000_000 * max(members, 1) // covered
            rx_rates.append(rx)
            tx_rates.append(tx)
            last = [rx, tx]
    rx_rates.sort()
    tx_rates.sort()
    average = [rate(totals[0], elapsed), rate(totals[1], elapsed)]
    packets = totals[2] + totals[3]
    possible = elapsed * max(members, 1)
    link = totals[12] if is_interface else scope_speed

    def util(value):
        return value * 8 // (link * 100_000) if value is not None and link > 0 else None

    def ppm(part, whole):
        return part * 1_000_000 // whole if whole > 0 else None

    if is_interface:
        peak = [totals[10] * 1000, totals[11] * 1000] if rx_rates else [None, None]
    else:
        peak = [rx_rates[-1] if rx_rates else None, tx_rates[-1] if tx_rates else None]
    return {
        "bytes": [totals[0], totals[1]],
        "average": average,
        "minimum": [rx_rates[0] if rx_rates else None, tx_rates[0] if tx_rates else None],
        "maximum": [rx_rates[-1] if rx_rates else None, tx_rates[-1] if tx_rates else None],
        "last": last,
        "p50": [percentile(rx_rates, 50), percentile(tx_rates, 50)],
        "p95": [percentile(rx_rates, 95), percentile(tx_rates, 95)],
        "p99": [percentile(rx_rates, 99), percentile(tx_rates, 99)],
        "utilisation": [util(average[0]), util(average[1])],
        "peak": peak,
        "error_ratio": ppm(totals[4] + totals[5], packets),
        "drop_ratio": ppm(totals[6] + totals[7], packets),
        "coverage": ppm(totals[8] + totals[9], possible) or 0,
        "measured_coverage": ppm(totals[8], possible) or 0,
        "buckets_with_data": len(rx_rates),
        "members": members,
    }


def local_midnight(zone, year, month, day):
    return int(datetime(year, month, day, tzinfo=zone).timestamp() * 1000)


def billing_period(zone_name, day, at):
    zone = ZoneInfo(zone_name)
    local = datetime.fromtimestamp(at / 1000, tz=zone)

    def start_of(year, month):
        if month == 13:
            year, month = year + 1, 1
        if month == 0:
            year, month = year - 1, 12
        days = (datetime(year + (month == 12), month % 12 + 1, 1) - datetime(year, month, 1)).days
        return local_midnight(zone, year, month, min(day, days)), (year, month)

    start, (year, month) = start_of(local.year, local.month)
    if start > at:
        start, (year, month) = start_of(local.year, local.month - 1)
    end, _ = start_of(year, month + 1)
    return start, end


def bill_percentile(sorted_values, rank):
    """"95th-percentile billing": the rate at the rank round(0.95 n) (halves up) or, for nearest-rank, ceil(0.95 n)."""
    if not sorted_values:
        return None
    n = len(sorted_values)
    position = (95 * n + 50) // 100 if rank == "round" else -(-95 * n // 100)
    return sorted_values[min(n - 1, max(0, position - 1))]


def bill(buckets, period, now, method, terms):
    start, end = period
    rx, tx, total = [], [], []
    measured = interpolated = flagged = 0
    for s, b in buckets.items():
        if not (start <= s and s + 300_000 <= min(now, end)):
            continue
        # Measured (measured time), else interpolated (interpolated time), else missing; flagged when it holds an
        # implausible step (flagged time, or an implausible count for an instant step).
        if b[8] > 0:
            measured += 1
        elif b[9] > 0:
            interpolated += 1
        else:
            continue
        is_flagged = b[FLAGGED] > 0 or b[13 + EVENTS.index("implausible")] > 0
        flagged += is_flagged
        if b[8] == 0 and terms["interpolated"] == "exclude":
            continue
        if is_flagged and terms["flagged"] == "exclude":
            continue
        r, t = b[0] * 1_000_000 // 300_000, b[1] * 1_000_000 // 300_000
        rx.append(r)
        tx.append(t)
        total.append(r + t)
    rx.sort()
    tx.sort()
    total.sort()
    ended = max(0, min(now, end) - start) // 300_000
    rank = terms["rank"]
    p_rx, p_tx, p_sum = bill_percentile(rx, rank), bill_percentile(tx, rank), bill_percentile(total, rank)
    value = {"in": p_rx, "out": p_tx, "sum": p_sum,
             "max": max(p_rx, p_tx) if p_rx is not None and p_tx is not None else None}[method]
    return {"period": [start, end], "intervals": len(rx), "missing": ended - measured - interpolated,
            "measured": measured, "interpolated": interpolated, "flagged": flagged, "in": p_rx, "out": p_tx,
            "sum": p_sum, "value": value, "method": method, "rank_rule": rank}


def billing_scope(series):
    """How [billing.NAME] match names a series: fleet, a group key=value, an agent, or agent/interface."""
    kind, _, name = series.partition(":")
    return "fleet" if kind == "fleet" else name


def bills(config, series, at, now):
    """Every series' bill of the billing period holding `at`, by the series' terms."""
    result = []
    for name in sorted(series):
        terms = config.billing_terms(billing_scope(name))
        period = billing_period(config.billing_zone, terms["day"], at)
        bill_ = bill(series[name].get(300_000, {}), period, now, terms["method"], terms)
        bill_["series"] = name
        result.append(bill_)
    return result


def main():
    case = json.load(sys.stdin)
    config = Config(case["config"])
    series, unplaced = rollups(config, case["agents"], case["batches"])
    queries = case["queries"]
    now = queries["now"]
    out = {"buckets": {}, "figures": [], "bills": [],
           "unplaced": {name: {str(day): row for day, row in days.items()} for name, days in unplaced.items()}}
    shown = queries.get("bucket_levels", config.levels)
    for name, levels in series.items():
        out["buckets"][name] = {
            str(width): [[s, b[0:8], b[8], b[9], b[10], b[11], b[12], b[13:FLAGGED], b[FLAGGED], b[MEMBER], b[CAPACITY]]
                         for s, b in sorted(buckets.items())]
            for width, buckets in levels.items() if width in shown}
    windows = [(start, end, width, None) for start, end, width in queries["windows"]]
    for name in queries.get("named_windows", []):
        start, end = named_window(config, name, now)
        width = resolution(config, start, end, now)
        if width is not None:
            windows.append((start, end, width, name))
    for start, end, width, window_name in windows:
        for name in sorted(series):
            buckets = series[name].get(width, {})
            result = figures(buckets, width, (start, end), now, name.startswith("interface:"))
            result.update({"series": name, "window": [start, end], "resolution": width, "name": window_name})
            out["figures"].append(result)
    # "Top-N": every series of the kind, ranked from the highest value down, ties by name, the first N. The kind
    # `counted` is what `netpulse top` ranks without options: the interfaces the fleet counts, each by the latest
    # link facts the daemon received for it (its last batch's last link record) under the fleet's rule.
    latest = {}
    for batch in case["batches"]:
        for section in batch["sections"]:
            if section["links"]:
                latest[batch["agent"] + "/" + section["name"]] = sorted(section["links"])[-1]
    counted_by_fleet = {name for name, link in latest.items()
                        if counts(config.rule, link[2], link[3], name.partition("/")[2])}
    out["top"] = []
    for start, end, query_kind, ranking, count in queries.get("top", []):
        width = resolution(config, start, end, now)
        if width is None:
            continue
        kind = "interface" if query_kind == "counted" else query_kind
        values = {}
        for name in series:
            if not name.startswith(kind + ":"):
                continue
            if query_kind == "counted" and name[len(kind) + 1:] not in counted_by_fleet:
                continue
            buckets = series[name].get(width, {})
            totals = new_bucket()
            for s, b in buckets.items():
                if start <= s < end:
                    merge(totals, b)
            value = None
            if ranking == "bytes":
                value = totals[0] + totals[1] if totals[0] + totals[1] > 0 or totals[8] + totals[9] > 0 else None
            elif ranking == "errors":
                packets = totals[2] + totals[3]
                value = (totals[4] + totals[5]) * 1_000_000 // packets if packets > 0 else None
            elif ranking == "peak" and kind == "interface":
                value = max(totals[10], totals[11]) * 1000 if totals[8] + totals[9] > 0 else None
            elif ranking == "peak":
                peak = figures(buckets, width, (start, end), now, False)["peak"]
                value = max(peak) if None not in peak else None
            elif ranking == "p95":
                five = 300_000
                kept = config.keep[five] is None or start >= now - config.keep[five] if five in config.levels else False
                level = five if kept and start % five == 0 and end % five == 0 else width
                p95 = figures(series[name].get(level, {}), level, (start, end), now, True)["p95"]
                value = max(p95) if None not in p95 else None
            if value is not None:
                values[name[len(kind) + 1:]] = value
        ranked = sorted(values.items(), key=lambda item: (-item[1], item[0]))[:count]
        out["top"].append({"query": [start, end, query_kind, ranking, count],
                           "ranked": [list(item) for item in ranked]})
    # "Open and closed periods": an open bill is issued by the first pass of bill keeping at or after its period's
    # end plus close_after, from the batches that had arrived by then. `passes` lists when bills were kept (an
    # input, like now) and how many batches of the arrival order had arrived at each; "issued_at" is when the bill
    # is due, and "as_issued" what it was then.
    passes = sorted(queries.get("passes", []))
    earlier = {}
    for at in queries["bills"]:
        for result in bills(config, series, at, now):
            result["issued_at"] = None
            due = [(time, count) for time, count in passes if time >= result["period"][1] + config.close_after]
            if due:
                time, count = due[0]
                result["issued_at"] = time
                if count not in earlier:
                    # Bills read the 5-minute level only.
                    earlier[count] = rollups(config, case["agents"], case["batches"][:count], [300_000])[0]
                as_issued = [b for b in bills(config, earlier[count], at, time) if b["series"] == result["series"]]
                result["as_issued"] = as_issued[0] if as_issued else None
            out["bills"].append(result)
    sys.stdout.write(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
