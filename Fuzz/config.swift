// libFuzzer target: a config file, parsed (ConfigDocument, the strict TOML subset every Netpulse config is written
// in) and every value read through each of ConfigReader's typed readers, as the agent and the daemon read theirs
// (scripts/fuzz.sh). Every failure must be a ConfigError naming the file, and a line when it names a key.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let document: ConfigDocument
    do {
        document = try ConfigDocument(text: text, file: "fuzz.toml")
    } catch {
        guard error.file == "fuzz.toml", error.line != nil else {
            fatalError("a syntax error without its line: \(error)")
        }
        return 0
    }
    for (table, entries) in document.tables {
        for key in entries.keys {
            func check(_ read: (inout ConfigReader) throws(ConfigError) -> Void) {
                var reader = ConfigReader(document)
                do {
                    try read(&reader)
                } catch {
                    guard error.file == "fuzz.toml", error.line != nil, error.key != nil else {
                        fatalError("an error without its place: \(error)")
                    }
                }
            }
            check { (reader: inout ConfigReader) throws(ConfigError) in _ = try reader.string(table, key, default: "") }
            check { (reader: inout ConfigReader) throws(ConfigError) in
                _ = try reader.integer(table, key, default: 0, range: -1_000...1_000_000)
            }
            check { (reader: inout ConfigReader) throws(ConfigError) in
                _ = try reader.number(table, key, default: 0, range: 0...1)
            }
            check { (reader: inout ConfigReader) throws(ConfigError) in
                _ = try reader.boolean(table, key, default: false)
            }
            check { (reader: inout ConfigReader) throws(ConfigError) in
                _ = try reader.duration(table, key, default: 1_000, range: 1...86_400_000)
            }
            check { (reader: inout ConfigReader) throws(ConfigError) in
                _ = try reader.byteSize(table, key, default: 0, range: 0...(1 << 40))
            }
            check { (reader: inout ConfigReader) throws(ConfigError) in
                _ = try reader.stringArray(table, key, default: [])
            }
            check { (reader: inout ConfigReader) throws(ConfigError) in
                _ = try reader.endpoints(table, key, default: [])
            }
        }
        var reader = ConfigReader(document)
        _ = try? reader.labels(table)
        _ = try? reader.stringTable(table)
    }
    return 0
}
