#!/usr/bin/env python3
"""A webhook receiver for the alert tests, standing where a user's Alertmanager receiver would.

    webhook_receiver.py --port-file PATH --log PATH [--statuses 500,500,200]

Listens on 127.0.0.1 (a free port, written to --port-file once it listens), answers each POST with the next
status of --statuses (200 once the list is used up), and appends one JSON line per request to --log: the time,
the status it answered, the Authorization header, the content type, the body as JSON, and `problems`, what the
body lacks against Alertmanager's webhook payload, version 4 (as documented for Alertmanager's webhook_config):

    version "4", groupKey, truncatedAlerts (int), status firing|resolved, receiver, groupLabels, commonLabels,
    commonAnnotations (string maps), externalURL, alerts[]: status, labels, annotations, startsAt, endsAt
    (RFC 3339), generatorURL, fingerprint.

Written from that description, not from Netpulse's code, so that the tests check the payload independently.
"""

import datetime
import json
import re
import sys

import scripted_receiver


def string_map(value):
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def rfc3339(value):
    """A full RFC 3339 date-time (a date alone, or a time without its offset, is not one)."""
    if not isinstance(value, str) or not RFC3339.match(value):
        return False
    try:
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        return True
    except ValueError:
        return False


def problems_of(body):
    problems = []
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    if body.get("version") != "4":
        problems.append("version is not \"4\"")
    for key in ("groupKey", "receiver", "externalURL"):
        if not isinstance(body.get(key), str):
            problems.append(f"{key} is not a string")
    truncated = body.get("truncatedAlerts")
    if not isinstance(truncated, int) or isinstance(truncated, bool):
        problems.append("truncatedAlerts is not an integer")
    if body.get("status") not in ("firing", "resolved"):
        problems.append("status is not firing or resolved")
    for key in ("groupLabels", "commonLabels", "commonAnnotations"):
        if not string_map(body.get(key)):
            problems.append(f"{key} is not a map of strings")
    alerts = body.get("alerts")
    if not isinstance(alerts, list) or not alerts:
        problems.append("alerts is not a non-empty list")
        return problems
    for index, alert in enumerate(alerts):
        where = f"alerts[{index}]"
        if not isinstance(alert, dict):
            problems.append(f"{where} is not an object")
            continue
        if alert.get("status") not in ("firing", "resolved"):
            problems.append(f"{where}.status is not firing or resolved")
        for key in ("labels", "annotations"):
            if not string_map(alert.get(key)):
                problems.append(f"{where}.{key} is not a map of strings")
        for key in ("startsAt", "endsAt"):
            if not rfc3339(alert.get(key)):
                problems.append(f"{where}.{key} is not an RFC 3339 time")
        for key in ("generatorURL", "fingerprint"):
            if not isinstance(alert.get(key), str):
                problems.append(f"{where}.{key} is not a string")
        labels = alert.get("labels") or {}
        if isinstance(labels, dict) and "alertname" not in labels:
            problems.append(f"{where}.labels has no alertname")
    # The group's status is firing while any of its alerts is.
    if isinstance(alerts, list) and body.get("status") == "resolved":
        if any(isinstance(a, dict) and a.get("status") == "firing" for a in alerts):
            problems.append("status is resolved while an alert is firing")
    return problems


def record(request, status, raw):
    try:
        body = json.loads(raw)
        problems = problems_of(body)
    except ValueError as error:
        body = raw.decode("utf-8", "replace")
        problems = [f"the body is not JSON: {error}"]
    return {
        "time": datetime.datetime.now(datetime.timezone.utc).timestamp(),
        "path": request.path,
        "answered": status,
        "authorization": request.headers.get("Authorization"),
        "content_type": request.headers.get("Content-Type"),
        "body": body,
        "problems": problems,
    }


def answer(status):
    return "application/json", b'{"status":"ok"}' if status < 300 else b'{"status":"error"}'


def main():
    return scripted_receiver.serve(record, answer, protocol_version="HTTP/1.1")


if __name__ == "__main__":
    sys.exit(main())
