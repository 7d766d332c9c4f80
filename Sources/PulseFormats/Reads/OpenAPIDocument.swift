import PulseAnalytics
import PulseCore
import PulseQuery

/// The OpenAPI 3.1 description of `/api/v1`, made from the reads themselves (their names, parameters and choices),
/// so it cannot drift from what the daemon parses. Served at `/api/v1/openapi.json`; `docs/api.md` is its prose.
public enum OpenAPIDocument {
    /// What each parameter is, and its schema as JSON.
    static func parameter(_ name: String) -> (description: String, schema: String) {
        func choices(_ values: [String], default fallback: String? = nil) -> String {
            var fields = [("type", JSONText.string("string")), ("enum", JSONText.array(values.map(JSONText.string)))]
            if let fallback { fields.append(("default", JSONText.string(fallback))) }
            return JSONText.object(fields)
        }
        let text = JSONText.object([("type", JSONText.string("string"))])
        switch name {
        case "since": return ("how far back the events go: 1h, 24h, 7d", text)
        case "limit":
            return (
                "at most this many events, newest first",
                JSONText.object([
                    ("type", JSONText.string("integer")), ("minimum", "1"), ("maximum", "\(AlertsRead.mostEvents)"),
                    ("default", "50"),
                ])
            )
        case "agent": return ("only this agent", text)
        case "interface": return ("only interfaces matching this shell glob (eth*)", text)
        case "group": return ("only this group, as key=value (site=fra1)", text)
        case "last": return ("a window ending now: 30m, 24h, 7d", text)
        case "window":
            return (
                "a named window: today, yesterday, this-week, last-week, this-month, last-month, this-year, billing-period, last-billing-period, or last-DURATION",
                text
            )
        case "from": return ("start: 2026-11-01, 2026-11-01 08:00 (the configured zone) or RFC 3339", text)
        case "to": return ("end, exclusive, in the same forms as from; default now", text)
        case "scope": return ("interfaces, hosts, groups or the fleet", choices(ScopeChoice.allCases.map(\.rawValue)))
        case "top":
            return (
                "how many",
                JSONText.object([("type", JSONText.string("integer")), ("minimum", "1"), ("default", "10")])
            )
        case "period": return ("current, previous, or a month (2026-10): the billing period that starts in it", text)
        case "members":
            return (
                "also say what each bill's scope was over its period (a flag)",
                JSONText.object([("type", JSONText.string("boolean"))])
            )
        case "level":
            return (
                "raw, or a rollup level: 1m, 5m, 1h, 1d",
                JSONText.object([("type", JSONText.string("string")), ("default", JSONText.string("5m"))])
            )
        default: return ("", text)
        }
    }

    /// The formats a read writes, json first where it is one (the API's default; table is what a terminal shows).
    static func format(_ read: Read) -> (description: String, schema: String) {
        let formats = read.formats.map(\.rawValue)
        let fallback = formats.contains("json") ? "json" : formats[0]
        return (
            "\(formats.joined(separator: ", ")) (default \(fallback); table is what a terminal shows)",
            JSONText.object([
                ("type", JSONText.string("string")), ("enum", JSONText.array(formats.map(JSONText.string))),
                ("default", JSONText.string(fallback)),
            ])
        )
    }

    /// `by` differs by read.
    static func by(_ read: Read) -> (description: String, schema: String)? {
        func choices(_ values: [String], _ fallback: String) -> String {
            JSONText.object([
                ("type", JSONText.string("string")), ("enum", JSONText.array(values.map(JSONText.string))),
                ("default", JSONText.string(fallback)),
            ])
        }
        switch read {
        case .traffic: return ("the periods of the table", choices(TrafficUnit.allCases.map(\.rawValue), "day"))
        case .top: return ("what to rank by", choices(Ranking.allCases.map(\.rawValue), "bytes"))
        default: return nil
        }
    }

    static let summaries: [Read: String] = [
        .rates: "Each interface's current rates and today's totals",
        .traffic: "Traffic per 5 minutes, hour, day, month or year",
        .top: "Top interfaces, hosts or groups by bytes, peak rate, 95th percentile or error ratio",
        .bill: "95th-percentile bills of a billing period",
        .export: "Rollup buckets or raw samples of any range (streamed)",
        .snapshot: "An analytics snapshot as of now, with the contents of the daemon's [snapshots]",
        .alerts: "Pending and firing alerts, recent events and the silences in force",
        .events: "The alerts' transitions of the last `since`, newest first",
    ]

    /// The one write (`[http] allow_silences`): making and ending silences.
    static func silences(error: String) -> [(String, String)] {
        func string(_ description: String) -> String {
            JSONText.object([("type", JSONText.string("string")), ("description", JSONText.string(description))])
        }
        let body = JSONText.object([
            ("type", JSONText.string("object")), ("required", JSONText.array(["match", "for"].map(JSONText.string))),
            ("additionalProperties", "false"),
            (
                "properties",
                JSONText.object([
                    (
                        "match",
                        JSONText.object([
                            ("type", JSONText.string("object")),
                            ("description", JSONText.string("label names and shell globs of their values")),
                            ("additionalProperties", JSONText.object([("type", JSONText.string("string"))])),
                            ("minProperties", "1"), ("maxProperties", "\(SilenceRequest.mostMatchers)"),
                        ])
                    ),
                    ("for", string("how long: 30m, 2h, 7d (at most 366d)")),
                    ("comment", string("why")),
                    ("author", string("who, on the Unix socket; over TCP it is who authenticated")),
                ])
            ),
        ])
        func answer(_ description: String) -> String {
            JSONText.object([
                ("description", JSONText.string(description)),
                (
                    "content",
                    JSONText.object([
                        (
                            "application/json",
                            JSONText.object([("schema", JSONText.object([("type", JSONText.string("object"))]))])
                        )
                    ])
                ),
            ])
        }
        let refused = [("400", error), ("401", error), ("403", error)]
        let post = JSONText.object([
            ("operationId", JSONText.string("silence")),
            ("summary", JSONText.string("Make a silence (only with [http] allow_silences)")),
            (
                "requestBody",
                JSONText.object([
                    ("required", "true"),
                    ("content", JSONText.object([("application/json", JSONText.object([("schema", body)]))])),
                ])
            ),
            (
                "responses",
                JSONText.object(
                    [("201", answer("the silence's id, end (endsAt, and until in the daemon's zone) and author"))]
                        + refused + [("413", error)])
            ),
        ])
        let delete = JSONText.object([
            ("operationId", JSONText.string("expireSilence")),
            ("summary", JSONText.string("End a silence now (only with [http] allow_silences)")),
            (
                "parameters",
                JSONText.array([
                    JSONText.object([
                        ("name", JSONText.string("id")), ("in", JSONText.string("path")), ("required", "true"),
                        ("schema", JSONText.object([("type", JSONText.string("string"))])),
                    ])
                ])
            ),
            ("responses", JSONText.object([("200", answer("the silence ended"))] + refused + [("404", error)])),
        ])
        return [
            ("/api/v1/silences", JSONText.object([("post", post)])),
            ("/api/v1/silences/{id}", JSONText.object([("delete", delete)])),
        ]
    }

    public static func json(version: String) -> String {
        let error = JSONText.object([
            ("description", JSONText.string("one line of JSON: what is wrong, and the parameter at fault")),
            (
                "content",
                JSONText.object([
                    (
                        "application/json",
                        JSONText.object([
                            ("schema", JSONText.object([("$ref", JSONText.string("#/components/schemas/Error"))]))
                        ])
                    )
                ])
            ),
        ])
        var paths = [(String, String)]()
        for read in Read.allCases {
            let names = ["format"] + read.names.subtracting(["format"]).sorted()
            let parameters = names.map { name in
                let (description, schema) =
                    switch name {
                    case "by": by(read)!
                    case "format": format(read)
                    default: parameter(name)
                    }
                return JSONText.object([
                    ("name", JSONText.string(name)), ("in", JSONText.string("query")), ("required", "false"),
                    ("description", JSONText.string(description)), ("schema", schema),
                ])
            }
            let media = read.formats.map { format in
                (
                    format.mediaType.split(separator: ";").first.map(String.init) ?? format.mediaType,
                    JSONText.object([("schema", JSONText.object([("type", JSONText.string("string"))]))])
                )
            }
            let operation = JSONText.object([
                ("operationId", JSONText.string(read.rawValue)), ("summary", JSONText.string(summaries[read] ?? "")),
                (
                    "description",
                    JSONText.string(
                        "The same bytes as `netpulse \(read.command)` with these options (docs/api.md).")
                ),
                ("parameters", JSONText.array(parameters)),
                (
                    "responses",
                    JSONText.object([
                        (
                            "200",
                            JSONText.object([
                                ("description", JSONText.string("the answer")), ("content", JSONText.object(media)),
                            ])
                        ),
                        ("400", error), ("401", error), ("403", error),
                    ])
                ),
            ])
            paths.append(("/api/v1/\(read.rawValue)", JSONText.object([("get", operation)])))
        }
        paths += silences(error: error)
        return JSONText.object([
            ("openapi", JSONText.string("3.1.0")),
            (
                "info",
                JSONText.object([
                    ("title", JSONText.string("netpulsed HTTP API")), ("version", JSONText.string(version)),
                    (
                        "description",
                        JSONText.string(
                            "Read-only but for silences, which need [http] allow_silences. See docs/api.md for who gets in and what each figure means."
                        )
                    ),
                ])
            ),
            ("paths", JSONText.object(paths)),
            (
                "components",
                JSONText.object([
                    (
                        "schemas",
                        JSONText.object([
                            (
                                "Error",
                                JSONText.object([
                                    ("type", JSONText.string("object")),
                                    ("required", JSONText.array([JSONText.string("error")])),
                                    (
                                        "properties",
                                        JSONText.object([
                                            ("error", JSONText.object([("type", JSONText.string("string"))])),
                                            ("parameter", JSONText.object([("type", JSONText.string("string"))])),
                                        ])
                                    ),
                                ])
                            )
                        ])
                    ),
                    (
                        "securitySchemes",
                        JSONText.object([
                            (
                                "basic",
                                JSONText.object([
                                    ("type", JSONText.string("http")), ("scheme", JSONText.string("basic")),
                                ])
                            ),
                            (
                                "operator",
                                JSONText.object([
                                    ("type", JSONText.string("mutualTLS")),
                                    (
                                        "description",
                                        JSONText.string("a client certificate from netpulse ca issue --operator NAME")
                                    ),
                                ])
                            ),
                        ])
                    ),
                ])
            ),
        ]) + "\n"
    }
}
