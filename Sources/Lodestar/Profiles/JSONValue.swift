import Capture
/// A JSON document as a tree, members in the order written. Profiles need what `JSONDecoder` does not give:
/// every unknown key, every wrong type and every duplicate, each with its key path, all at once. gpsd's
/// `JSONSyntax` scanner is flat (top-level members only), so this is a small recursive parser of its own.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order; a duplicate key is a syntax error, so keys are unique.
    case object([(key: String, value: JSONValue)])

    /// The word for the value's type in an error message ("is a string, not a number").
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "a list"
        case .object: "an object"
        }
    }

    /// The value at a dotted key path below this one, nil if any step is missing or not an object.
    func value(at path: some StringProtocol) -> JSONValue? {
        var current = self
        for key in path.split(separator: ".") {
            guard case .object(let members) = current,
                let next = members.first(where: { $0.key == key })?.value
            else { return nil }
            current = next
        }
        return current
    }
}

/// Why a text is not JSON, with where (1-based line and column of the offending byte).
struct JSONSyntaxError: Error, Sendable {
    var line: Int
    var column: Int
    var message: String
}

/// Strict RFC 8259 JSON: no comments, no trailing commas, no duplicate keys, nesting bounded.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        // A UTF-8 byte order mark is what some editors write; accept it.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipSpace()
        guard parser.index < bytes.count else { throw parser.failure("the file is empty: expected a JSON object") }
        let value = try parser.value()
        parser.skipSpace()
        guard parser.index == bytes.count else {
            throw parser.failure("unexpected text after the end of the JSON value")
        }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func failure(_ message: String) -> JSONSyntaxError {
        var line = 1
        var lineStart = 0
        for position in 0..<min(index, bytes.count) where bytes[position] == 0x0A {
            line += 1
            lineStart = position + 1
        }
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        let column = bytes[lineStart..<min(index, bytes.count)].count { $0 & 0xC0 != 0x80 } + 1
        return JSONSyntaxError(line: line, column: column, message: message)
    }

    private var found: String {
        guard let byte = peek else { return "the end of the file" }
        if byte == UInt8(ascii: "/") { return "'/' (JSON has no comments)" }
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func skipSpace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func value() throws(JSONSyntaxError) -> JSONValue {
        skipSpace()
        guard let byte = peek else { throw failure("expected a value, found the end of the file") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("expected a value, found \(found)")
        }
    }

    private mutating func nest() throws(JSONSyntaxError) {
        depth += 1
        // A hostile file must not exhaust the stack; a profile is four levels deep.
        guard depth <= 32 else { throw failure("nested too deeply") }
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONValue {
        try nest()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipSpace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else {
                throw failure(
                    members.isEmpty
                        ? "expected a key in double quotes, found \(found)"
                        : "expected a key in double quotes, found \(found) (JSON allows no trailing comma)")
            }
            let keyStart = index
            let key = try string()
            if members.contains(where: { $0.key == key }) {
                index = keyStart
                throw failure("the key \"\(key)\" appears twice in the same object")
            }
            skipSpace()
            guard peek == UInt8(ascii: ":") else {
                throw failure("expected ':' after the key \"\(key)\", found \(found)")
            }
            index += 1
            members.append((key, try value()))
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw failure("expected ',' or '}' after the value of \"\(key)\", found \(found)")
            }
        }
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONValue {
        try nest()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipSpace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipSpace()
            if peek == UInt8(ascii: "]") {
                throw failure("expected a value, found ']' (JSON allows no trailing comma)")
            }
            elements.append(try value())
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw failure("expected ',' or ']' in a list, found \(found)")
            }
        }
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        index += 1
        var output: [UInt8] = []
        var pendingHighSurrogate: UInt32?
        while true {
            guard let byte = peek else { throw failure("a string is not closed") }
            if byte == UInt8(ascii: "\"") {
                index += 1
                guard pendingHighSurrogate == nil else { throw failure("a \\u escape has an unpaired surrogate") }
                guard let text = String(validating: output, as: UTF8.self) else {
                    throw failure("a string is not valid UTF-8")
                }
                return text
            }
            if byte < 0x20 { throw failure("a control character inside a string (write it as an escape)") }
            guard byte == UInt8(ascii: "\\") else {
                guard pendingHighSurrogate == nil else { throw failure("a \\u escape has an unpaired surrogate") }
                output.append(byte)
                index += 1
                continue
            }
            index += 1
            guard let escaped = peek else { throw failure("a string is not closed") }
            index += 1
            if escaped != UInt8(ascii: "u"), pendingHighSurrogate != nil {
                throw failure("a \\u escape has an unpaired surrogate")
            }
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escaped)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                var unit: UInt32 = 0
                for _ in 0..<4 {
                    guard let digit = peek.flatMap(Self.hexDigit) else {
                        throw failure("a \\u escape needs 4 hex digits")
                    }
                    unit = unit << 4 | digit
                    index += 1
                }
                var scalarValue = unit
                if (0xD800..<0xDC00).contains(unit) {
                    guard pendingHighSurrogate == nil else { throw failure("a \\u escape has an unpaired surrogate") }
                    pendingHighSurrogate = unit
                    continue
                }
                if (0xDC00..<0xE000).contains(unit) {
                    guard let high = pendingHighSurrogate else {
                        throw failure("a \\u escape has an unpaired surrogate")
                    }
                    scalarValue = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)
                } else if pendingHighSurrogate != nil {
                    throw failure("a \\u escape has an unpaired surrogate")
                }
                pendingHighSurrogate = nil
                guard let scalar = Unicode.Scalar(scalarValue) else { throw failure("a \\u escape is not a character") }
                output.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                index -= 1
                throw failure("'\\\(Character(Unicode.Scalar(escaped)))' is not a JSON escape")
            }
        }
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }

    private mutating func digits() -> Int {
        var count = 0
        while let byte = peek, byte >= 0x30 && byte <= 0x39 {
            index += 1
            count += 1
        }
        return count
    }

    private mutating func number() throws(JSONSyntaxError) -> Double {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0 else { throw failure("expected a digit, found \(found)") }
        if integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0") {
            index = integerStart
            throw failure("a number must not start with 0")
        }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("expected a digit after '.', found \(found)") }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("expected a digit in the exponent, found \(found)") }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            index = start
            throw failure("a number too large to represent")
        }
        return value
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let letters = Array(word.utf8)
        guard bytes.count - index >= letters.count, Array(bytes[index..<(index + letters.count)]) == letters else {
            throw failure("expected a value, found \(found)")
        }
        index += letters.count
        return value
    }
}

/// Pretty-printed JSON with the members in the order given, two spaces per level; lists of scalars on one
/// line. What `lodestar profiles show` prints, so the layout is part of the interface: keep it stable.
enum JSONWriter {
    static func text(_ value: JSONValue) -> String {
        var output = ""
        write(value, indent: 0, to: &output)
        return output + "\n"
    }

    private static func write(_ value: JSONValue, indent: Int, to output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number): output += numberText(number)
        case .string(let text): output += quoted(text)
        case .array(let elements):
            let scalar = elements.allSatisfy {
                switch $0 {
                case .array, .object: false
                default: true
                }
            }
            if scalar {
                output += "["
                for (position, element) in elements.enumerated() {
                    if position > 0 { output += ", " }
                    write(element, indent: indent, to: &output)
                }
                output += "]"
            } else {
                output += "[\n"
                for (position, element) in elements.enumerated() {
                    output += String(repeating: " ", count: indent + 2)
                    write(element, indent: indent + 2, to: &output)
                    output += position == elements.count - 1 ? "\n" : ",\n"
                }
                output += String(repeating: " ", count: indent) + "]"
            }
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{\n"
            for (position, member) in members.enumerated() {
                output += String(repeating: " ", count: indent + 2) + quoted(member.key) + ": "
                write(member.value, indent: indent + 2, to: &output)
                output += position == members.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "}"
        }
    }

    /// Whole numbers without a fraction ("120", not "120.0"); others in Swift's shortest form that reads
    /// back to the same `Double` (which is valid JSON: "0.0235", "1e-05").
    static func numberText(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    /// `text` as a JSON string, escaped as capture and output lines are.
    static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        CaptureLineEncoder.appendQuoted(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
