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
        var lines: [CaptureContents.Line] = []
        var warnings: [CaptureError] = []
        var header: CaptureHeader?
        var lastT = 0.0
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
                let isBlank = buffer[range].allSatisfy { $0 == 0x20 || $0 == 0x09 }
                if isBlank { continue }
                let isFinal = !terminated || buffer[start...].allSatisfy { $0 == 0x0A || $0 == 0x0D }
                do throws(CaptureError) {
                    if header == nil {
                        header = try parseHeader(buffer, range, number: number)
                        continue
                    }
                    // Lines with only keys this version does not know are skipped (forward compatible), never
                    // silently: a typo or a newer writer's line is worth a word (docs/capture-format.md).
                    guard let line = try parseLine(buffer, range, number: number, previousT: lastT) else {
                        warnings.append(Self.notUnderstood(number))
                        continue
                    }
                    lastT = line.t
                    lines.append(line)
                } catch {
                    // A power cut mid-write leaves the last line without its end: keep everything before it.
                    if isFinal, !terminated, header != nil, error.kind == .malformed {
                        warnings.append(
                            CaptureError(.malformed, line: number, "torn final line ignored (\(error.message))"))
                    } else {
                        failure = error
                    }
                }
            }
        }
        if let failure { throw failure }
        guard let header else {
            throw CaptureError(.empty, line: nil, "the file is empty: it has no capture header and no receiver data")
        }
        return CaptureContents(bytes: bytes, header: header, lines: lines, warnings: warnings)
    }

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
        _ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, number: Int, previousT: Double
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
        guard t.isFinite, t >= 0 else { throw CaptureError(.malformed, line: number, "\"t\" is negative") }
        guard t >= previousT else {
            throw CaptureError(
                .malformed, line: number, "\"t\" goes back in time (\(t) after \(previousT)); t is monotonic")
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
