// Netpulse live dashboards: the page's only script, served by the daemon (no inline script, no third-party code).
// Without it the page still works: the server draws every panel and the range picker is a form.
//
// It adds, reading only what the markup says (docs/dashboards.md, "Live dashboards"):
// - the value under the pointer (or under the keyboard's cursor: arrow keys on a focused chart), from the
//   panel's JSON export, which is the data drawn, fetched when the pointer or a key first wants it;
// - brushing: dragging across a time chart opens the page for that interval (the URL holds it);
// - redraws: the daemon's event stream announces stored buckets with each panel's tag and the pictures of those that
//   changed; a panel whose tag differs and came without its picture is fetched (the server answers 304 when it is
//   the one shown).
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const body = document.body;
  const zone = body.dataset.zone || "UTC";
  const zoneName = body.dataset.zoneName || zone;
  let timeFormat;
  try {
    timeFormat = new Intl.DateTimeFormat("sv-SE", {
      timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    });
  } catch (error) {
    timeFormat = new Intl.DateTimeFormat("sv-SE", {
      timeZone: "UTC", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    });
  }
  const status = document.getElementById("np-status");
  // What the page measured: for each redraw the stream caused, when the store committed, when the page received the
  // announcement, when it had every panel (from the event, or fetched), and when it painted (ms since the Unix epoch;
  // null when no panel changed), with how many panels changed, for the benchmark of commit-to-paint.
  window.netpulsePaints = [];

  // Same-origin URLs without the page's user and password: a page opened as https://user:pass@host/ would make
  // every relative request carry them, and fetch refuses such URLs (the browser keeps the login for the origin).
  const here = (path) => new URL(path, window.location.origin).href;

  // A panel's URL for a redraw: with the data generation the announcement carried, so the daemon answers it from
  // any read at least that new (the page's other panels, another page's) instead of reading again.
  const since = (path, generation) => {
    const url = new URL(path, window.location.origin);
    if (Number.isSafeInteger(generation) && generation >= 0) url.searchParams.set("since", String(generation));
    return url.href;
  };

  function say(text) {
    if (status) status.textContent = text;
  }

  // What the page says when a panel's data (for the value under the pointer) cannot be fetched.
  const unavailable = (error) => say(`Values under the pointer unavailable: ${error.message}`);

  // MARK: Scales, as the chart's data attributes give them

  function plotOf(svg) {
    const rect = (svg.dataset.plot || "").split(" ").map(Number);
    if (rect.length !== 4 || rect.some(Number.isNaN)) return null;
    const x = (svg.dataset.xDomain || "").split(" ").map(Number);
    const y = (svg.dataset.yDomain || "").split(" ").map(Number);
    return {
      left: rect[0], top: rect[1], width: rect[2], height: rect[3],
      xScale: svg.dataset.xScale, x0: x[0], x1: x[1],
      yScale: svg.dataset.yScale, y0: y[0], y1: y[1],
    };
  }

  // A pointer's position in the SVG's own units (the page scales the SVG to its column).
  function svgPoint(svg, event) {
    const box = svg.getBoundingClientRect();
    const view = svg.viewBox.baseVal;
    return {
      x: view.x + (event.clientX - box.left) * view.width / box.width,
      y: view.y + (event.clientY - box.top) * view.height / box.height,
    };
  }

  const timeAt = (plot, x) => plot.x0 + (x - plot.left) / plot.width * (plot.x1 - plot.x0);
  const xOf = (plot, seconds) => plot.left + (seconds - plot.x0) / (plot.x1 - plot.x0) * plot.width;
  function yOf(plot, value) {
    if (plot.yScale === "log") {
      if (!(value > 0)) return NaN;
      const lo = Math.log10(plot.y0);
      return plot.top + plot.height - (Math.log10(value) - lo) / (Math.log10(plot.y1) - lo) * plot.height;
    }
    return plot.top + plot.height - (value - plot.y0) / (plot.y1 - plot.y0) * plot.height;
  }

  // MARK: Numbers

  // Bits per second and packets per second read with SI prefixes, as the axes do; a share of the link (1 = 100 %)
  // as a percentage.
  function formatValue(value, label) {
    if (value === null || value === undefined) return "no data";
    if (/util/i.test(label)) return (value * 100).toFixed(1) + " %";
    const unit = /packets/i.test(label) ? "packets/s" : "bit/s";
    const prefixes = ["", "k", "M", "G", "T", "P"];
    let scaled = Math.abs(value);
    let index = 0;
    while (scaled >= 1000 && index < prefixes.length - 1) {
      scaled /= 1000;
      index += 1;
    }
    const digits = scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2;
    return (value < 0 ? "−" : "") + scaled.toFixed(digits) + " " + prefixes[index] + unit;
  }

  // MARK: Panels

  const panels = [];

  class Panel {
    constructor(figure) {
      this.figure = figure;
      this.holder = figure.querySelector(".plot");
      this.readout = figure.querySelector(".readout");
      this.etag = figure.dataset.tag || null;
      this.cursor = -1;
      this.times = [];
      this.rowsAt = new Map();
      this.data = null;
      // The data of the picture shown, while it is being fetched; a count of the pictures swapped in, so that data
      // fetched for one replaced meanwhile is dropped; the time under the pointer, while it rests on the plot.
      this.loading = null;
      this.pictures = 0;
      this.generation = undefined;
      this.pointerAt = null;
      this.attach();
    }

    get svg() {
      return this.holder.querySelector("svg");
    }

    get plot() {
      const svg = this.svg;
      return svg ? plotOf(svg) : null;
    }

    get isTimeChart() {
      const plot = this.plot;
      return plot !== null && plot.xScale === "time" && plot.x1 > plot.x0;
    }

    // The data of the picture shown, fetched the first time the pointer or a key wants it after the picture came,
    // not with every redraw: a month's 95th-percentile panel is 16,791 rows (about 800 KB of JSON), which every open
    // page fetched after each redraw, the daemon encoding it and the browser parsing it beside the next pages'
    // redraws (docs/benchmarks.md).
    need() {
      if (this.data !== null) return Promise.resolve();
      if (this.loading === null) {
        const picture = this.pictures;
        this.loading = (async () => {
          try {
            const response = await fetch(since(this.figure.dataset.json, this.generation), { credentials: "same-origin", cache: "no-store" });
            if (!response.ok) throw new Error(`panel ${this.figure.dataset.panel}: ${response.status}`);
            const data = await response.json();
            if (picture !== this.pictures) return;
            this.data = data;
            this.index();
          } finally {
            if (picture === this.pictures) this.loading = null;
          }
        })();
      }
      return this.loading;
    }

    // A new picture came: its data is fetched when next wanted, as of the announcement that brought it.
    replaced(generation) {
      this.pictures += 1;
      this.generation = generation;
      this.data = null;
      this.loading = null;
      this.rowsAt = new Map();
      this.times = [];
    }

    // Rows by time: the value under the pointer is every series' value at the nearest time.
    index() {
      this.rowsAt = new Map();
      const data = this.data;
      if (!data || data.rows.length === 0) {
        this.times = [];
        return;
      }
      for (const row of data.rows) {
        const time = typeof row[1] === "string" ? Date.parse(row[1]) / 1000 : NaN;
        if (Number.isNaN(time)) continue;
        if (!this.rowsAt.has(time)) this.rowsAt.set(time, []);
        this.rowsAt.get(time).push(row);
      }
      this.times = Array.from(this.rowsAt.keys()).sort((a, b) => a - b);
    }

    nearest(seconds) {
      const times = this.times;
      if (times.length === 0) return -1;
      let lo = 0;
      let hi = times.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (times[mid] < seconds) lo = mid + 1;
        else hi = mid;
      }
      if (lo > 0 && Math.abs(times[lo - 1] - seconds) <= Math.abs(times[lo] - seconds)) return lo - 1;
      return lo;
    }

    clearOverlay(kind) {
      const svg = this.svg;
      if (!svg) return;
      for (const node of svg.querySelectorAll(`.np-${kind}`)) node.remove();
    }

    // A rule and a point per series at the time `index`, and the values in the caption.
    show(index) {
      this.clearOverlay("hover");
      const plot = this.plot;
      const svg = this.svg;
      if (index < 0 || !plot || !svg || !this.data) return;
      this.cursor = index;
      const time = this.times[index];
      const rows = this.rowsAt.get(time) || [];
      const group = document.createElementNS(SVG, "g");
      group.setAttribute("class", "np-hover");
      const x = xOf(plot, time);
      const rule = document.createElementNS(SVG, "line");
      rule.setAttribute("class", "np-rule");
      rule.setAttribute("x1", x);
      rule.setAttribute("x2", x);
      rule.setAttribute("y1", plot.top);
      rule.setAttribute("y2", plot.top + plot.height);
      group.appendChild(rule);
      const columns = this.data.columns;
      const measure = columns.indexOf("Measure");
      // The value's column: after the time, and after the time's end when marks span intervals.
      const valueColumn = columns[2].endsWith(" end") ? 3 : 2;
      const names = rows.map((row) => String(row[0] ?? ""));
      const repeated = new Set(names.filter((name, at) => names.indexOf(name) !== at));
      let up = 0;
      let down = 0;
      const parts = [];
      for (const row of rows) {
        const value = row[valueColumn];
        const series = String(row[0] ?? "");
        const name = measure >= 0 && repeated.has(series) ? `${series} ${row[measure]}` : series;
        parts.push(`${name}: ${formatValue(value, columns[valueColumn])}`);
        if (typeof value !== "number") continue;
        let drawnAt = value;
        if (this.data.stacked) {
          if (value >= 0) drawnAt = up += value;
          else drawnAt = down += value;
        }
        const y = yOf(plot, drawnAt);
        if (!Number.isFinite(y)) continue;
        const dot = document.createElementNS(SVG, "circle");
        dot.setAttribute("class", "np-dot");
        dot.setAttribute("cx", x);
        dot.setAttribute("cy", y);
        dot.setAttribute("r", 3.5);
        group.appendChild(dot);
      }
      svg.appendChild(group);
      const when = timeFormat.format(new Date(time * 1000));
      this.readout.textContent = `${when} (${zoneName}) — ${parts.join(" · ")}`;
      this.readout.dataset.time = new Date(time * 1000).toISOString();
    }

    hide() {
      this.clearOverlay("hover");
      this.cursor = -1;
      this.pointerAt = null;
    }

    // Shows the value under the pointer (`pointerAt`) once the data is here.
    follow() {
      if (this.data !== null) return this.show(this.nearest(this.pointerAt));
      this.need().then(() => {
        if (this.pointerAt !== null && this.data !== null) this.show(this.nearest(this.pointerAt));
      }).catch(unavailable);
    }

    // Moves the keyboard's cursor for `key`.
    step(key) {
      if (this.times.length === 0) return;
      const last = this.times.length - 1;
      let index = this.cursor;
      if (key === "ArrowRight") index = index < 0 ? 0 : Math.min(last, index + 1);
      else if (key === "ArrowLeft") index = index < 0 ? last : Math.max(0, index - 1);
      else if (key === "Home") index = 0;
      else index = last;
      this.show(index);
    }

    attach() {
      const holder = this.holder;
      let brushFrom = null;
      holder.addEventListener("pointermove", (event) => {
        if (!this.isTimeChart) return;
        const plot = this.plot;
        const point = svgPoint(this.svg, event);
        if (brushFrom !== null) {
          this.drawBrush(brushFrom, Math.min(Math.max(point.x, plot.left), plot.left + plot.width));
        }
        if (point.x < plot.left || point.x > plot.left + plot.width) return this.hide();
        this.pointerAt = timeAt(plot, point.x);
        this.follow();
      });
      holder.addEventListener("pointerleave", () => {
        if (brushFrom === null) this.hide();
      });
      holder.addEventListener("pointerdown", (event) => {
        if (!this.isTimeChart || event.button !== 0) return;
        const plot = this.plot;
        const point = svgPoint(this.svg, event);
        if (point.x < plot.left || point.x > plot.left + plot.width) return;
        if (point.y < plot.top || point.y > plot.top + plot.height) return;
        brushFrom = point.x;
        holder.setPointerCapture(event.pointerId);
        event.preventDefault();
      });
      const finish = (event) => {
        if (brushFrom === null) return;
        const plot = this.plot;
        const to = Math.min(Math.max(svgPoint(this.svg, event).x, plot.left), plot.left + plot.width);
        const from = brushFrom;
        brushFrom = null;
        this.clearOverlay("brush");
        if (event.type !== "pointerup" || Math.abs(to - from) < 4) return;
        openRange(timeAt(plot, Math.min(from, to)), timeAt(plot, Math.max(from, to)));
      };
      holder.addEventListener("pointerup", finish);
      holder.addEventListener("pointercancel", finish);
      holder.addEventListener("keydown", (event) => {
        const key = event.key;
        if (!this.isTimeChart || !["ArrowRight", "ArrowLeft", "Home", "End", "Escape"].includes(key)) return;
        event.preventDefault();
        if (key === "Escape") return this.hide();
        if (this.data !== null) return this.step(key);
        this.need().then(() => this.step(key)).catch(unavailable);
      });
      holder.addEventListener("blur", () => this.hide());
    }

    drawBrush(from, to) {
      this.clearOverlay("brush");
      const plot = this.plot;
      const rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("class", "np-brush");
      rect.setAttribute("x", Math.min(from, to));
      rect.setAttribute("width", Math.abs(to - from));
      rect.setAttribute("y", plot.top);
      rect.setAttribute("height", plot.height);
      this.svg.appendChild(rect);
    }

    // The panel as an event sent it (`sent`: its tag, and its picture when it changed), or fetched again when the
    // event did not bring the picture it names; true when the picture shown was replaced. The picture is what a
    // person waits for: it is swapped in at once, and the data under the pointer follows when wanted (need()).
    async update(sent, generation) {
      if (sent && typeof sent.tag === "string") {
        if (sent.tag === this.etag) return false;
        if (typeof sent.svg === "string") return this.swap(sent.svg, sent.tag, generation);
      }
      return this.refresh(generation);
    }

    // Fetches the panel again; replaces it only when the server drew something else.
    async refresh(generation) {
      const headers = this.etag ? { "If-None-Match": this.etag } : {};
      const response = await fetch(since(this.figure.dataset.svg, generation), { credentials: "same-origin", cache: "no-store", headers });
      if (response.status === 304) return false;
      if (!response.ok) throw new Error(`panel ${this.figure.dataset.panel}: ${response.status}`);
      return this.swap(await response.text(), response.headers.get("ETag"), generation);
    }

    swap(text, tag, generation) {
      const parsed = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
      if (parsed.nodeName !== "svg") throw new Error(`panel ${this.figure.dataset.panel}: not an SVG`);
      this.etag = tag;
      this.cursorBefore = this.cursor;
      this.holder.replaceChild(document.adoptNode(parsed), this.svg);
      this.replaced(generation);
      return true;
    }

    // After a redraw, on a chart whose cursor was shown: the new picture's data, and the cursor where it was.
    async reload() {
      const cursor = this.cursorBefore;
      await this.need();
      if (this.data !== null) this.show(Math.min(cursor, this.times.length - 1));
    }
  }

  // Opens the page for a brushed interval: whole seconds, UTC, in the URL so the view can be shared.
  function openRange(fromSeconds, toSeconds) {
    const text = (seconds) => new Date(Math.round(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
    const query = new URLSearchParams({ from: text(fromSeconds), to: text(toSeconds) });
    window.location.assign(here(`${window.location.pathname}?${query}`));
  }

  // MARK: Live updates

  let redrawing = false;
  let pending = null;

  async function redraw(announcement) {
    if (redrawing) {
      pending = announcement;
      return;
    }
    redrawing = true;
    try {
      const generation = announcement.generation;
      const sent = Array.isArray(announcement.panels) ? announcement.panels : [];
      const results = await Promise.all(
        panels.map((panel, index) => panel.update(sent[index], generation).catch(() => false)));
      const changed = results.filter(Boolean).length;
      const fetched = performance.timeOrigin + performance.now();
      const record = {
        committed: announcement.committed, received: announcement.received, fetched, painted: null, changed, generation,
      };
      window.netpulsePaints.push(record);
      // A page left open for weeks keeps its last thousand.
      if (window.netpulsePaints.length > 1000) window.netpulsePaints.shift();
      if (changed > 0) {
        await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
        record.painted = performance.timeOrigin + performance.now();
        performance.mark("netpulse-painted", { detail: { committed: announcement.committed, changed } });
        say(`Updated ${timeFormat.format(new Date())} (${zoneName}): ${changed} panel${changed === 1 ? "" : "s"} redrawn.`);
        // Only where someone is looking: a chart whose cursor was shown gets its new data now, not waited for.
        for (const [index, panel] of panels.entries()) {
          if (!results[index] || !panel.isTimeChart || panel.cursorBefore < 0) continue;
          panel.reload().catch(unavailable);
        }
      }
    } finally {
      redrawing = false;
      if (pending !== null) {
        const next = pending;
        pending = null;
        redraw(next);
      }
    }
  }

  function listen() {
    const url = body.dataset.events;
    if (!url || !("EventSource" in window)) return;
    const source = new EventSource(here(url), { withCredentials: true });
    source.addEventListener("buckets", (event) => {
      let announcement = {};
      try {
        announcement = JSON.parse(event.data);
      } catch (error) {
        announcement = {};
      }
      if (typeof announcement !== "object" || announcement === null) announcement = {};
      announcement.received = performance.timeOrigin + performance.now();
      performance.mark("netpulse-announced", { detail: announcement });
      redraw(announcement);
    });
    source.addEventListener("error", () => say("The live stream was interrupted; the browser reconnects on its own."));
  }

  function start() {
    for (const figure of document.querySelectorAll("figure.panel")) panels.push(new Panel(figure));
    listen();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
