#!/usr/bin/env python3
"""Opens Netpulse's HTML and SVG outputs in headless Chromium (Debian's chromium package) and checks that they render
cleanly: no console message of level error, no uncaught JavaScript exception, no failed resource load (an <img>, a
CSS url() or anything else the page asks for that fails, or an HTTP status of 400 or more), no XML parse error (an
.svg that Chromium shows as "This page contains the following errors"), no <img> that loaded but did not decode, and
a screenshot of the 1280x900 viewport that is not blank (png_ink from check_outputs.py: more than 0.5% of pixels
differ from the most common colour).

    browser_check.py [--screenshot-dir DIR] [--timeout SECONDS] FILE [FILE ...]   (FILE: .html or .svg)

Each file gets its own Chromium with a throwaway profile, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: NUL-terminated JSON on fds 3 and 4), so nothing listens on any port; host names do not
resolve, so a page cannot reach the network either. The page is loaded as a file:// URL; after its load event the
check waits until no request has been in flight for 500 ms, then takes the screenshot. Prints one line per file
with what it found and exits non-zero with the reason on the first problem, or when a file takes longer than the
timeout (60 s). Chromium is killed and its profile removed in every case.
"""
import argparse
import base64
import fcntl
import json
import os
import pathlib
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_outputs import png_ink  # noqa: E402

WIDTH, HEIGHT, SETTLE, MINIMUM_INK = 1280, 900, 0.5, 0.005
# Run in the page after loading: the text of an XML parse error, and every <img> that loaded without decoding.
PAGE_PROBE = """JSON.stringify({
  parseError: Array.from(document.getElementsByTagName("parsererror"), e => (e.querySelector("div") || e).textContent)
                .join(" "),
  broken: Array.from(document.images).filter(i => i.complete && i.naturalWidth === 0 && i.getAttribute("src"))
               .map(i => i.getAttribute("src"))})"""


class Problem(Exception):
    pass


class Chromium:
    """One headless Chromium with a temporary profile, spoken to over --remote-debugging-pipe."""

    def __init__(self, timeout):
        self.timeout, self.deadline = timeout, time.monotonic() + timeout
        self.buffer, self.events, self.next_id = b"", [], 0
        self.directory = tempfile.mkdtemp(prefix="browser-check-")
        binary = "/usr/lib/chromium/chromium"  # the binary itself: /usr/bin/chromium adds extensions and flags
        if not os.access(binary, os.X_OK):
            binary = shutil.which("chromium") or sys.exit("chromium is not installed (apt-get install chromium)")
        to_child, self.writer = os.pipe()
        self.reader, from_child = os.pipe()
        # Move the child's ends above 10 so that putting them on 3 and 4 in the child cannot overwrite one another.
        child_in, child_out = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child, from_child))
        for fd in (to_child, from_child):
            os.close(fd)
        environment = dict(os.environ, HOME=self.directory, XDG_CONFIG_HOME=self.directory,
                           XDG_CACHE_HOME=self.directory)
        self.log = open(os.path.join(self.directory, "chromium.log"), "wb")
        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--remote-debugging-pipe",
             "--user-data-dir=" + os.path.join(self.directory, "profile"), "--no-first-run",
             "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--disable-breakpad", "--disable-dev-shm-usage",
             "--disable-gpu", "--hide-scrollbars", "--mute-audio", "--force-color-profile=srgb",
             "--window-size=%d,%d" % (WIDTH, HEIGHT), "--host-resolver-rules=MAP * ~NOTFOUND", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=environment, start_new_session=True,
            close_fds=False,  # would close 3 and 4 after preexec_fn; Python's own descriptors are not inherited anyway
            preexec_fn=lambda: (os.dup2(child_in, 3), os.dup2(child_out, 4)))
        os.close(child_in)
        os.close(child_out)

    def send(self, method, session=None, **params):
        """Sends a command and returns its result, keeping the events that arrive meanwhile."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        try:
            os.write(self.writer, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise self.exited("sending " + method)
        while True:
            reply = self.receive("the reply to " + method)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise Problem("DevTools %s failed: %s" % (method, reply["error"].get("message")))
                return reply["result"]
            self.events.append(reply)

    def receive(self, waiting_for, until=None):
        """The next message from Chromium; None if `until` (a time) passes first."""
        while b"\0" not in self.buffer:
            limit = min(self.deadline, until or self.deadline)
            ready, _, _ = select.select([self.reader], [], [], max(0, limit - time.monotonic()))
            if not ready:
                if until and time.monotonic() < self.deadline:
                    return None
                raise Problem("timed out after %.0f s waiting for %s" % (self.timeout, waiting_for))
            chunk = os.read(self.reader, 1 << 20)
            if not chunk:
                raise self.exited(waiting_for)
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def exited(self, waiting_for):
        with open(self.log.name, errors="replace") as handle:
            tail = handle.read()[-600:].strip()
        return Problem("chromium exited (status %s) %s: %s" % (self.process.wait(), waiting_for, tail or "no output"))

    def close(self):
        try:
            os.write(self.writer, json.dumps({"id": 0, "method": "Browser.close", "params": {}}).encode() + b"\0")
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # the renderer and helper processes too
        except ProcessLookupError:
            pass
        self.process.wait()
        for fd in (self.reader, self.writer):
            os.close(fd)
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def describe(arguments):
    return " ".join(str(a.get("value", a.get("description", a.get("type")))) for a in arguments)


def check(path, number, screenshot_dir, timeout):
    """Loads `path`, returns the summary line; raises Problem on the first fault."""
    started = time.monotonic()
    browser = Chromium(timeout)
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            browser.send(domain + ".enable", session)
        browser.send("Emulation.setDeviceMetricsOverride", session, width=WIDTH, height=HEIGHT,
                     deviceScaleFactor=1, mobile=False)
        browser.events.clear()  # about:blank's
        navigated = browser.send("Page.navigate", session, url=pathlib.Path(path).resolve().as_uri())
        if navigated.get("errorText"):
            raise Problem("failed to open: " + navigated["errorText"])
        loaded, pending, quiet_since, console, requests, cancelled = False, {}, None, 0, 0, 0
        while True:
            if browser.events:
                event = browser.events.pop(0)
            else:
                until = quiet_since + SETTLE if loaded and not pending and quiet_since else None
                waiting_for = "requests to finish: " + " ".join(pending.values()) if pending else "the load event"
                event = browser.receive(waiting_for, until)
                if event is None:
                    break
            method, params = event.get("method"), event.get("params", {})
            if event.get("sessionId") != session:
                continue
            quiet_since = time.monotonic()
            if method == "Page.loadEventFired":
                loaded = True
            elif method == "Runtime.consoleAPICalled":
                console += 1
                if params["type"] in ("error", "assert"):
                    raise Problem("console error: " + describe(params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                text = details.get("exception", {}).get("description", details["text"])
                raise Problem("uncaught exception: " + " ".join(text.split()))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                entry = params["entry"]
                if entry.get("source") != "network":  # failed loads are reported by Network.loadingFailed
                    raise Problem("console error (%s): %s" % (entry.get("source"), entry["text"]))
            elif method == "Network.requestWillBeSent":
                requests += params["requestId"] not in pending
                pending[params["requestId"]] = params["request"]["url"]
            elif method == "Network.responseReceived" and params["response"].get("status", 0) >= 400:
                raise Problem("failed to load %s: HTTP %d" % (params["response"]["url"], params["response"]["status"]))
            elif method == "Network.loadingFinished":
                pending.pop(params["requestId"], None)
            elif method == "Network.loadingFailed":
                url = pending.pop(params["requestId"], "a resource")
                cancelled += bool(params.get("canceled"))  # by the page itself, as when it navigates on
                if not params.get("canceled"):
                    raise Problem("failed to load %s: %s" % (url, params["errorText"]))
        probe = browser.send("Runtime.evaluate", session, expression=PAGE_PROBE, returnByValue=True)
        found = json.loads(probe["result"]["value"])
        if found["parseError"]:
            raise Problem("XML parse error: " + " ".join(found["parseError"].split()))
        if found["broken"]:
            raise Problem("image does not decode: " + ", ".join(found["broken"]))
        shot = base64.b64decode(browser.send("Page.captureScreenshot", session, format="png")["data"])
    finally:
        browser.close()
    directory = screenshot_dir or tempfile.mkdtemp(prefix="browser-check-shot-")
    png = os.path.join(directory, "%02d-%s.png" % (number, os.path.basename(path)))  # FILE arguments may share names
    with open(png, "wb") as handle:
        handle.write(shot)
    try:
        ink = png_ink(png)
    finally:
        if not screenshot_dir:
            shutil.rmtree(directory)
    width, height = int.from_bytes(shot[16:20], "big"), int.from_bytes(shot[20:24], "big")
    if ink <= MINIMUM_INK:
        raise Problem("screenshot is blank (%.4f of %dx%d pixels differ from the background)" % (ink, width, height))
    return "%s: ok: %d console messages (0 errors), %d requests (0 failed, %d cancelled), %.3f of pixels inked in " \
           "a %dx%d screenshot, %.1f s" % (path, console, requests, cancelled, ink, width, height,
                                           time.monotonic() - started)


def main():
    parser = argparse.ArgumentParser(description="Render HTML and SVG files in headless Chromium and check them.")
    parser.add_argument("--screenshot-dir", help="keep the screenshots here, as NN-FILENAME.png (NN: its position)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds allowed per file (60)")
    parser.add_argument("files", nargs="+", metavar="FILE")
    arguments = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("browser_check.py: terminated"))  # still cleans up
    if arguments.screenshot_dir:
        os.makedirs(arguments.screenshot_dir, exist_ok=True)
    for number, path in enumerate(arguments.files, start=1):
        if not os.path.isfile(path):
            sys.exit("%s: no such file" % path)
        try:
            print(check(path, number, arguments.screenshot_dir, arguments.timeout), flush=True)
        except Problem as problem:
            sys.exit("%s: %s" % (path, problem))


if __name__ == "__main__":
    main()
