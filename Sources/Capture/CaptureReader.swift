import GPSD
import GPSModel
import JSON

/// What is wrong with a capture, with the line it is on (1-based) when there is one.
public struct CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No bytes at all (or only whitespace).
        case empty
        /// A header with a version this build does not read.
        case unknownVersion
        /// A line that is not what the format says.
        case malformed
        /// Valid, but with no fix in it.
        case noFix
        /// The source could not be read (an I/O error, not the capture's fault).
        case unreadable
    }

    public var kind: Kind
    public var line: Int?
    public var message: String

    public init(_ kind: Kind, line: Int?, _ message: String) {
        self.kind = kind
        self.line = line
        self.message = message
    }

    /// `line N: message`, or the message alone. Callers put the file name in front.
    public var description: String {
        line.map { "line \($0): \(message)" } ?? message
    }
}

/// A capture read into memory: its header and its lines, in file order, referring to the file's bytes.
public struct CaptureContents: Sendable {
    public enum Payload: Sendable, Equatable {
        /// A gpsd object: its byte range in `bytes`.
        case gpsd(Range<Int>)
        /// Base64 text (without quotes) of received or transmitted bytes.
        case received(Range<Int>)
        case transmitted(Range<Int>)
        case regime(String, reason: String?)
        case event(CaptureEvent)
    }

    public struct Line: Sendable, Equatable {
        public var t: Double
        /// 1-based line number in the file.
        public var number: Int
        public var payload: Payload
    }

    public let bytes: [UInt8]
    public let header: CaptureHeader
    public let lines: [Line]
    /// Problems that did not stop the read (a torn final line, a line with no key this version reads).
    public let warnings: [CaptureError]

    /// The decoded bytes of an `rx`/`tx` line (validated when the capture was read).
    public func rawBytes(_ range: Range<Int>) -> [UInt8] {
        bytes.withUnsafeBufferPointer { Base64.decode(UnsafeBufferPointer(rebasing: $0[range])) } ?? []
    }

    /// A gpsd object's text.
    public func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// Counts of each kind of line, for summaries.
    public var gpsdLineCount: Int { lines.count { if case .gpsd = $0.payload { true } else { false } } }
    public var receivedLineCount: Int { lines.count { if case .received = $0.payload { true } else { false } } }
}

/// Reads capture files (docs/capture-format.md). A torn final line is a warning; anything else that breaks
/// the format is an error naming the line; unknown keys are ignored (forward compatible).
public enum CaptureReader {
    /// Whether `bytes` look like a capture rather than a raw receiver log: the first non-blank byte opens a
    /// JSON object. A raw log starts with `$`, `!`, `#`, or binary.
    public static func looksLikeCapture(_ bytes: [UInt8]) -> Bool {
        bytes.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D } == UInt8(ascii: "{")
    }

    public static func read(_ bytes: [UInt8]) throws(CaptureError) -> CaptureContents {
        var parser = CaptureLineParser()
        var lines: [CaptureContents.Line] = []
        var failure: CaptureError?
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            var number = 0
            while start < buffer.count, failure == nil {
                number += 1
                var end = start
                while end < buffer.count, buffer[end] != 0x0A { end += 1 }
                let terminated = end < buffer.count
                var contentEnd = end
                if contentEnd > start, buffer[contentEnd - 1] == 0x0D { contentEnd -= 1 }
                let range = start..<contentEnd
                start = end + 1
                do throws(CaptureError) {
                    if let line = try parser.parse(buffer, range, number: number, terminated: terminated) {
                        lines.append(line)
                    }
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
        let header = try parser.finish()
        return CaptureContents(bytes: bytes, header: header, lines: lines, warnings: parser.warnings)
    }

    /// The latest instant a capture may name: 9999-12-31T23:59:59Z, as seconds since 1970.
    public static let latestTime = 253_402_300_799.0
    /// The longest stretch between two lines (30 days): a recorder that saw nothing for longer is not one
    /// recording, and a `t` that jumps further is a damaged line (docs/capture-format.md).
    public static let longestGap = 30.0 * 86_400

    /// The warning for a valid line that carries none of the keys this version reads.
    static func notUnderstood(_ number: Int) -> CaptureError {
        CaptureError(
            .malformed, line: number,
            "skipped: a JSON object with none of the keys this lodestar reads (gpsd, rx, tx, regime, event)")
    }

    private static func matches(_ buffer: UnsafeBufferPointer<UInt8>, _ key: Range<Int>, _ name: StaticString) -> Bool {
        name.withUTF8Buffer { buffer[key].elementsEqual($0) }
    }

    static func parseHeader(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, number: Int) throws(CaptureError)
        -> CaptureHeader
    {
        let line = UnsafeBufferPointer(rebasing: buffer[range])
        var header = CaptureHeader(version: 0)
        var isCapture = false
        var versionText: String?
        var problem: String?
        let valid = JSONSyntax.scanObject(line) { key, kind, value in
            func text() -> String? { kind == .string ? JSONSyntax.string(line, value) : nil }
            if matches(line, key, "lodestar") {
                isCapture = text() == "capture"
            } else if matches(line, key, "version") {
                versionText = String(decoding: UnsafeBufferPointer(rebasing: line[value]), as: UTF8.self)
            } else if matches(line, key, "started") {
                header.started = text().flatMap { UTCTime(iso8601: Array($0.utf8)) }
                if header.started == nil { problem = "\"started\" is not an ISO 8601 UTC time" }
            } else if matches(line, key, "host") {
                header.host = text()
            } else if matches(line, key, "gpsd") {
                header.gpsd = text()
            } else if matches(line, key, "profile") {
                header.profile = text()
            } else if matches(line, key, "source") {
                header.source = text()
            } else if matches(line, key, "device"), kind == .object {
                let device = UnsafeBufferPointer(rebasing: line[value])
                _ = JSONSyntax.scanObject(device) { deviceKey, deviceKind, deviceValue in
                    guard deviceKind == .string else { return }
                    if matches(device, deviceKey, "path") { header.devicePath = JSONSyntax.string(device, deviceValue) }
                    if matches(device, deviceKey, "driver") {
                        header.deviceDriver = JSONSyntax.string(device, deviceValue)
                    }
                }
            } else if matches(line, key, "notes"), kind == .array {
                header.notes = stringArray(UnsafeBufferPointer(rebasing: line[value]))
            }
        }
        guard valid, isCapture else {
            throw CaptureError(
                .malformed, line: number,
                "not a Lodestar capture header (expected {\"lodestar\":\"capture\",\"version\":1,…})")
        }
        guard let versionText, let version = Int(versionText) else {
            throw CaptureError(.malformed, line: number, "the header has no whole-number \"version\"")
        }
        guard version == CaptureHeader.currentVersion else {
            throw CaptureError(
                .unknownVersion, line: number,
                "capture version \(version) is not known to this lodestar, which reads version "
                    + "\(CaptureHeader.currentVersion)")
        }
        if let problem { throw CaptureError(.malformed, line: number, problem) }
        header.version = version
        return header
    }

    /// The strings of a JSON array of strings (others skipped).
    private static func stringArray(_ array: UnsafeBufferPointer<UInt8>) -> [String] {
        var result: [String] = []
        _ = JSONSyntax.scanArray(array) { kind, value in
            if kind == .string, let text = JSONSyntax.string(array, value) { result.append(text) }
        }
        return result
    }

    static func parseLine(
        _ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, number: Int, previousT: Double,
        startedSeconds: Double = 0
    ) throws(CaptureError) -> CaptureContents.Line? {
        let line = UnsafeBufferPointer(rebasing: buffer[range])
        var t: Double?
        var payload: CaptureContents.Payload?
        var regime: String?
        var reason: String?
        var problem: String?
        let offset = range.lowerBound
        let valid = JSONSyntax.scanObject(line) { key, kind, value in
            let absolute = (value.lowerBound + offset)..<(value.upperBound + offset)
            if matches(line, key, "t") {
                t = kind == .number ? JSONSyntax.number(line, value) : nil
                if t == nil { problem = "\"t\" is not a number" }
            } else if matches(line, key, "gpsd") {
                guard kind == .object else {
                    problem = "\"gpsd\" is not a JSON object"
                    return
                }
                guard JSONSyntax.hasGPSDKinds(UnsafeBufferPointer(rebasing: line[value])) else {
                    problem = "the gpsd object has no \"class\", or a text where gpsd sends a number"
                    return
                }
                payload = .gpsd(absolute)
            } else if matches(line, key, "rx") || matches(line, key, "tx") {
                let isReceived = matches(line, key, "rx")
                let inner = (absolute.lowerBound + 1)..<(absolute.upperBound - 1)
                guard kind == .string,
                    Base64.decode(UnsafeBufferPointer(rebasing: buffer[inner])) != nil
                else {
                    problem = "\"\(isReceived ? "rx" : "tx")\" is not base64 text"
                    return
                }
                payload = isReceived ? .received(inner) : .transmitted(inner)
            } else if matches(line, key, "regime") {
                regime = kind == .string ? JSONSyntax.string(line, value) : nil
                if regime == nil { problem = "\"regime\" is not a string" }
            } else if matches(line, key, "reason") {
                reason = kind == .string ? JSONSyntax.string(line, value) : nil
            } else if matches(line, key, "event") {
                guard kind == .object else {
                    problem = "\"event\" is not a JSON object"
                    return
                }
                switch parseEvent(UnsafeBufferPointer(rebasing: line[value])) {
                case .success(let event): payload = .event(event)
                case .failure(let failure): problem = failure.message
                }
            }
        }
        guard valid else { throw CaptureError(.malformed, line: number, "not a valid JSON object") }
        if let problem { throw CaptureError(.malformed, line: number, problem) }
        guard let t else { throw CaptureError(.malformed, line: number, "the line has no \"t\"") }
        guard t.isFinite else { throw CaptureError(.malformed, line: number, "\"t\" is not a finite number") }
        guard t >= 0 else { throw CaptureError(.malformed, line: number, "\"t\" is negative") }
        guard t >= previousT else {
            throw CaptureError(
                .malformed, line: number, "\"t\" goes back in time (\(t) after \(previousT)); t is monotonic")
        }
        guard t + startedSeconds <= latestTime else {
            throw CaptureError(.malformed, line: number, "\"t\" = \(t) s puts the line after the year 9999")
        }
        guard t - previousT <= longestGap else {
            throw CaptureError(
                .malformed, line: number,
                "\"t\" jumps \(Int64(t - previousT)) s after the line before; a capture allows at most "
                    + "\(Int64(longestGap)) s (30 days) between two lines")
        }
        if let regime { payload = .regime(regime, reason: reason) }
        guard let payload else { return nil }
        return CaptureContents.Line(t: t, number: number, payload: payload)
    }

    /// An `event` object: `kind` is required and any text (kinds this build does not know are kept); `regime`
    /// and `seconds`, when there, must be a string and a non-negative number; a `detail` that is not a string
    /// is ignored, as it always was.
    private static func parseEvent(_ event: UnsafeBufferPointer<UInt8>) -> Result<CaptureEvent, CaptureError> {
        var kind: String?
        var regime: String?
        var seconds: Double?
        var detail: String?
        var problem: String?
        _ = JSONSyntax.scanObject(event) { key, valueKind, value in
            if matches(event, key, "kind") {
                kind = valueKind == .string ? JSONSyntax.string(event, value) : nil
            } else if matches(event, key, "detail") {
                detail = valueKind == .string ? JSONSyntax.string(event, value) : nil
            } else if matches(event, key, "regime") {
                regime = valueKind == .string ? JSONSyntax.string(event, value) : nil
                if regime == nil { problem = "the event's \"regime\" is not a string" }
            } else if matches(event, key, "seconds") {
                seconds = valueKind == .number ? JSONSyntax.number(event, value) : nil
                if !(seconds.map { $0.isFinite && $0 >= 0 } ?? false) {
                    problem = "the event's \"seconds\" is not a number of seconds (0 or more)"
                }
            }
        }
        if let problem { return .failure(CaptureError(.malformed, line: nil, problem)) }
        guard let kind else { return .failure(CaptureError(.malformed, line: nil, "the event has no \"kind\"")) }
        return .success(CaptureEvent(kind: kind, regime: regime, seconds: seconds, detail: detail))
    }
}

/// Reads a capture one line at a time (the header first), with the checks `CaptureReader.read` makes: the
/// same parser for a file in memory and for one streamed in chunks, so a 24-hour capture is read in the memory
/// of its longest line.
public struct CaptureLineParser: Sendable {
    public private(set) var header: CaptureHeader?
    /// Problems that did not stop the read (a torn final line).
    public private(set) var warnings: [CaptureError] = []
    private var lastT = 0.0
    private var startedSeconds = 0.0

    public init() {}

    /// The line `range` of `buffer` (its line end excluded), whose number in the file is `number`; `terminated`
    /// is false only for a last line with no line end. Nil for the header, blank lines and lines with no key
    /// this version knows.
    public mutating func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, number: Int, terminated: Bool
    ) throws(CaptureError) -> CaptureContents.Line? {
        if buffer[range].allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        do throws(CaptureError) {
            guard header != nil else {
                let parsed = try CaptureReader.parseHeader(buffer, range, number: number)
                header = parsed
                if let started = parsed.started {
                    startedSeconds = Double(started.seconds) + Double(started.nanoseconds) / 1e9
                }
                return nil
            }
            guard
                let line = try CaptureReader.parseLine(
                    buffer, range, number: number, previousT: lastT, startedSeconds: startedSeconds)
            else {
                // Lines with only keys this version does not know are skipped (forward compatible), never
                // silently: a typo or a newer writer's line is worth a word (docs/capture-format.md).
                warn(CaptureReader.notUnderstood(number))
                return nil
            }
            lastT = line.t
            return line
        } catch {
            // A power cut mid-write leaves the last line without its end: keep everything before it.
            guard !terminated, header != nil, error.kind == .malformed else { throw error }
            warn(CaptureError(.malformed, line: number, "torn final line ignored (\(error.message))"))
            return nil
        }
    }

    /// The first `keptWarnings` warnings are kept; later ones are only counted, so a capture full of lines
    /// from a newer writer is read in bounded memory.
    public static let keptWarnings = 100
    /// Warnings beyond `keptWarnings`.
    public private(set) var warningsNotKept = 0

    private mutating func warn(_ warning: CaptureError) {
        if warnings.count < Self.keptWarnings { warnings.append(warning) } else { warningsNotKept += 1 }
    }

    /// The header, once every line was given: an error if there was none.
    public func finish() throws(CaptureError) -> CaptureHeader {
        guard let header else {
            throw CaptureError(.empty, line: nil, "the file is empty: it has no capture header and no receiver data")
        }
        return header
    }
}

/// A capture read in chunks from any source (a file, a pipe): each line is handed over with the bytes it
/// refers to, then forgotten. Memory is the longest line, not the file.
public struct CaptureStreamReader {
    /// The longest line read: a day of `record --raw` has lines of a few kB; 64 MiB is damage, not data.
    public static let longestLine = 64 << 20

    /// Fills the buffer it is given from the source: the count read, 0 at the end, or an error.
    public typealias Read = (UnsafeMutableRawBufferPointer) throws(CaptureError) -> Int

    private let read: Read
    private var buffer: [UInt8]
    private var start = 0
    private var filled = 0
    private var atEnd = false
    private var number = 0
    public private(set) var parser = CaptureLineParser()

    public init(chunkSize: Int = 1 << 20, read: @escaping Read) {
        self.read = read
        buffer = [UInt8](repeating: 0, count: max(chunkSize, 4096))
    }

    /// The header (reading up to it): an error if the source ends first or its first line is not one.
    public mutating func header() throws(CaptureError) -> CaptureHeader {
        while parser.header == nil {
            guard try step({ _, _ in }) != nil else { break }
        }
        return try parser.finish()
    }

    /// Reads lines until one the format knows comes (handing it to `body` with the buffer its ranges refer
    /// to) or the source ends: false at the end. Blank and unknown lines are skipped.
    public mutating func nextLine(
        _ body: (CaptureContents.Line, UnsafeBufferPointer<UInt8>) throws(CaptureError) -> Void
    ) throws(CaptureError) -> Bool {
        while let delivered = try step(body) {
            if delivered { return true }
        }
        return false
    }

    /// One line of the source: nil at the end, else whether it was a line handed to `body`.
    private mutating func step(
        _ body: (CaptureContents.Line, UnsafeBufferPointer<UInt8>) throws(CaptureError) -> Void
    ) throws(CaptureError) -> Bool? {
        guard let (range, terminated) = try nextRawLine() else { return nil }
        number += 1
        var result: CaptureContents.Line?
        var failure: CaptureError?
        buffer.withUnsafeBufferPointer { bytes in
            do throws(CaptureError) {
                result = try parser.parse(bytes, range, number: number, terminated: terminated)
                if let result { try body(result, bytes) }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return result != nil
    }

    /// The next line's range in `buffer` (its line end excluded), and whether it had one.
    private mutating func nextRawLine() throws(CaptureError) -> (Range<Int>, Bool)? {
        var scanned = start
        while true {
            if let newline = buffer[scanned..<filled].firstIndex(of: 0x0A) {
                var end = newline
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                let range = start..<end
                start = newline + 1
                return (range, true)
            }
            scanned = filled
            if atEnd {
                guard start < filled else { return nil }
                var end = filled
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                let range = start..<end
                start = filled
                return (range, false)
            }
            // Room for more: move the partial line to the front, or grow for a long one.
            if start > 0 {
                let kept = filled - start
                buffer.withUnsafeMutableBytes { raw in
                    guard let base = raw.baseAddress else { return }
                    base.copyMemory(from: base + start, byteCount: kept)
                }
                scanned -= start
                filled = kept
                start = 0
            }
            if filled == buffer.count {
                guard buffer.count < Self.longestLine else {
                    throw CaptureError(
                        .malformed, line: number + 1,
                        "the line is longer than \(Self.longestLine >> 20) MiB with no line end: not a capture line")
                }
                buffer += [UInt8](repeating: 0, count: min(buffer.count, Self.longestLine - buffer.count))
            }
            var count = 0
            var failure: CaptureError?
            let from = filled
            buffer.withUnsafeMutableBytes { raw in
                do throws(CaptureError) {
                    count = try read(UnsafeMutableRawBufferPointer(rebasing: raw[from...]))
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            if count == 0 { atEnd = true } else { filled += count }
        }
    }
}
