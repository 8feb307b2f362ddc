/// A strict JSON syntax check for recorded lines. libgps's `gps_unpack` returns 0 whatever it is given and
/// stops silently at the first bad token, so a replayed line is checked here first; live lines come from
/// gpsd itself and skip this.
enum JSONSyntax {
    enum Kind: Equatable {
        case string, number, bool, null, object, array
    }

    /// The kinds of the top-level members of a JSON object, or nil if `text` is not exactly one valid JSON
    /// object.
    static func topLevelMembers(of text: String) -> [String: Kind]? {
        var parser = Parser(bytes: Array(text.utf8))
        return parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var depth = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func document() -> [String: Kind]? {
            skipSpace()
            guard peek == UInt8(ascii: "{") else { return nil }
            var members: [String: Kind] = [:]
            guard object(members: &members) else { return nil }
            skipSpace()
            return index == bytes.count ? members : nil
        }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ character: Character) -> Bool {
            guard let ascii = character.asciiValue, peek == ascii else { return false }
            index += 1
            return true
        }

        mutating func value() -> Kind? {
            skipSpace()
            guard let byte = peek else { return nil }
            switch byte {
            case UInt8(ascii: "{"):
                var ignored: [String: Kind] = [:]
                return object(members: &ignored) ? .object : nil
            case UInt8(ascii: "["): return array() ? .array : nil
            case UInt8(ascii: "\""): return string() != nil ? .string : nil
            case UInt8(ascii: "t"): return literal("true") ? .bool : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number() ? .number : nil
            }
        }

        mutating func object(members: inout [String: Kind]) -> Bool {
            depth += 1
            defer { depth -= 1 }
            guard depth < 64, expect("{") else { return false }
            skipSpace()
            if expect("}") { return true }
            while true {
                skipSpace()
                guard let key = string() else { return false }
                skipSpace()
                guard expect(":"), let kind = value() else { return false }
                members[key] = kind
                skipSpace()
                if expect("}") { return true }
                guard expect(",") else { return false }
            }
        }

        mutating func array() -> Bool {
            depth += 1
            defer { depth -= 1 }
            guard depth < 64, expect("[") else { return false }
            skipSpace()
            if expect("]") { return true }
            while true {
                guard value() != nil else { return false }
                skipSpace()
                if expect("]") { return true }
                guard expect(",") else { return false }
            }
        }

        mutating func string() -> String? {
            guard expect("\"") else { return nil }
            let start = index
            while let byte = peek {
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: bytes[start..<index], as: UTF8.self)
                    index += 1
                    return text
                }
                if byte < 0x20 { return nil }
                index += byte == UInt8(ascii: "\\") ? 2 : 1
            }
            return nil
        }

        mutating func literal(_ word: String) -> Bool {
            for character in word.utf8 {
                guard peek == character else { return false }
                index += 1
            }
            return true
        }

        mutating func number() -> Bool {
            let start = index
            _ = expect("-")
            var digits = 0
            while let byte = peek, byte >= 0x30 && byte <= 0x39 {
                index += 1
                digits += 1
            }
            guard digits > 0 else { return false }
            if expect(".") {
                var fraction = 0
                while let byte = peek, byte >= 0x30 && byte <= 0x39 {
                    index += 1
                    fraction += 1
                }
                guard fraction > 0 else { return false }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                var exponent = 0
                while let byte = peek, byte >= 0x30 && byte <= 0x39 {
                    index += 1
                    exponent += 1
                }
                guard exponent > 0 else { return false }
            }
            return index > start
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
}
