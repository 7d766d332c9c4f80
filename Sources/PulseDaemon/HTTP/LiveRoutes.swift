import Hummingbird
import HummingbirdCore
import NIOCore
import PulseAnalytics
import PulseCharts
import PulseCore
import PulseQuery
import PulseReports
import ServiceLifecycle

/// The live dashboards (`docs/dashboards.md`, "Live dashboards"), on every listener beside the API:
///
/// - `GET /`: the dashboards, each with its ranges;
/// - `GET /dashboards/STEM?range=hour|day|week|month` or `?from=…&to=…`: a dashboard's page, every panel drawn now
///   for that range;
/// - `GET /dashboards/STEM/panels/N.{svg,csv,json}?…`: one panel for the same range, as a picture or the data drawn
///   (an `ETag` lets a page's redraw get a 304 when nothing changed);
/// - `GET /dashboards/STEM/events`: Server-Sent Events, one `buckets` event when batches of the dashboard's hosts are
///   stored (at most four a second per page) carrying the panels that changed, a comment every 15 s;
/// - `GET /assets/netpulse.{js,css}`: the pages' only script and style sheet.
///
/// Pages are read through the same engine and drawn by the same code as the dashboards on disk, at the resolution
/// their range needs (``DashboardQuery/mostBuckets``). Every response forbids what the pages do not use
/// (``LiveRoutes/securityHeaders``): no inline script or style, nothing from another origin.
struct LiveRoutes: Sendable {
    let routes: HTTPRoutes
    let announcer: BucketAnnouncer
    /// Reads shared by the requests of one page (its panels, their data) and by pages showing the same thing.
    let reads: LiveReads

    /// Only the daemon's own files, fetched from pages it served; no inline script or style, no framing.
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        .xContentTypeOptions: "nosniff",
        HTTPFields.Element.Name("Referrer-Policy")!: "no-referrer",
    ]

    static let pingEvery = Duration.seconds(15)

    func add(to router: Router<HTTPContext>) {
        let pages = LivePages()
        let script = ByteBuffer(string: LiveAssets.script)
        let style = ByteBuffer(string: pages.styleSheet())
        router.get("assets/netpulse.js") { _, _ in
            Self.response(.ok, "text/javascript; charset=utf-8", script, cache: "no-cache")
        }
        router.get("assets/netpulse.css") { _, _ in
            Self.response(.ok, "text/css; charset=utf-8", style, cache: "no-cache")
        }
        router.get("/") { _, _ in try await index(pages) }
        router.get("dashboards/:stem") { request, context in
            try await page(pages, request, stem: context.parameters.require("stem"))
        }
        router.get("dashboards/:stem/panels/:file") { request, context in
            try await panel(
                pages, request, stem: context.parameters.require("stem"), file: context.parameters.require("file"))
        }
        router.get("dashboards/:stem/events") { request, context in
            try await events(pages, request, stem: context.parameters.require("stem"))
        }
    }

    static func response(
        _ status: HTTPResponse.Status, _ type: String, _ body: ByteBuffer, cache: String = "no-store",
        extra: HTTPFields = [:]
    ) -> Response {
        var headers = securityHeaders
        headers[.contentType] = type
        headers[.cacheControl] = cache
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }

    // MARK: Reading

    /// The dashboards as the daemon draws them now, over the catalogue as the store holds it (new hosts appear), in
    /// order and by file stem.
    func dashboards() async throws -> (WindowEngine, ordered: [DashboardSpec], byStem: [String: DashboardSpec]) {
        let config = routes.config
        let generation = routes.store.catalogueGeneration()
        let engine = try await config.windowEngine(over: routes.store, cache: routes.catalogues)
        let logger = routes.logger
        let (ordered, byStem) = reads.dashboards(generation: generation) {
            logger.debug(
                "live pages: dashboards made again for catalogue generation \(generation.map(String.init) ?? "unknown")"
            )
            return config.dashboards.dashboards(for: engine.catalogue, groupBy: config.billing.groupBy)
        }
        return (engine, ordered, byStem)
    }

    func index(_ pages: LivePages) async throws -> Response {
        let (_, specs, _) = try await dashboards()
        let html = pages.index(
            specs, ranges: DashboardRange.standard, zone: routes.config.calendar.name, now: routes.clock.now())
        return Self.response(.ok, "text/html; charset=utf-8", ByteBuffer(string: html))
    }

    /// The range a request names: `range=NAME`, or `from` and `to` (local times in the store's zone unless they
    /// carry one); nothing names the first standard range. Other parameters are refused, as the API refuses them.
    func range(_ request: Request, calendar: CivilCalendar, now: Int64, allowing extra: Set<String> = [])
        throws(QueryError) -> LiveRange
    {
        let parameters = ReadParameters(
            request.uri.queryParameters.map { (String($0.key), String($0.value)) as (String, String?) })
        try parameters.check(known: Set(["range", "from", "to"]).union(extra))
        let named = parameters["range"]
        let (from, to) = (parameters["from"], parameters["to"])
        if let named {
            guard from == nil, to == nil else {
                throw QueryError(parameter: "range", value: named, "give a range or from and to, not both")
            }
            guard let range = DashboardRange.standard.first(where: { $0.name == named }) else {
                throw QueryError(parameter: "range", value: named, "use hour, day, week or month")
            }
            return .named(range)
        }
        guard from != nil || to != nil else { return .named(DashboardRange.standard[0]) }
        guard let from else { throw QueryError(parameter: "to", value: to ?? "", "give from as well") }
        guard let to else { throw QueryError(parameter: "from", value: from, "give to as well") }
        let start = try ReadSelection.time(from, calendar, "from", now: now)
        let end = try ReadSelection.time(to, calendar, "to", now: now)
        guard end > start else { throw QueryError(parameter: "to", value: to, "is not after from (\(from))") }
        return .custom(from: start, to: end)
    }

    /// `spec` read for `range` as of `now`.
    func read(_ spec: DashboardSpec, engine: WindowEngine, range: LiveRange, now: Int64) async throws -> DashboardData {
        let query = DashboardQuery(engine: engine)
        switch range {
        case .named(let named):
            return try await query.read(spec, range: named, now: now)
        case .custom(let from, let to):
            let calendar = engine.calendar
            return try await query.read(
                spec, from: from, to: to, now: now,
                title: "From \(calendar.localMinute(from)) to \(calendar.localMinute(to))")
        }
    }

    /// `spec` read for `range` as of `now` and its panels drawn, shared with the other requests for the same while
    /// the store's data stays at `generation` (``LiveReads``).
    func drawn(
        _ pages: LivePages, _ spec: DashboardSpec, engine: WindowEngine, range: LiveRange, now: Int64,
        generation: Int64?, since: Int64? = nil, heldAsOf: Int64? = nil
    ) async throws -> LiveReads.Drawn {
        let key = generation.map { LiveReads.Key(stem: spec.fileStem, range: range, second: now, data: $0) }
        let (interactive, logger) = (routes.interactive, routes.logger)
        return try await reads.drawn(key, since: since) {
            try await interactive.during {
                let started = ContinuousClock.now
                let drawn = try await readAndDraw(
                    pages, spec, engine: engine, range: range, now: now, heldAsOf: heldAsOf ?? now)
                logger.debug(
                    "live page \(spec.fileStem) (\(range.query)) read and drawn in \((ContinuousClock.now - started).milliseconds) ms at data generation \(generation.map(String.init) ?? "unknown")"
                )
                return drawn
            }
        }
    }

    /// `spec` read for `range` as of `now` and its panels drawn, the open pages' buckets held as of `heldAsOf` (the
    /// clock's now: a read ahead of a boundary must not let go of the buckets the pages read until it passes).
    private func readAndDraw(
        _ pages: LivePages, _ spec: DashboardSpec, engine: WindowEngine, range: LiveRange, now: Int64, heldAsOf: Int64
    ) async throws -> LiveReads.Drawn {
        // Not waited for: holding them the first time reads the window inside the store's writer, and this read
        // takes the rows meanwhile rather than waiting for that (and for the commits queued before it).
        let finest = engine.finest
        Task { await holdRecent(now: heldAsOf, finest: finest) }
        let data = try await read(spec, engine: engine, range: range, now: now)
        return LiveReads.Drawn(data: data, charts: pages.charts(data))
    }

    /// Asks the store to hold in memory the finest buckets the open live pages read (``LiveReads/heldFrom``), or
    /// none when no page is open; a store that cannot ignores it, and one that fails only makes reads slower.
    func holdRecent(now: Int64, finest: RollupLevel) async {
        do {
            try await routes.store.keepRecentBuckets(from: reads.heldFrom(now: now, finest: finest), for: .livePages)
        } catch {
            routes.logger.warning("live pages: recent buckets not held in memory: \(error)")
        }
    }

    func spec(_ stem: String, in specs: [String: DashboardSpec]) throws -> DashboardSpec {
        guard let spec = specs[stem] else {
            throw APIError(.notFound, "no dashboard \(stem); / lists them")
        }
        return spec
    }

    // MARK: Pages and panels

    func page(_ pages: LivePages, _ request: Request, stem: String) async throws -> Response {
        // Before anything is read: a commit after it makes the next request read again.
        let generation = routes.store.dataGeneration()
        let (engine, _, specs) = try await dashboards()
        let spec = try spec(stem, in: specs)
        let now = LiveReads.second(of: routes.clock.now())
        let view: LiveRange
        let drawn: LiveReads.Drawn
        do {
            view = try range(request, calendar: engine.calendar, now: now)
            drawn = try await self.drawn(pages, spec, engine: engine, range: view, now: now, generation: generation)
        } catch let error as QueryError {
            return errorPage(spec, stem: stem, error.parameterText)
        } catch let error as DashboardError {
            return errorPage(spec, stem: stem, error.description)
        }
        // The same inline pictures the page's redraws fetch (drawn once per shared read).
        let panels = drawn.charts.indices.map { drawn.inlineSVG($0, pages: pages) }
        let html = pages.page(
            drawn.data, panels: panels, range: view, ranges: DashboardRange.standard, calendar: engine.calendar)
        return Self.response(.ok, "text/html; charset=utf-8", ByteBuffer(string: html))
    }

    /// A page that cannot be drawn as asked says why, with the way back, as HTML for the person who asked.
    func errorPage(_ spec: DashboardSpec, stem: String, _ message: String) -> Response {
        let html = LivePages.errorPage(
            title: spec.title, message: message, back: "/dashboards/\(PercentEncoding.encode(stem))")
        return Self.response(.badRequest, "text/html; charset=utf-8", ByteBuffer(string: html))
    }

    func panel(_ pages: LivePages, _ request: Request, stem: String, file: String) async throws -> Response {
        let parts = file.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), ["svg", "csv", "json"].contains(parts[1]) else {
            throw APIError(.notFound, "no panel file \(file); use N.svg, N.csv or N.json")
        }
        let format = String(parts[1])
        let generation = routes.store.dataGeneration()
        let (engine, _, specs) = try await dashboards()
        let spec = try spec(stem, in: specs)
        guard spec.panels.indices.contains(index) else {
            throw APIError(.notFound, "dashboard \(stem) has panels 0 to \(spec.panels.count - 1), not \(index)")
        }
        let now = LiveReads.second(of: routes.clock.now())
        let view = try range(request, calendar: engine.calendar, now: now, allowing: ["inline", "since"])
        // A redraw's: the data generation its announcement carried, which any read at least as new answers.
        let since = try request.uri.queryParameters["since"].map { text -> Int64 in
            guard let value = Int64(String(text)), value >= 0 else {
                throw APIError(.badRequest, "since is not a data generation (a whole number)", parameter: "since")
            }
            return value
        }
        let drawn: LiveReads.Drawn
        do {
            drawn = try await self.drawn(
                pages, spec, engine: engine, range: view, now: now, generation: generation, since: since)
        } catch let error as DashboardError {
            throw APIError(.badRequest, error.description)
        }
        guard drawn.charts.indices.contains(index) else { throw APIError(.notFound, "panel \(index) drew nothing") }
        let chart = drawn.charts[index]
        let name = "\(stem)-\(index).\(format)"
        let download: HTTPFields = [.contentDisposition: "inline; filename=\"\(name)\""]
        switch format {
        case "svg":
            let (svg, tag) =
                request.uri.queryParameters["inline"] != nil
                ? drawn.inlineSVG(index, pages: pages)
                : {
                    let svg = pages.panelSVG(chart); return (svg, Self.entityTag(svg))
                }()
            if request.headers[.ifNoneMatch] == tag {
                return Self.response(.notModified, "image/svg+xml", ByteBuffer(), extra: [.eTag: tag])
            }
            var extra = download
            extra[.eTag] = tag
            return Self.response(.ok, "image/svg+xml; charset=utf-8", ByteBuffer(string: svg), extra: extra)
        case "csv":
            return Self.response(
                .ok, "text/csv; charset=utf-8", ByteBuffer(string: LivePages.csv(chart.dataTable())), extra: download)
        default:
            let json = LivePages.json(
                chart.dataTable(), panel: index, window: drawn.data.panels.window, level: drawn.data.panels.level)
            return Self.response(.ok, "application/json", ByteBuffer(string: json), extra: download)
        }
    }

    /// FNV-1a over the bytes, as quoted hex: an entity tag, not a checksum anyone relies on for integrity.
    static func entityTag(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return "\"\(String(hash, radix: 16))\""
    }

    // MARK: Events

    /// How long before a boundary of its level an open page is read as of that boundary (``readAhead(_:stem:range:at:)``).
    static let readAheadLead: Int64 = 500

    /// Reads an open page as of `boundary`, shortly before it, so that the redraw the first batches after the boundary
    /// cause finds the moved window's sums kept; the page's streams all ask, and share one read (``LiveReads``).
    /// Asked for the pages of the fleet and of groups, whose reads sum many series.
    ///
    /// Why: what a page's redraw reads first after a boundary (the fleet's 10,000 interfaces summed over the moved
    /// window) is read cold: alone, 89 ms where the reads a second later took 40–60 ms; at a boundary, beside the
    /// other pages' redraws and the browser painting them, 126–161 ms. Read ahead 200 ms after the boundary, it was
    /// too late: the first batches commit 5–10 ms after it, and their redraw read cold (52–66 ms, a warm one about
    /// 29 ms). Read before it, the redraw finds the sums kept (``MetricStore/keepRecentBuckets(from:for:)``), less
    /// those of the series whose buckets in the window changed since (the agents whose batches land in between).
    ///
    /// Why a read as of a time still to come answers as a read made then: a page's read depends on its `now` only
    /// through its boundaries (``LiveReads``), and on the store's data through the generation it is made at; a commit
    /// after it makes the next request read again. The buckets held for the pages stay those of the clock's now.
    /// A store that cannot tell what changed (no data generation) is not read ahead: its reads are not shared.
    func readAhead(_ pages: LivePages, stem: String, range: DashboardRange, at boundary: Int64) async {
        guard let generation = routes.store.dataGeneration() else { return }
        do {
            let (engine, _, specs) = try await dashboards()
            guard let spec = specs[stem] else { return }
            let now = routes.clock.now()
            _ = try await drawn(
                pages, spec, engine: engine, range: .named(range), now: LiveReads.second(of: boundary),
                generation: generation, heldAsOf: now)
            routes.logger.debug(
                "live page \(stem) (range=\(range.name)) read ahead at \(RFC3339.text(now)) as of its boundary \(RFC3339.text(boundary))"
            )
        } catch {
            routes.logger.debug("live page \(stem) (range=\(range.name)) not read ahead: \(error)")
        }
    }

    /// The panels of the page of `stem` for `range` as of now, for an announcement of data generation `since`, as a
    /// JSON array in the page's order: each panel's entity tag, and its picture where the tag differs from what the
    /// page shows (`shown`, which becomes what it will show). Nil when the page cannot be drawn now: it then fetches
    /// its panels, which say why.
    ///
    /// Why in the event: a redraw that fetched its panels waited for the browser's requests (22–59 ms for a host
    /// page's five, the daemon's part under 10 ms) after the event that announced them; read here, the pictures
    /// come with the announcement, read once for every page of the same dashboard (``LiveReads``).
    func redrawn(
        _ pages: LivePages, stem: String, range: DashboardRange, since: Int64?, shown: inout [String?]
    ) async -> String? {
        let generation = routes.store.dataGeneration()
        do {
            let (engine, _, specs) = try await dashboards()
            guard let spec = specs[stem] else { return nil }
            let now = LiveReads.second(of: routes.clock.now())
            let drawn = try await self.drawn(
                pages, spec, engine: engine, range: .named(range), now: now, generation: generation, since: since)
            var panels = [String]()
            var tags = [String?]()
            for index in drawn.charts.indices {
                let (svg, tag) = drawn.inlineSVG(index, pages: pages)
                let changed = index >= shown.count || shown[index] != tag
                panels.append(
                    JSONText.object([("tag", JSONText.string(tag))] + (changed ? [("svg", JSONText.string(svg))] : [])))
                tags.append(tag)
            }
            shown = tags
            return "[" + panels.joined(separator: ",") + "]"
        } catch {
            routes.logger.debug("live page \(stem) (range=\(range.name)): no panels sent with its event: \(error)")
            return nil
        }
    }

    /// The stream of a page of a named range. An announcement is sent only when it may change what the page shows:
    /// a bucket boundary of the range's resolution has passed since the last one sent (the window moved), or the
    /// batches hold samples from before the current boundary (late data in a bucket the page draws). Batches that
    /// only fill the bucket in progress, which no page draws, are not announced: with agents sending every 10 s, a
    /// page of the last hour hears of a few commits a minute rather than of every one. Each event carries the page's
    /// panels as they are now, the pictures of those that changed (``redrawn(_:stem:range:since:shown:)``).
    func events(_ pages: LivePages, _ request: Request, stem: String) async throws -> Response {
        let (engine, _, specs) = try await dashboards()
        let spec = try spec(stem, in: specs)
        let now = routes.clock.now()
        guard
            case .named(let range) = try range(
                request, calendar: engine.calendar, now: now, allowing: ["drawn", "shown"])
        else {
            throw APIError(.badRequest, "a picked range does not change: only range=NAME has events", parameter: "from")
        }
        // The level the page is drawn at: its range's resolution, or the next kept one (a store without minutes
        // draws the last hour at five minutes, and a page would otherwise hear of every minute for nothing).
        let level =
            DashboardQuery.level(
                preferred: range.resolution, length: range.length, now: now, levels: engine.levels, requireKept: true)
            ?? range.resolution
        // The end of the window the page drew (its events link says), else the current boundary.
        let drawn = request.uri.queryParameters["drawn"].flatMap { Int64(String($0)) }
        let shownFrom = min(drawn ?? level.bucketStart(now), level.bucketStart(now))
        let agent: String? =
            switch spec.scope {
            case .host(let agent): agent
            // A group's members change with its labels: every stored batch may concern it.
            case .fleet, .group: nil
            }
        // What the page shows: its panels' tags as it was drawn (hex, without the quotes), one per panel at most.
        let shownAtOpen: [String?] = (request.uri.queryParameters["shown"].map(String.init) ?? "")
            .split(separator: ",", omittingEmptySubsequences: false).prefix(spec.panels.count)
            .map { $0.isEmpty || !$0.allSatisfy(\.isHexDigit) ? nil : "\"\($0)\"" }
        let announcer = self.announcer
        let (stream, id) = announcer.subscribe(agent: agent)
        // While it is open, its window is held in memory for its reads (the first redraw after it opens, or this).
        let finest = engine.finest
        if reads.opened(id, length: range.length, finest: finest) {
            Task { await holdRecent(now: routes.clock.now(), finest: finest) }
        }
        var headers = Self.securityHeaders
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer {
                    announcer.unsubscribe(id)
                    reads.closed(id)
                    Task { await holdRecent(now: routes.clock.now(), finest: finest) }
                }
                let pinger = Task {
                    while !Task.isCancelled {
                        try await Task.sleep(for: Self.pingEvery)
                        announcer.ping(id)
                    }
                }
                defer { pinger.cancel() }
                // Only the fleet's and groups' pages: a host's reads a few series, as quickly cold as warm.
                let ahead =
                    agent != nil
                    ? nil
                    : Task {
                        var readFor = level.bucketStart(routes.clock.now())
                        while !Task.isCancelled {
                            let now = routes.clock.now()
                            // Each boundary once, the next after the last read for.
                            let next = max(level.bucketStart(now) + level.width, readFor + level.width)
                            let wait = next - Self.readAheadLead - now
                            if wait > 0 { try await Task.sleep(for: .milliseconds(wait)) }
                            await readAhead(pages, stem: stem, range: range, at: next)
                            readFor = next
                        }
                    }
                defer { ahead?.cancel() }
                try await writer.write(ByteBuffer(string: "retry: 3000\n: netpulse live events\n\n"))
                try await withGracefulShutdownHandler {
                    var shownUntil = shownFrom
                    var shown = shownAtOpen
                    var pace = EventPace()
                    for await _ in stream {
                        while let event = announcer.take(id) {
                            guard case .stored(var announcement) = event else {
                                try await writer.write(ByteBuffer(string: ": ping\n\n"))
                                continue
                            }
                            let boundary = level.bucketStart(announcement.lastCommitted)
                            guard boundary > shownUntil || announcement.earliest < boundary else { continue }
                            // Announcements that come while it waits its turn go with it.
                            let wait = pace.delay(at: .now)
                            if wait > .zero {
                                try await Task.sleep(for: wait)
                                if case .stored(let later) = announcer.take(id) {
                                    announcement = announcement.merged(with: later)
                                }
                            }
                            shownUntil = level.bucketStart(announcement.lastCommitted)
                            let turn = routes.clock.now()
                            let panels = await redrawn(
                                pages, stem: stem, range: range, since: announcement.generation, shown: &shown)
                            let drawnAt = routes.clock.now()
                            let data = JSONText.object(
                                [
                                    ("earliest", "\(announcement.earliest)"), ("through", "\(announcement.through)"),
                                    ("committed", "\(announcement.committed)"),
                                ] + (announcement.generation.map { [("generation", "\($0)")] } ?? [])
                                    + (panels.map { [("panels", $0)] } ?? []))
                            try await writer.write(ByteBuffer(string: "event: buckets\ndata: \(data)\n\n"))
                            // Where the time from the commit to the event went, for the benchmark's log.
                            let sent = routes.clock.now()
                            routes.logger.debug(
                                "live page \(stem) (range=\(range.name)) event sent \(sent - announcement.committed) ms after its commit: its turn \(turn - announcement.committed) ms, its panels \(drawnAt - turn) ms, \(data.utf8.count) bytes written in \(sent - drawnAt) ms"
                            )
                        }
                    }
                } onGracefulShutdown: {
                    announcer.unsubscribe(id)
                }
                try await writer.finish(nil)
            })
    }
}
