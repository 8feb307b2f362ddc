/// A strict JSON syntax scanner over bytes. libgps's `gps_unpack` returns 0 whatever it is given and stops
/// silently at the first bad token, so a recorded line (a capture's, a test's) is checked here first; live
/// lines come from gpsd itself and skip this. Allocation-free: it reports byte ranges, never copies.
public enum JSONSyntax {
    public enum Kind: Equatable, Sendable {
        case string, number, bool, null, object, array
    }

    /// Checks that `bytes` is exactly one JSON object (whitespace around it allowed) and calls `member` with
    /// each top-level member: the key's raw bytes (between the quotes, escapes left as they are), the value's
    /// kind and the value's byte range (quotes included for strings). False when the text is not valid JSON.
    public static func scanObject(
        _ bytes: UnsafeBufferPointer<UInt8>, member: (_ key: Range<Int>, _ kind: Kind, _ value: Range<Int>) -> Void
    ) -> Bool {
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpace()
        guard scanner.peek == UInt8(ascii: "{") else { return false }
        guard scanner.object(member: member) else { return false }
        scanner.skipSpace()
        return scanner.index == bytes.count
    }

    /// The kinds of the top-level members of a JSON object, or nil if `text` is not exactly one valid JSON
    /// object.
    static func topLevelMembers(of text: String) -> [String: Kind]? {
        var text = text
        return text.withUTF8 { bytes in
            var members: [String: Kind] = [:]
            let valid = scanObject(bytes) { key, kind, _ in
                members[String(decoding: UnsafeBufferPointer(rebasing: bytes[key]), as: UTF8.self)] = kind
            }
            return valid ? members : nil
        }
    }

    /// The text of a JSON string value (`range` includes its quotes), escapes decoded; nil when an escape is
    /// invalid.
    public static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        guard range.count >= 2 else { return nil }
        let inner = (range.lowerBound + 1)..<(range.upperBound - 1)
        guard bytes[inner].contains(UInt8(ascii: "\\")) else {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[inner]), as: UTF8.self)
        }
        var output: [UInt8] = []
        output.reserveCapacity(inner.count)
        var index = inner.lowerBound
        var pendingHighSurrogate: UInt32?
        func hexValue(at start: Int) -> UInt32? {
            guard start + 4 <= inner.upperBound else { return nil }
            var value: UInt32 = 0
            for byte in bytes[start..<(start + 4)] {
                guard let digit = hexDigit(byte) else { return nil }
                value = value << 4 | digit
            }
            return value
        }
        while index < inner.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                index += 1
                continue
            }
            guard index + 1 < inner.upperBound else { return nil }
            let escaped = bytes[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escaped)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hexValue(at: index) else { return nil }
                index += 4
                var scalarValue = unit
                if (0xD800..<0xDC00).contains(unit) {
                    pendingHighSurrogate = unit
                    continue
                }
                if (0xDC00..<0xE000).contains(unit) {
                    guard let high = pendingHighSurrogate else { return nil }
                    scalarValue = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)
                }
                pendingHighSurrogate = nil
                guard let scalar = Unicode.Scalar(scalarValue) else { return nil }
                output.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                return nil
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte - 0x30)
        case 0x41...0x46: return UInt32(byte - 0x41 + 10)
        case 0x61...0x66: return UInt32(byte - 0x61 + 10)
        default: return nil
        }
    }

    /// A JSON number's value (the range of a `.number` member).
    public static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var depth = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ ascii: UInt8) -> Bool {
            guard peek == ascii else { return false }
            index += 1
            return true
        }

        mutating func value() -> Kind? {
            skipSpace()
            guard let byte = peek else { return nil }
            switch byte {
            case UInt8(ascii: "{"): return object(member: { _, _, _ in }) ? .object : nil
            case UInt8(ascii: "["): return array() ? .array : nil
            case UInt8(ascii: "\""): return string() ? .string : nil
            case UInt8(ascii: "t"): return literal("true") ? .bool : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number() ? .number : nil
            }
        }

        mutating func object(member: (Range<Int>, Kind, Range<Int>) -> Void) -> Bool {
            depth += 1
            defer { depth -= 1 }
            // Bounded nesting: a hostile file must not exhaust the stack.
            guard depth < 64, expect(UInt8(ascii: "{")) else { return false }
            skipSpace()
            if expect(UInt8(ascii: "}")) { return true }
            while true {
                skipSpace()
                let keyStart = index
                guard string() else { return false }
                let key = (keyStart + 1)..<(index - 1)
                skipSpace()
                guard expect(UInt8(ascii: ":")) else { return false }
                skipSpace()
                let valueStart = index
                guard let kind = value() else { return false }
                member(key, kind, valueStart..<index)
                skipSpace()
                if expect(UInt8(ascii: "}")) { return true }
                guard expect(UInt8(ascii: ",")) else { return false }
            }
        }

        mutating func array() -> Bool {
            depth += 1
            defer { depth -= 1 }
            guard depth < 64, expect(UInt8(ascii: "[")) else { return false }
            skipSpace()
            if expect(UInt8(ascii: "]")) { return true }
            while true {
                guard value() != nil else { return false }
                skipSpace()
                if expect(UInt8(ascii: "]")) { return true }
                guard expect(UInt8(ascii: ",")) else { return false }
            }
        }

        mutating func string() -> Bool {
            guard expect(UInt8(ascii: "\"")) else { return false }
            while let byte = peek {
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return true
                }
                if byte < 0x20 { return false }
                index += byte == UInt8(ascii: "\\") ? 2 : 1
            }
            return false
        }

        mutating func literal(_ word: StaticString) -> Bool {
            var matched = true
            word.withUTF8Buffer { letters in
                for letter in letters {
                    guard peek == letter else {
                        matched = false
                        return
                    }
                    index += 1
                }
            }
            return matched
        }

        mutating func digits() -> Int {
            var count = 0
            while let byte = peek, byte >= 0x30 && byte <= 0x39 {
                index += 1
                count += 1
            }
            return count
        }

        mutating func number() -> Bool {
            _ = expect(UInt8(ascii: "-"))
            guard digits() > 0 else { return false }
            if expect(UInt8(ascii: ".")) {
                guard digits() > 0 else { return false }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return false }
            }
            return true
        }
    }

    /// Members libgps reads as numbers in the classes Lodestar uses; a string there makes libgps stop
    /// parsing silently, so such a line is rejected instead of half-decoded.
    static let numericMembers: [String: Set<String>] = [
        "TPV": ["mode", "status", "ept", "lat", "lon", "altHAE", "altMSL", "alt", "epx", "epy", "epv", "track",
                "magtrack", "magvar", "speed", "climb", "epd", "eps", "epc", "eph", "sep", "geoidSep", "leapseconds"],
        "SKY": ["xdop", "ydop", "vdop", "tdop", "hdop", "gdop", "pdop", "nSat", "uSat"],
        "GST": ["rms", "major", "minor", "orient", "lat", "lon", "alt"],
    ]

    /// Whether a gpsd object's members have the kinds libgps needs (`bytes` must be a valid object): a
    /// `class` string, and numbers where libgps reads numbers.
    public static func hasGPSDKinds(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var className: String?
        var kinds: [(Range<Int>, Kind)] = []
        _ = scanObject(bytes) { key, kind, value in
            if bytes[key].elementsEqual("class".utf8) {
                className = kind == .string ? string(bytes, value) : nil
            } else if kind != .number {
                kinds.append((key, kind))
            }
        }
        guard let className else { return false }
        guard let numeric = numericMembers[className] else { return true }
        return !kinds.contains { key, _ in
            numeric.contains(String(decoding: UnsafeBufferPointer(rebasing: bytes[key]), as: UTF8.self))
        }
    }
}
