#!/usr/bin/python3
"""Drives netpulsed's live dashboards in Debian's chromium with Debian's chromedriver and python3-selenium, as a person
at a desk would, and checks what they rely on. Run by EndToEndTests.LiveDashboardTests against a daemon fed by a
real agent; everything it needs comes from the environment:

    NP_URL        https://127.0.0.1:PORT (the daemon's TCP listener, TLS)
    NP_USER, NP_PASSWORD   basic-auth credentials from the daemon's users file
    NP_CA         the fleet CA's certificate (for this script's own requests)
    NP_CLI, NP_CONFIG      the netpulse binary and the daemon's config, for the CLI's figures
    NP_AGENT      the agent whose host page is opened
    NP_ODD        the hostile interface names, separated by newlines
    NP_DOWNLOADS  an empty directory for the browser's downloads

Steps: log in with basic auth over TLS; open the host page from the index; pick ranges by link and by the from–to
form; brush an interval on a chart and see the URL and the x axis change; hover and read the value under the
pointer, and check it against the panel's data; wait for a new point announced by Server-Sent Events; download each
panel's SVG, CSV and JSON and check them (a real XML parser, csv, json) and the throughput against `netpulse
export`; see hostile names as text everywhere; no message of level error in the console, CSP violations included.
Prints what it checked; exits non-zero with the reason on the first failure.
"""
import base64
import csv
import io
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

sys.dont_write_bytecode = True

URL = os.environ["NP_URL"]
USER, PASSWORD = os.environ["NP_USER"], os.environ["NP_PASSWORD"]
AGENT = os.environ["NP_AGENT"]
ODD = [name for name in os.environ["NP_ODD"].split("\n") if name]
DOWNLOADS = os.environ["NP_DOWNLOADS"]
CONTEXT = ssl.create_default_context(cafile=os.environ["NP_CA"])
AUTHORIZATION = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def say(message):
    print("live-dashboards: " + message, flush=True)


def fetch(path):
    """GET over TLS, verified against the fleet CA, with basic auth: (status, headers, body)."""
    request = urllib.request.Request(URL + path, headers={"Authorization": AUTHORIZATION})
    try:
        with urllib.request.urlopen(request, context=CONTEXT, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def wait(driver, what, condition, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition(driver)
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; URL {driver.current_url}")


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/lib/chromium/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--no-first-run", "--disable-extensions",
                     "--disable-background-networking", "--disable-component-update",
                     # The daemon's certificate is from the fleet's own CA, which Chromium's store does not hold; this
                     # script's own requests verify it against that CA.
                     "--ignore-certificate-errors"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option("prefs", {
        "download.default_directory": DOWNLOADS, "download.prompt_for_download": False,
        "download.directory_upgrade": True, "safebrowsing.enabled": False,
        # Fifteen downloads from one page: without this Chromium asks whether the site may download several files.
        "profile.default_content_setting_values.automatic_downloads": 1})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(60)
    # Downloads in headless Chromium go where the browser is told.
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": DOWNLOADS})
    return driver


def svg_domain(driver, index):
    # Read in one script: a redraw may replace the SVG between finding it and reading it.
    text = driver.execute_script(
        "return document.querySelector(arguments[0]).getAttribute('data-x-domain')", f"#panel-{index} svg")
    return [float(x) for x in text.split()]


def plot_box(driver, index):
    """The plot rectangle of panel `index` in CSS pixels from the centre of its chart's holder (which a redraw keeps,
    while it replaces the SVG inside), read in one script."""
    left, top, width, height = driver.execute_script("""
        const svg = document.querySelector(arguments[0]);
        const [x, y, w, h] = svg.getAttribute("data-plot").split(" ").map(Number);
        const box = svg.getBoundingClientRect();
        const scale = box.width / svg.viewBox.baseVal.width;
        return [x * scale - box.width / 2, y * scale - box.height / 2, w * scale, h * scale];
        """, f"#panel-{index} svg")
    holder = driver.find_element(By.CSS_SELECTOR, f"#panel-{index} .plot")
    return holder, (left, top, width, height)


def main():
    host = urllib.parse.urlsplit(URL)
    with_login = f"{host.scheme}://{urllib.parse.quote(USER)}:{urllib.parse.quote(PASSWORD)}@{host.netloc}"
    driver = browser()
    try:
        run(driver, with_login)
    except AssertionError:
        # What the page said, for whoever reads the failure.
        for entry in driver.get_log("browser"):
            say(f"console {entry.get('level')}: {entry.get('message')}")
        status = driver.find_elements(By.ID, "np-status")
        if status:
            say(f"status line: {status[0].text!r}")
        raise
    finally:
        driver.quit()


def run(driver, with_login):
    # Logging in: the credentials in the URL, as the browser's own dialog would send them; later requests of the page
    # (its script's fetches and event stream) reuse them.
    driver.get(with_login + "/")
    check("Netpulse dashboards" in driver.title, f"the index did not open: {driver.title!r}")
    # From here on without them in the URL: the browser keeps the login for the origin, as after its dialog.
    driver.get(URL + "/")
    check("Netpulse dashboards" in driver.title, f"the login was not kept: {driver.title!r}")
    link = driver.find_element(By.CSS_SELECTOR, f'a[href="/dashboards/host-{AGENT}?range=hour"]')
    link.click()
    wait(driver, "the host page", lambda d: d.find_elements(By.CSS_SELECTOR, "figure.panel svg"))
    check(f"Host {AGENT}" in driver.find_element(By.TAG_NAME, "h1").text, "not the host page")
    panels = len(driver.find_elements(By.CSS_SELECTOR, "figure.panel"))
    # HTTP/2, so that every open page's event stream shares one connection (HTTP/1.1 gives a browser six per host).
    protocol = driver.execute_script("return performance.getEntriesByType('navigation')[0].nextHopProtocol")
    check(protocol == "h2", f"the page came over {protocol!r}, not HTTP/2")
    say(f"host page open over TLS ({protocol}) with basic auth: {panels} panels")

    # Ranges: by link, then by the form in the store's zone.
    driver.find_element(By.LINK_TEXT, "Last 24 hours").click()
    wait(driver, "the day range", lambda d: "range=day" in d.current_url and "last 24 hours" in d.find_element(
        By.TAG_NAME, "h1").text)
    day = svg_domain(driver, 0)
    check(abs((day[1] - day[0]) - 86_400) < 600, f"the day's axis spans {day[1] - day[0]} s")
    start = driver.find_element(By.ID, "np-from").get_attribute("value")
    end = driver.find_element(By.ID, "np-to").get_attribute("value")
    driver.execute_script("document.getElementById('np-from').value = arguments[0];", end[:11] + "00:00")
    driver.find_element(By.CSS_SELECTOR, "form.picker button[type=submit]").click()
    wait(driver, "the picked range", lambda d: "from=" in d.current_url and "to=" in d.current_url)
    heading = driver.find_element(By.TAG_NAME, "h1").text
    check(heading.lower().find("from " + end[:10]) >= 0, f"the picked range's heading: {heading!r}")
    say(f"ranges picked: last 24 hours ({start} to {end}), then from {end[:11]}00:00")

    # Brushing: drag across the middle of the throughput chart of the last hour.
    driver.find_element(By.LINK_TEXT, "Last hour").click()
    wait(driver, "the hour range", lambda d: "range=hour" in d.current_url)
    before = svg_domain(driver, 0)
    svg, (left, top, width, height) = plot_box(driver, 0)
    hour_url = driver.current_url
    actions = ActionChains(driver)
    actions.move_to_element_with_offset(svg, int(left + width * 0.3), int(top + height / 2))
    actions.click_and_hold().move_by_offset(int(width * 0.4), 0).release().perform()
    wait(driver, "the brushed range's page", lambda d: d.current_url != hour_url and "from=" in d.current_url)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(driver.current_url).query)
    after = svg_domain(driver, 0)
    span = after[1] - after[0]
    check(after[0] > before[0] and after[1] < before[1], f"the brushed axis {after} is not inside {before}")
    check(1_000 <= span <= 0.6 * (before[1] - before[0]), f"the brushed axis spans {span} s")
    say(f"brushed {query['from'][0]} to {query['to'][0]}: the axis went from {before} to {after}")

    # The value under the pointer, then the keyboard's cursor, against the panel's data.
    driver.get(URL + f"/dashboards/host-{AGENT}?range=hour")
    wait(driver, "the panel data", lambda d: d.execute_script(
        "return document.querySelectorAll('#panel-0 .plot').length"))
    drawn_until = svg_domain(driver, 0)[1]
    status, _, body = fetch(f"/dashboards/host-{AGENT}/panels/0.json?range=hour")
    check(status == 200, f"panel 0's JSON: {status}")
    data = json.loads(body)
    svg, (left, top, width, height) = plot_box(driver, 0)
    # The newest bucket, at the right edge of the plot.
    ActionChains(driver).move_to_element_with_offset(svg, int(left + width - 2), int(top + height / 2)).perform()
    readout = wait(driver, "a value under the pointer", lambda d: d.find_element(By.ID, "readout-0").text)
    when = driver.find_element(By.ID, "readout-0").get_attribute("data-time")
    check(driver.find_elements(By.CSS_SELECTOR, "#panel-0 .np-rule"), "no rule at the pointer")
    rows = [row for row in data["rows"] if row[1] == when.replace(".000Z", "Z")]
    check(rows, f"the readout's time {when} is not a time of the panel's data")
    received = [row for row in rows if row[3] == "Received"][0][2]
    check(("no data" if received is None else "") in readout, f"readout {readout!r}")
    check(received is not None, f"no data at the newest bucket {when}: {readout!r}")
    shown = readout_number(readout, "Download (received)")
    check(abs(shown - received) <= 0.01 * received, f"readout {readout!r} against {received} bit/s")
    say(f"under the pointer: {readout}")
    plot = driver.find_element(By.CSS_SELECTOR, "#panel-0 .plot")
    plot.send_keys(Keys.END)
    last = driver.find_element(By.ID, "readout-0").get_attribute("data-time")
    check(last.replace(".000Z", "Z") == data["rows"][-1][1] or last > when, f"End put the cursor at {last}")
    say(f"keyboard: End moves the cursor to {last}")

    # A new point by Server-Sent Events: the window moves at the next minute and the page redraws on its own.
    # The page records a redraw once its frame is painted, just after it replaced the SVGs.
    paints = wait(driver, "a new bucket drawn after an event", lambda d: svg_domain(d, 0)[1] > drawn_until and (
        d.execute_script("const p = window.netpulsePaints.filter((r) => r.painted); return p.length ? p : null")),
        timeout=100)
    status, _, body = fetch(f"/dashboards/host-{AGENT}/panels/0.json?range=hour")
    moved = json.loads(body)
    domain = svg_domain(driver, 0)
    check(abs(domain[1] - rfc3339_seconds(moved["to"])) < 1, f"the redrawn axis ends at {domain[1]}, not {moved['to']}")
    check(any(row[1] > data["rows"][-1][1] and row[2] is not None for row in moved["rows"]), "no new point")
    status_line = driver.find_element(By.ID, "np-status").text
    check("redrawn" in status_line, f"status {status_line!r}")
    # The announcement carried the store's data generation; the pictures it brought were read at least that new.
    check(all(isinstance(paint.get("generation"), int) for paint in paints), f"redraws without a generation: {paints}")
    # The event brought the pictures that changed: the page fetched none of its panels to redraw.
    fetched = driver.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/panels/') && "
        "n.includes('.svg'))")
    check(not fetched, f"the redraw fetched panels the event should have carried: {fetched}")
    say(f"event stream: {status_line} (axis end {drawn_until:.0f} → {domain[1]:.0f}, {len(paints)} redraw(s))")

    # Exports: each panel's three links, downloaded by the browser and checked.
    links = driver.find_elements(By.CSS_SELECTOR, "a.export")
    check(len(links) == 3 * panels, f"{len(links)} export links for {panels} panels")
    names = [link.get_attribute("download") for link in links]
    for link, name in zip(links, names):
        link.click()
        wait(driver, f"the download of {name}", lambda d: os.path.exists(os.path.join(DOWNLOADS, name)))
    for name in names:
        path = os.path.join(DOWNLOADS, name)
        with open(path, "rb") as handle:
            content = handle.read()
        if name.endswith(".svg"):
            root = ElementTree.fromstring(content)
            check(root.tag == "{http://www.w3.org/2000/svg}svg", f"{name}: root {root.tag}")
        elif name.endswith(".csv"):
            table = list(csv.reader(io.StringIO(content.decode("utf-8"))))
            check(len(table) > 1 and len({len(row) for row in table}) == 1, f"{name}: ragged CSV")
            formulas = [cell for row in table for cell in row if cell[:1] in ("=", "+", "@") and not number(cell)]
            check(not formulas, f"{name}: cells a spreadsheet would run: {formulas}")
        else:
            json.loads(content)
    compare_throughput(os.path.join(DOWNLOADS, names[names.index(f"host-{AGENT}-0.json")]))
    say(f"exports: {len(names)} files downloaded and parsed; throughput equals netpulse export")

    # Hostile names: text in the page, never markup; neutralised in CSV.
    markup = driver.execute_script("return document.getElementsByTagName('b').length")
    check(markup == 0, "an interface name became markup")
    texts = driver.execute_script(
        "return Array.from(document.querySelectorAll('svg text, svg title, svg desc'), e => e.textContent).join('\\n')")
    for name in ODD:
        check(name in texts, f"{name!r} is not shown as text")
    interface_csv = open(os.path.join(DOWNLOADS, f"host-{AGENT}-1.csv"), encoding="utf-8").read()
    check("'=1+1" in interface_csv or "=1+1" not in interface_csv, "=1+1 reached a CSV as a formula")
    say(f"hostile names shown as text: {', '.join(ODD)}")

    errors = console_errors(driver)
    check(not errors, f"console errors: {errors}")

    # Many pages at once, each holding its event stream: the tenth opens as the first did.
    first = driver.current_window_handle
    for number in range(9):
        driver.switch_to.new_window("tab")
        driver.set_page_load_timeout(30)
        driver.get(URL + f"/dashboards/host-{AGENT}?range={['hour', 'day'][number % 2]}")
        wait(driver, f"page {number + 2} of 10", lambda d: d.find_elements(By.CSS_SELECTOR, "figure.panel svg"))
    tabs = driver.window_handles
    for handle in tabs:
        if handle != first:
            driver.switch_to.window(handle)
            driver.close()
    driver.switch_to.window(first)
    say("10 live pages open at once in one browser")
    say("no console errors")


def number(cell):
    try:
        float(cell)
        return True
    except ValueError:
        return False


def rfc3339_seconds(text):
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def readout_number(readout, series):
    """The value the readout gives `series`, in bit/s."""
    part = [piece for piece in readout.split(" — ", 1)[1].split(" · ") if piece.startswith(series + ":")][0]
    text = part.split(":", 1)[1].strip().replace("−", "-")
    value, unit = text.split(" ", 1)
    factor = {"bit/s": 1, "kbit/s": 1e3, "Mbit/s": 1e6, "Gbit/s": 1e9, "Tbit/s": 1e12}[unit]
    return abs(float(value) * factor)


def compare_throughput(path):
    """The throughput panel's received and sent rates are `netpulse export --level 1m` bytes as the documented average
    rate over 60 s, bucket by bucket, except the newest (a late batch may still add to it)."""
    data = json.load(open(path))
    cli = subprocess.run(
        [os.environ["NP_CLI"], "export", "--config", os.environ["NP_CONFIG"], "--level", "1m", "--scope", "host",
         "--agent", AGENT, "--from", data["from"], "--to", data["to"], "--format", "json"],
        check=True, capture_output=True, text=True).stdout
    buckets = {row["start_ms"]: row for row in json.loads(cli)}
    compared = 0
    end = rfc3339_seconds(data["to"])
    for series, time_text, value, measure in data["rows"]:
        start = int(rfc3339_seconds(time_text) - 30) * 1000
        if value is None or start / 1000 >= end - 60:
            continue
        row = buckets.get(start)
        check(row is not None, f"no CLI bucket at {time_text}")
        # docs/windows.md, "average rate": ⌊bytes × 10⁶ / elapsed ms⌋ milli-bytes per second; 8 bits a byte.
        milli = (row["rx_bytes"] if measure == "Received" else row["tx_bytes"]) * 10**6 // 60_000
        expected = (1 if measure == "Received" else -1) * milli * 8 / 1000
        check(abs(value - expected) <= 1e-6 * max(1, abs(expected)),
              f"{series} at {time_text}: panel {value}, CLI {expected}")
        compared += 1
    check(compared >= 2, f"only {compared} values compared")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as error:
        print("live-dashboards: FAILED: " + str(error), file=sys.stderr, flush=True)
        sys.exit(1)
