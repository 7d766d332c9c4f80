#!/usr/bin/python3
"""The HTTP API and the live dashboards on a bulk-loaded store (scripts/bench.sh http; docs/benchmarks.md).

Usage: bench-http.py BIN_DIR STORE_DIR [AGENTS] [LIVE_SECONDS]

BIN_DIR holds release builds of netpulsed and netpulse (the agent is $BENCH_AGENT_BINARY, as shipped); STORE_DIR is what `netpulse-bench
query-store` made (netpulsed.toml and the store). The script starts netpulsed on that store with an HTTP socket and a
TLS listener, then measures, each figure in one run beside its peer:

1. API latency: `top` (10 interfaces by bytes, 30 days) and the current bills of every interface, as JSON over a
   kept-alive connection to the Unix socket, median of 5, beside the same command as a fresh `netpulse` process on the
   daemon's host (median of 5);
2. on-demand render of a host page and of the fleet overview, for the last hour, the last 24 hours and a brushed 3
   hours (a from–to range), median of 5 (the time to the whole HTML page with every panel drawn inline; each request
   in a second of its own, so that none is answered from a read the daemon shares within a second);
3. with AGENTS real agents (release netpulse-agent, 1 s samples, 10 s batches, their defaults), started evenly over
   a minute (their idle heartbeat) as a fleet's hosts are not all started in the same second, sending to the
   daemon: Server-Sent Events commit-to-event latency (the event's receipt on this machine minus the commit time in
   it), p50 and p99, over LIVE_SECONDS; and at the same time 10 pages open in one headless Chromium, a window each (the fleet
   overview and 9 of the agents' host pages, the last hour), with commit-to-paint from the pages' own
   `performance` marks (window.netpulsePaints: the commit that caused a redraw, and when its frame was painted), p50
   and p99; and the daemon's CPU and peak RSS over that time.

What it leaves out: the dashboards on disk are not drawn meanwhile ([dashboards] enabled = false); the agents,
Chromium and the daemon share the machine's cores (so latencies include waiting for
a CPU); the store is bulk-loaded (30 days of 5-minute, hourly and daily rows, no minute level, so the hour range is
drawn at 5-minute buckets); the agents all sample this machine's interfaces.
"""
import base64
import http.client
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True

BIN, STORE = sys.argv[1], sys.argv[2]
AGENTS = int(sys.argv[3]) if len(sys.argv) > 3 else 20
LIVE_SECONDS = int(sys.argv[4]) if len(sys.argv) > 4 else 600
NETPULSE = f"{BIN}/netpulse"
# The agent as shipped (scripts/lib/common.sh builds it apart, statically linked).
AGENT_BINARY = os.environ.get("BENCH_AGENT_BINARY", f"{BIN}/netpulse-agent")
SOCKET = f"{STORE}/http.sock"
PORT, AGENT_PORT = 19481, 19471
# Seconds over which the agents are started (the agents' idle heartbeat).
STAGGER = 60
PASSWORD = "benchmark"


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("netpulse", timeout=600)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def get(connection, path):
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        sys.exit(f"GET {path}: {response.status} {body[:300]!r}")
    return body


def median_ms(function, runs=5, before=lambda: None):
    # One unmeasured run first: the store's pages come into the page cache (a fresh 6.5 GiB store is not in it).
    function()
    times = []
    for _ in range(runs):
        before()
        began = time.monotonic()
        function()
        times.append((time.monotonic() - began) * 1000)
    return statistics.median(times), min(times), max(times)


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def stages(paints, spans):
    """p50 and p99 of each span (END, START, NAME) between two marks of the redraws `paints`, as one line."""
    return "; ".join(
        f"{name} p50 {percentile([p[end] - p[start] for p in paints], 50):.1f} / p99 "
        f"{percentile([p[end] - p[start] for p in paints], 99):.1f} ms" for end, start, name in spans)


def process_usage(pid):
    """CPU seconds so far, and the RSS now and at its peak so far (bytes), of a process."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    with open(f"/proc/{pid}/status") as handle:
        status = {line.split(":")[0]: line.split()[1] for line in handle if line.startswith(("VmHWM:", "VmRSS:"))}
    return cpu, int(status["VmRSS"]) * 1024, int(status["VmHWM"]) * 1024


def setup():
    ca = f"{STORE}/ca"
    if not os.path.exists(f"{ca}/ca.pem"):
        subprocess.run([NETPULSE, "ca", "init", "--dir", ca], check=True, capture_output=True)
        subprocess.run([NETPULSE, "ca", "issue", "--dir", ca, "--daemon", "netpulsed", "--ip", "127.0.0.1"],
                       check=True, capture_output=True)
    for index in range(AGENTS):
        if not os.path.exists(f"{ca}/live-{index}.pem"):
            subprocess.run([NETPULSE, "ca", "issue", "--dir", ca, "--agent", f"live-{index}"], check=True,
                           capture_output=True)
    import crypt
    with open(f"{STORE}/users", "w") as users:
        users.write("bench:" + crypt.crypt(PASSWORD, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)) + "\n")
    with open(f"{STORE}/netpulsed.toml") as handle:
        base = handle.read().split("\n# bench-http\n")[0]
    with open(f"{STORE}/netpulsed.toml", "w") as handle:
        handle.write(base + f"""
# bench-http
[listen]
address = "127.0.0.1:{AGENT_PORT}"
[tls]
ca = "{ca}/ca.pem"
certificate = "{ca}/netpulsed.pem"
key = "{ca}/netpulsed-key.pem"
[http]
socket = "{SOCKET}"
listen = "127.0.0.1:{PORT}"
users_file = "{STORE}/users"
max_connections = 1024
# Only what the pages ask for is drawn: the files on disk are measured by `scripts/bench.sh dashboards`.
[dashboards]
enabled = false
""")


def start_daemon():
    log = open(f"{STORE}/netpulsed.log", "w")
    # BENCH_HTTP_LOG_LEVEL=debug: the daemon says how long each live page's read took (in netpulsed.log).
    daemon = subprocess.Popen([f"{BIN}/netpulsed", "--config", f"{STORE}/netpulsed.toml", "--log-level",
                               os.environ.get("BENCH_HTTP_LOG_LEVEL", "info")], stdout=log, stderr=log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if os.path.exists(SOCKET):
            try:
                get(UnixConnection(SOCKET), "/metrics")
                return daemon
            except (ConnectionError, OSError):
                pass
        if daemon.poll() is not None:
            sys.exit("netpulsed exited: " + open(f"{STORE}/netpulsed.log").read()[-2000:])
        time.sleep(0.5)
    sys.exit("netpulsed did not serve within 300 s")


def api_latency():
    print("API latency (JSON over the Unix socket, a kept-alive connection; median of 5) beside a fresh netpulse "
          "process on the daemon's host (median of 5):")
    connection = UnixConnection(SOCKET)
    reads = [
        ("top-10 interfaces by bytes, last 30 days", "/api/v1/top?by=bytes&last=30d&scope=interface",
         ["top", "--by", "bytes", "--last", "30d", "--scope", "interface", "--format", "json"]),
        ("current 95th-percentile bills, every interface", "/api/v1/bill?scope=interface",
         ["bill", "--scope", "interface", "--format", "json"]),
    ]
    for name, path, command in reads:
        api, api_min, api_max = median_ms(lambda: get(connection, path))

        def fresh():
            with open(os.devnull, "w") as devnull:
                subprocess.run([NETPULSE] + command + ["--config", f"{STORE}/netpulsed.toml"], stdout=devnull,
                               check=True)

        cli, cli_min, cli_max = median_ms(fresh)
        print(f"  {name:<48} API {api:7.0f} ms (min {api_min:.0f}, max {api_max:.0f})   "
              f"CLI {cli:7.0f} ms (min {cli_min:.0f}, max {cli_max:.0f})   API/CLI {api / cli:.2f}")


def render_times():
    connection = UnixConnection(SOCKET)
    index = get(connection, "/").decode()
    host = next(part.split("?")[0] for part in index.split('href="/dashboards/')[1:]
                if part.startswith("host-"))
    now = time.time()
    end = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 86400))
    start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 86400 - 3 * 3600))
    brushed = "from=" + urllib.parse.quote(start) + "&to=" + urllib.parse.quote(end)
    print("on-demand render, the whole page with every panel inline (median of 5):")
    for label, stem in [(f"host page ({host})", host), ("fleet overview", "fleet")]:
        cells = []
        for range_name, query in [("hour", "range=hour"), ("day", "range=day"), ("brushed 3 h", brushed)]:
            # Each in a second of its own: the daemon shares a page's read with the requests of the same second
            # (LiveReads), and a render is measured here, not an answer from that.
            median, low, high = median_ms(lambda: get(connection, f"/dashboards/{stem}?{query}"),
                                          before=lambda: time.sleep(1.01 - time.time() % 1))
            cells.append(f"{range_name} {median:.0f} ms ({low:.0f}–{high:.0f})")
        print(f"  {label:<30} " + ", ".join(cells))


class EventLatency(threading.Thread):
    """Reads a page's event stream and records receipt minus commit, in ms, and each event's size in bytes."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.latencies, self.sizes, self.stop = path, [], [], False

    def run(self):
        connection = UnixConnection(SOCKET)
        connection.request("GET", self.path)
        response = connection.getresponse()
        data = None
        while not self.stop:
            line = response.fp.readline()
            if not line:
                return
            line = line.decode().rstrip("\n")
            if line.startswith("data: "):
                data = json.loads(line[6:])
                self.sizes.append(len(line))
            elif line == "" and data is not None:
                self.latencies.append(time.time() * 1000 - data["committed"])
                data = None


class MemoryTrace(threading.Thread):
    """The daemon's RSS once a second over the live part (bytes, with seconds since it began): when the peak came."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.samples, self.stop = pid, [], False

    def run(self):
        began = time.monotonic()
        while not self.stop:
            try:
                _, rss, _ = process_usage(self.pid)
            except (OSError, KeyError):
                return
            self.samples.append((time.monotonic() - began, rss))
            time.sleep(1)


def live():
    ca = f"{STORE}/ca"
    agents = []
    for index in range(AGENTS):
        config = f"{STORE}/live-{index}.toml"
        with open(config, "w") as handle:
            handle.write(f"""[agent]
id = "live-{index}"
state_directory = "{STORE}/live-{index}"
[daemon]
endpoints = ["127.0.0.1:{AGENT_PORT}"]
ca = "{ca}/ca.pem"
certificate = "{ca}/live-{index}.pem"
key = "{ca}/live-{index}-key.pem"
""")
        agents.append(subprocess.Popen([AGENT_BINARY, "--config", config], stdout=subprocess.DEVNULL,
                                       stderr=open(f"{STORE}/live-{index}.log", "w")))
        # Started a heartbeat apart in all, as a fleet's hosts start at times of their own: an idle agent sends once
        # a minute (idle_heartbeat), so agents started in the same second would all send in the same second, every
        # minute, and every page would redraw at once, each boundary.
        time.sleep(STAGGER / AGENTS)
    try:
        # Their hosts appear once their first batches are stored.
        connection = UnixConnection(SOCKET)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and f"host-live-{AGENTS - 1}" not in get(connection, "/").decode():
            time.sleep(1)
        return measure_live(agents)
    finally:
        for agent in agents:
            agent.terminate()
        for agent in agents:
            agent.wait()


def measure_live(agents):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    pages = ["/dashboards/fleet?range=hour"] + [f"/dashboards/host-live-{i}?range=hour" for i in range(9)]
    # The same streams the pages hold, read here too: commit-to-event without a browser in between.
    streams = [EventLatency(page.replace("?", "/events?")) for page in pages]
    for stream in streams:
        stream.start()
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/lib/chromium/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--ignore-certificate-errors", "--window-size=1400,1000", "--disable-extensions",
                     "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                     "--disable-backgrounding-occluded-windows"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(f"https://bench:{PASSWORD}@127.0.0.1:{PORT}/")
        handles = []
        for number, page in enumerate(pages):
            if number > 0:
                # A window each, not a tab: a browser paints no hidden tab (its frames wait until it is shown), so
                # tabs would measure when the benchmark looked at them, not when the page could be seen.
                driver.switch_to.new_window("window")
            driver.get(f"https://127.0.0.1:{PORT}{page}")
            # Room for every panel fetch of the run (the browser keeps 250 entries by default).
            driver.execute_script("performance.setResourceTimingBufferSize(100000)")
            handles.append(driver.current_window_handle)
        cpu_before, _, peak_before = process_usage(DAEMON.pid)
        memory = MemoryTrace(DAEMON.pid)
        memory.start()
        began = time.monotonic()
        time.sleep(LIVE_SECONDS)
        cpu_after, rss, peak = process_usage(DAEMON.pid)
        memory.stop = True
        elapsed = time.monotonic() - began
        paints = {"fleet": [], "host": []}
        for page, handle in zip(pages, handles):
            driver.switch_to.window(handle)
            # The panels' fetches as the browser timed them, on the same clock as the marks.
            fetches = driver.execute_script(
                "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/panels/') && "
                "e.name.includes('.svg')).map((e) => [performance.timeOrigin + e.startTime, "
                "performance.timeOrigin + e.responseEnd])")
            for paint in driver.execute_script("return window.netpulsePaints || []"):
                if paint.get("committed") and paint.get("received"):
                    paint["page"] = page
                    mine = [f for f in fetches if paint["received"] <= f[0] <= paint["fetched"]]
                    if mine:
                        paint["answered"] = max(f[1] for f in mine)
                    paints["fleet" if "fleet" in page else "host"].append(paint)
        with open(f"{STORE}/paints.json", "w") as handle:
            json.dump(paints, handle)
    finally:
        driver.quit()
        for stream in streams:
            stream.stop = True
    events = [latency for stream in streams for latency in stream.latencies]
    print(f"live, {AGENTS} agents sending at their default pace (1 s samples, 10 s batches), 10 pages open in one "
          f"headless Chromium (fleet overview and 9 host pages, last hour), over {elapsed:.0f} s:")
    # The event is sent once the daemon has read and drawn the page's panels for it: their pictures are in it. These
    # streams are not told what a page shows, so their first event carries every panel, later ones what changed.
    sizes = [size for stream in streams for size in stream.sizes]
    print(f"  SSE commit-to-event        p50 {percentile(events, 50):6.1f} ms, p99 {percentile(events, 99):6.1f} ms "
          f"({len(events)} events on the 10 pages' streams; p50 {percentile(sizes, 50) / 1024:.1f} KiB, largest "
          f"{max(sizes, default=0) / 1024:.1f} KiB)")
    for kind in ["host", "fleet"]:
        unchanged = [paint for paint in paints[kind] if not paint["painted"]]
        paints[kind] = [paint for paint in paints[kind] if paint["painted"]]
        values = [paint["painted"] - paint["committed"] for paint in paints[kind]]
        print(f"  commit-to-paint, {kind:<5} p50 {percentile(values, 50):6.1f} ms, p99 {percentile(values, 99):6.1f} "
              f"ms ({len(values)} redraws; {len(unchanged)} more changed no panel)")
        # Where the time went: commit to the page's receipt of the event (the daemon reads and draws the page's
        # panels before it sends the event, which carries the pictures that changed), receipt to every panel in
        # place, and those pictures to the painted frame.
        print("    " + stages(paints[kind], [("received", "committed", "event"), ("fetched", "received", "panels"),
                                             ("painted", "fetched", "paint")]))
        # Redraws that fetched panels (an event without the pictures, or naming one it did not bring): their panels
        # stage split at the last panel's answer (the browser's resource timing), the server and the transfer
        # before it, the page parsing and swapping in the pictures after.
        timed = [p for p in paints[kind] if "answered" in p]
        if timed:
            print("    redraws that fetched panels: " + stages(timed, [("answered", "received", "to the last answer"),
                                                                   ("fetched", "answered", "after it")])
                  + f" ({len(timed)} redraws)")
        else:
            print("    no redraw fetched a panel: the events carried the pictures")
    print(f"  netpulsed CPU              {(cpu_after - cpu_before) / elapsed * 100:.1f}% of one core; "
          f"RSS {rss / 1048576:.0f} MiB at the end, peak {peak / 1048576:.0f} MiB (before the live part: peak "
          f"{peak_before / 1048576:.0f} MiB, from the API and render reads)")
    if memory.samples:
        at, highest = max(memory.samples, key=lambda sample: sample[1])
        print(f"  netpulsed RSS, sampled each second: median {statistics.median(s[1] for s in memory.samples) / 1048576:.0f}"
              f" MiB, highest {highest / 1048576:.0f} MiB at {at:.0f} s (a peak between samples shows only above)")


if __name__ == "__main__":
    setup()
    DAEMON = start_daemon()
    try:
        # BENCH_HTTP_LIVE_ONLY=1: the live part alone, to measure a change to it in a few minutes.
        if not os.environ.get("BENCH_HTTP_LIVE_ONLY"):
            api_latency()
            render_times()
        live()
    finally:
        DAEMON.terminate()
        DAEMON.wait()
