import GPSModel
import JSON

/// The first line of a capture (docs/capture-format.md): what was recorded, where, and how.
public struct CaptureHeader: Sendable, Equatable {
    /// The only version this build writes and reads.
    public static let currentVersion = 1

    public var version: Int
    /// Wall-clock UTC when recording started (`t` = 0), if known.
    public var started: UTCTime?
    public var host: String?
    /// gpsd's release, from its VERSION report.
    public var gpsd: String?
    public var devicePath: String?
    public var deviceDriver: String?
    public var profile: String?
    /// `live` (recorded from gpsd), `import` (made from a raw log), or another producer's word.
    public var source: String?
    /// Free text: `--note`, or a raw log's `#` header lines.
    public var notes: [String]

    public init(
        version: Int = CaptureHeader.currentVersion, started: UTCTime? = nil, host: String? = nil,
        gpsd: String? = nil, devicePath: String? = nil, deviceDriver: String? = nil, profile: String? = nil,
        source: String? = nil, notes: [String] = []
    ) {
        self.version = version
        self.started = started
        self.host = host
        self.gpsd = gpsd
        self.devicePath = devicePath
        self.deviceDriver = deviceDriver
        self.profile = profile
        self.source = source
        self.notes = notes
    }
}

/// One line after the header. Every line carries `t`: seconds since the start, on a monotonic clock.
public enum CaptureRecord: Sendable, Equatable {
    /// A gpsd JSON object, verbatim (decoded on replay by libgps, as live).
    case gpsd(String)
    /// Bytes the receiver sent.
    case received([UInt8])
    /// Bytes sent to the receiver.
    case transmitted([UInt8])
    /// The receiver regime the policy chose, and why.
    case regime(String, reason: String?)
    /// A policy, runtime or power-control event.
    case event(CaptureEvent)
}

/// An `event` line's object (docs/capture-format.md). Generic on purpose: the capture format does not know
/// the kinds, so a kind this build has never heard of is kept as text, and the modules that define kinds
/// (policy events, receiver power events) convert to and from it.
public struct CaptureEvent: Sendable, Equatable {
    public var kind: String
    /// The receiver regime the event is about (`"standby"`), if any.
    public var regime: String?
    /// A duration the event measured (to quiet, to the first fix after a wake), if any.
    public var seconds: Double?
    public var detail: String?

    public init(kind: String, regime: String? = nil, seconds: Double? = nil, detail: String? = nil) {
        self.kind = kind
        self.regime = regime
        self.seconds = seconds
        self.detail = detail
    }
}

/// Writes capture lines: each is one complete JSON object and its newline, built as bytes.
public enum CaptureLineEncoder {
    public static func header(_ header: CaptureHeader) -> [UInt8] {
        var line = Array(#"{"lodestar":"capture","version":"#.utf8)
        line += Array(String(header.version).utf8)
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            line += Array(",\"\(key)\":".utf8)
            JSONWriter.appendQuoted(value, to: &line)
        }
        add("started", header.started.map(\.iso8601))
        add("host", header.host)
        add("gpsd", header.gpsd)
        if header.devicePath != nil || header.deviceDriver != nil {
            line += Array(#","device":{"#.utf8)
            var first = true
            for (key, value) in [("path", header.devicePath), ("driver", header.deviceDriver)] {
                guard let value else { continue }
                if !first { line.append(UInt8(ascii: ",")) }
                first = false
                line += Array("\"\(key)\":".utf8)
                JSONWriter.appendQuoted(value, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        }
        add("profile", header.profile)
        add("source", header.source)
        if !header.notes.isEmpty {
            line += Array(#","notes":["#.utf8)
            for (index, note) in header.notes.enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                JSONWriter.appendQuoted(note, to: &line)
            }
            line.append(UInt8(ascii: "]"))
        }
        line += Array("}\n".utf8)
        return line
    }

    /// A gpsd line, `object` being gpsd's JSON text as it arrived (without its line end).
    public static func gpsd<Bytes: Collection>(t: Double, object: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var line = prefix(t)
        line += Array(#""gpsd":"#.utf8)
        line.append(contentsOf: object)
        line += Array("}\n".utf8)
        return line
    }

    public static func record(t: Double, _ record: CaptureRecord) -> [UInt8] {
        switch record {
        case .gpsd(let text):
            return gpsd(t: t, object: Array(text.utf8))
        case .received(let bytes), .transmitted(let bytes):
            var line = prefix(t)
            if case .received = record { line += Array(#""rx":""#.utf8) } else { line += Array(#""tx":""#.utf8) }
            Base64.encode(bytes, into: &line)
            line += Array("\"}\n".utf8)
            return line
        case .regime(let regime, let reason):
            var line = prefix(t)
            line += Array(#""regime":"#.utf8)
            JSONWriter.appendQuoted(regime, to: &line)
            appendString("reason", reason, to: &line)
            line += Array("}\n".utf8)
            return line
        case .event(let event):
            var line = prefix(t)
            line += Array(#""event":{"kind":"#.utf8)
            JSONWriter.appendQuoted(event.kind, to: &line)
            appendString("regime", event.regime, to: &line)
            // Milliseconds, as `t`; a reader rejects what is not a non-negative number, so nothing else is written.
            if let seconds = event.seconds, seconds.isFinite {
                line += Array(#","seconds":"#.utf8)
                JSONWriter.appendNumber((max(0, seconds) * 1000).rounded() / 1000, to: &line)
            }
            appendString("detail", event.detail, to: &line)
            line += Array("}}\n".utf8)
            return line
        }
    }

    /// `,"key":` and the quoted `value`, when there is one.
    private static func appendString(_ key: StaticString, _ value: String?, to line: inout [UInt8]) {
        guard let value else { return }
        line += [UInt8(ascii: ","), UInt8(ascii: "\"")]
        key.withUTF8Buffer { line += $0 }
        line += [UInt8(ascii: "\""), UInt8(ascii: ":")]
        JSONWriter.appendQuoted(value, to: &line)
    }

    /// `{"t":12.345,` — milliseconds are finer than any receiver epoch and keep lines short.
    static func prefix(_ t: Double) -> [UInt8] {
        var line = Array(#"{"t":"#.utf8)
        line += Array(formatMilliseconds(t).utf8)
        line.append(UInt8(ascii: ","))
        return line
    }

    /// `t` with exactly three decimals, never negative, never NaN.
    static func formatMilliseconds(_ t: Double) -> String {
        let milliseconds = t.isFinite ? Int64((max(0, t) * 1000).rounded()) : 0
        let fraction = String(milliseconds % 1000)
        return String(milliseconds / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

/// RFC 4648 base64 with padding: a capture's `rx`/`tx` bytes, and the demo capture compiled into the binary.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, letter) in alphabet.enumerated() { table[Int(letter)] = UInt8(index) }
        return table
    }()

    public static func encode<Bytes: Collection>(_ input: Bytes, into output: inout [UInt8])
    where Bytes.Element == UInt8 {
        var iterator = input.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            output.append(second == nil ? UInt8(ascii: "=") : alphabet[Int(group >> 6 & 0x3F)])
            output.append(third == nil ? UInt8(ascii: "=") : alphabet[Int(group & 0x3F)])
        }
    }

    /// Nil when the text is not canonical padded base64.
    public static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            var group: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let letter = input[index + offset]
                if letter == UInt8(ascii: "="), isLast, offset >= 2 {
                    padding += 1
                    group <<= 6
                    continue
                }
                let value = values[Int(letter)]
                guard value != 0xFF, padding == 0 else { return nil }
                group = group << 6 | UInt32(value)
            }
            output.append(UInt8(group >> 16 & 0xFF))
            if padding < 2 { output.append(UInt8(group >> 8 & 0xFF)) }
            if padding < 1 { output.append(UInt8(group & 0xFF)) }
            index += 4
        }
        return output
    }

    /// `text` wrapped over lines (line breaks and spaces between the groups are skipped); nil when the rest
    /// is not canonical padded base64.
    public static func decode(lines text: String) -> [UInt8]? {
        let letters = text.utf8.filter {
            $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: " ")
        }
        return letters.withUnsafeBufferPointer { decode($0) }
    }
}
