import ArgumentParser
import PulseCore
import PulseDaemon

struct Rates: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show each interface's current rates and totals, read from the daemon's store.")

    @Option(name: .long, help: "The daemon's SQLite store.")
    var store: String?

    @Option(name: .long, help: "Read the store path from this daemon config instead.")
    var config: String = "/etc/netpulse/netpulsed.toml"

    @Option(name: .long, help: "table, csv or json.")
    var format = "table"

    func validate() throws {
        guard ["table", "csv", "json"].contains(format) else { throw ValidationError("--format must be table, csv or json") }
    }

    func run() throws {
        let summaries: [InterfaceSummary]
        do {
            let path = try store ?? DaemonConfig.load(path: config).storePath
            guard FileIO.exists(path) else {
                throw DaemonError("\(path): no store yet; has netpulsed run with this config?")
            }
            summaries = try Store(path: path, readOnly: true).interfaceSummaries()
        } catch {
            throw fail(error)
        }
        let now = WallClock.milliseconds()
        switch format {
        case "json": print(Self.json(summaries))
        case "csv": print(Self.csv(summaries), terminator: "")
        default: print(Self.table(summaries, now: now), terminator: "")
        }
    }

    static func table(_ summaries: [InterfaceSummary], now: Int64) -> String {
        guard !summaries.isEmpty else { return "no interfaces stored yet\n" }
        var rows = [["AGENT", "INTERFACE", "RX RATE", "TX RATE", "RX TOTAL", "TX TOTAL", "SAMPLES", "LAST SEEN"]]
        for summary in summaries {
            rows.append([
                summary.agent, TerminalText.safe(summary.interface.description),
                Units.formatBitRate(bytesPerSecond: summary.rxBytesPerSecond),
                Units.formatBitRate(bytesPerSecond: summary.txBytesPerSecond),
                Units.formatBytes(Double(summary.rxBytesTotal)), Units.formatBytes(Double(summary.txBytesTotal)),
                "\(summary.sampleCount)", "\(Units.formatDuration(max(0, now - summary.lastTimestamp) / 1000 * 1000)) ago",
            ])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                // Numbers read best right-aligned.
                return (2...6).contains(index) ? padding + cell : cell + padding
            }
            out += cells.joined(separator: "  ").trimmingWhitespace() + "\n"
        }
        return out
    }

    static func csv(_ summaries: [InterfaceSummary]) -> String {
        var out = "agent,interface,rx_bytes_per_second,tx_bytes_per_second,rx_bytes_total,tx_bytes_total,"
        out += Counter.allCases.map(\.name).joined(separator: ",") + ",samples,first_ms,last_ms\n"
        for summary in summaries {
            var fields = [
                CSV.field(summary.agent), CSV.field(summary.interface.description),
                Units.fixed(summary.rxBytesPerSecond, decimals: 3), Units.fixed(summary.txBytesPerSecond, decimals: 3),
                "\(summary.rxBytesTotal)", "\(summary.txBytesTotal)",
            ]
            fields += summary.counters.values.map { "\($0)" }
            fields += ["\(summary.sampleCount)", "\(summary.firstTimestamp)", "\(summary.lastTimestamp)"]
            out += fields.joined(separator: ",") + "\n"
        }
        return out
    }

    static func json(_ summaries: [InterfaceSummary]) -> String {
        let items = summaries.map { summary in
            var fields = [
                "\"agent\":\(JSON.string(summary.agent))",
                "\"interface\":\(JSON.string(summary.interface.description))",
                "\"rx_bytes_per_second\":\(Units.fixed(summary.rxBytesPerSecond, decimals: 3))",
                "\"tx_bytes_per_second\":\(Units.fixed(summary.txBytesPerSecond, decimals: 3))",
                "\"rx_bytes_total\":\(summary.rxBytesTotal)", "\"tx_bytes_total\":\(summary.txBytesTotal)",
                "\"samples\":\(summary.sampleCount)", "\"first_ms\":\(summary.firstTimestamp)",
                "\"last_ms\":\(summary.lastTimestamp)",
            ]
            let counters = Counter.allCases.map { "\"\($0.name)\":\(summary.counters[$0])" }.joined(separator: ",")
            fields.append("\"counters\":{\(counters)}")
            return "{" + fields.joined(separator: ",") + "}"
        }
        return "[" + items.joined(separator: ",\n") + "]"
    }
}

/// Text escaping for the CLI's outputs; interface names may hold any byte but '/', ':', whitespace and NUL.
enum JSON {
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

enum CSV {
    /// RFC 4180: quote fields holding a comma, quote or line break; double inner quotes.
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingAll("\"", with: "\"\"") + "\""
    }
}

enum TerminalText {
    /// Control characters shown as `\xNN`, so a hostile interface name cannot drive the terminal.
    static func safe(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                out += "\\x" + Hex.string(UInt64(scalar.value), width: 2)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
