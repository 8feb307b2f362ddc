/// The package's one JSON writer: string escaping, the two number forms, and pretty-printed documents.
/// Every line and document Lodestar writes (captures, command output, profiles, gpsd commands) escapes and
/// formats through here, so the same value is written the same way everywhere.
package enum JSONWriter {
    /// Pretty-printed JSON with the members in the order given, two spaces per level; lists of scalars on
    /// one line. What `lodestar profiles show` prints, so the layout is part of the interface: keep it stable.
    package static func text(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// `text(value)` as UTF-8 bytes. Built as bytes, not by appending Strings: the daemon writes its status
    /// file this way every `status.updateInterval`, and the String appends cost about as much as a fix.
    package static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(1024)
        write(value, indent: 0, to: &output)
        output.append(UInt8(ascii: "\n"))
        return output
    }

    private static func write(_ value: JSONValue, indent: Int, to output: inout [UInt8]) {
        func add(_ piece: StaticString) { piece.withUTF8Buffer { output.append(contentsOf: $0) } }
        func spaces(_ count: Int) { output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count)) }
        switch value {
        case .null: add("null")
        case .bool(let flag): add(flag ? "true" : "false")
        case .number(let number): output.append(contentsOf: numberText(number).utf8)
        case .string(let text): appendQuoted(text, to: &output)
        case .array(let elements):
            let scalar = elements.allSatisfy {
                switch $0 {
                case .array, .object: false
                default: true
                }
            }
            if scalar {
                add("[")
                for (position, element) in elements.enumerated() {
                    if position > 0 { add(", ") }
                    write(element, indent: indent, to: &output)
                }
                add("]")
            } else {
                add("[\n")
                for (position, element) in elements.enumerated() {
                    spaces(indent + 2)
                    write(element, indent: indent + 2, to: &output)
                    add(position == elements.count - 1 ? "\n" : ",\n")
                }
                spaces(indent)
                add("]")
            }
        case .object(let members):
            guard !members.isEmpty else {
                add("{}")
                return
            }
            add("{\n")
            for (position, member) in members.enumerated() {
                spaces(indent + 2)
                appendQuoted(member.key, to: &output)
                add(": ")
                write(member.value, indent: indent + 2, to: &output)
                add(position == members.count - 1 ? "\n" : ",\n")
            }
            spaces(indent)
            add("}")
        }
    }

    /// Whole numbers without a fraction ("120", not "120.0"); others in Swift's shortest form that reads
    /// back to the same `Double` (which is valid JSON: "0.0235", "1e-05"). For documents people edit.
    package static func numberText(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    /// A finite `number` in Swift's shortest form that reads back to the same `Double` ("120.0", "1e-05"):
    /// the form of every machine-read line (locations, events, evaluations), appended to `bytes`.
    package static func appendNumber(_ number: Double, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: number.description.utf8)
    }

    /// `text` as a JSON string.
    package static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        appendQuoted(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `value` as a JSON string (quotes; escapes for `"`, `\`, and control characters; other UTF-8 passes
    /// through), appended to `bytes`.
    package static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                bytes += Array("\\u00".utf8)
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0F)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// One compact JSON object built as bytes, members in the order added; absent (nil) and non-finite values
/// leave their key out. Bytes, not String appends: those made up a fifth of `watch`'s CPU on a long capture.
package struct JSONObject {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    package init() {
        bytes.reserveCapacity(384)
    }

    private mutating func key(_ name: StaticString) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    package mutating func add(_ name: StaticString, string value: String?) {
        guard let value else { return }
        key(name)
        JSONWriter.appendQuoted(value, to: &bytes)
    }

    package mutating func add(_ name: StaticString, number value: Double?) {
        guard let value, value.isFinite else { return }
        key(name)
        JSONWriter.appendNumber(value, to: &bytes)
    }

    package mutating func add(_ name: StaticString, integer value: Int?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A number under a key known only at run time (a baseline's name).
    package mutating func add(dynamicKey name: String, number value: Double) {
        guard value.isFinite else { return }
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        JSONWriter.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        JSONWriter.appendNumber(value, to: &bytes)
    }

    package mutating func add(_ name: StaticString, bool value: Bool?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// An array of strings.
    package mutating func add(_ name: StaticString, strings values: [String]?) {
        guard let values else { return }
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.appendQuoted(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A member whose value is already JSON (a nested object or array).
    package mutating func add(_ name: StaticString, json value: [UInt8]?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: value)
    }

    /// The object, closed, with its newline.
    /// `line`'s bytes, the object's own buffer closed in place: no String and no copy in between.
    package consuming func lineBytes() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    package var line: String {
        var result = closed
        result.append(UInt8(ascii: "\n"))
        return String(decoding: result, as: UTF8.self)
    }

    /// The object's bytes, closed.
    package var closed: [UInt8] {
        var result = bytes
        result.append(UInt8(ascii: "}"))
        return result
    }
}
