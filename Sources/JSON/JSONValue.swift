/// A JSON document as a tree, members in the order written. Profiles need what `JSONDecoder` does not give:
/// every unknown key, every wrong type and every duplicate, each with its key path, all at once.
package enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order; a duplicate key is a syntax error, so keys are unique.
    case object([(key: String, value: JSONValue)])

    /// The word for the value's type in an error message ("is a string, not a number").
    package var typeName: String {
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
    package func value(at path: some StringProtocol) -> JSONValue? {
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
package struct JSONSyntaxError: Error, Sendable {
    package var line: Int
    package var column: Int
    package var message: String
}

/// Strict RFC 8259 JSON into a `JSONValue`, on the package's one scanner: no comments, no trailing
/// commas, no duplicate keys, nesting bounded.
package enum JSONParser {
    /// A profile is four levels deep.
    static let depthLimit = 32

    package static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var key = 0..<0
        let result: Result<JSONValue, JSONScanFailure> = bytes.withUnsafeBufferPointer { buffer in
            // A UTF-8 byte order mark is what some editors write; accept it.
            var scanner = JSONScanner(
                buffer, from: buffer.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0, depthLimit: depthLimit)
            scanner.skipSpace()
            guard scanner.peek != nil else { return .failure(scanner.failure(.empty)) }
            var builder = TreeBuilder(bytes: buffer)
            do throws(JSONScanFailure) {
                return .success(try scanner.document(&builder))
            } catch {
                key = scanner.key
                return .failure(error)
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let failure): throw syntaxError(failure, key: key, in: bytes)
        }
    }

    /// The failure as people read it: 1-based line and column (in characters) and what was wrong.
    /// `key` is the bytes between the quotes of the key a message names.
    static func syntaxError(_ failure: JSONScanFailure, key: Range<Int>, in bytes: [UInt8]) -> JSONSyntaxError {
        let index = min(failure.index, bytes.count)
        var line = 1
        var lineStart = 0
        for position in 0..<index where bytes[position] == 0x0A {
            line += 1
            lineStart = position + 1
        }
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        let column = bytes[lineStart..<index].count { $0 & 0xC0 != 0x80 } + 1
        return JSONSyntaxError(line: line, column: column, message: message(failure, key: key, in: bytes))
    }

    private static func message(_ failure: JSONScanFailure, key range: Range<Int>, in bytes: [UInt8]) -> String {
        let byte = failure.index < bytes.count ? bytes[failure.index] : nil
        var found: String {
            guard let byte else { return "the end of the file" }
            if byte == UInt8(ascii: "/") { return "'/' (JSON has no comments)" }
            if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            return "byte 0x\(String(byte, radix: 16))"
        }
        var key: String {
            bytes.withUnsafeBufferPointer { buffer in
                (try? JSONText.string(buffer, (range.lowerBound - 1)..<(range.upperBound + 1)))
                    ?? String(decoding: buffer[range], as: UTF8.self)
            }
        }
        switch failure.reason {
        case .empty: return "the file is empty: expected a JSON object"
        case .expectedValue: return "expected a value, found \(found)"
        case .trailingCommaInArray: return "expected a value, found ']' (JSON allows no trailing comma)"
        case .nestedTooDeeply: return "nested too deeply"
        case .expectedKey: return "expected a key in double quotes, found \(found)"
        case .expectedKeyAfterComma:
            return "expected a key in double quotes, found \(found) (JSON allows no trailing comma)"
        case .duplicateKey: return "the key \"\(key)\" appears twice in the same object"
        case .expectedColon: return "expected ':' after the key \"\(key)\", found \(found)"
        case .expectedCommaOrBrace: return "expected ',' or '}' after the value of \"\(key)\", found \(found)"
        case .expectedCommaOrBracket: return "expected ',' or ']' in a list, found \(found)"
        case .stringNotClosed: return "a string is not closed"
        case .controlCharacter: return "a control character inside a string (write it as an escape)"
        case .badEscape: return "'\\\(Character(Unicode.Scalar(byte ?? 0)))' is not a JSON escape"
        case .hexEscape: return "a \\u escape needs 4 hex digits"
        case .unpairedSurrogate: return "a \\u escape has an unpaired surrogate"
        case .notAScalar: return "a \\u escape is not a character"
        case .invalidUTF8: return "a string is not valid UTF-8"
        case .expectedDigit: return "expected a digit, found \(found)"
        case .expectedFractionDigit: return "expected a digit after '.', found \(found)"
        case .expectedExponentDigit: return "expected a digit in the exponent, found \(found)"
        case .leadingZero: return "a number must not start with 0"
        case .numberTooLarge: return "a number too large to represent"
        case .trailingText: return "unexpected text after the end of the JSON value"
        }
    }
}

/// Builds the tree, decoding strings and numbers, refusing duplicate keys and numbers beyond `Double`.
private struct TreeBuilder: JSONBuilder {
    let bytes: UnsafeBufferPointer<UInt8>

    func string(_ range: Range<Int>) throws(JSONScanFailure) -> JSONValue {
        .string(try JSONText.string(bytes, range))
    }

    func number(_ range: Range<Int>) throws(JSONScanFailure) -> JSONValue {
        guard let value = JSONText.number(bytes, range), value.isFinite else {
            throw JSONScanFailure(index: range.lowerBound, reason: .numberTooLarge)
        }
        return .number(value)
    }

    func literal(_ value: Bool?) -> JSONValue { value.map { .bool($0) } ?? .null }

    func beginObject() -> [(key: String, value: JSONValue)] { [] }

    func member(
        key: Range<Int>, value: JSONValue, range: Range<Int>, depth: Int,
        in object: inout [(key: String, value: JSONValue)]
    ) throws(JSONScanFailure) {
        let quoted = (key.lowerBound - 1)..<(key.upperBound + 1)
        let name = try JSONText.string(bytes, quoted)
        if object.contains(where: { $0.key == name }) {
            throw JSONScanFailure(index: quoted.lowerBound, reason: .duplicateKey)
        }
        object.append((name, value))
    }

    func endObject(_ object: [(key: String, value: JSONValue)]) -> JSONValue { .object(object) }
    func beginArray() -> [JSONValue] { [] }
    func element(_ value: JSONValue, range: Range<Int>, depth: Int, in array: inout [JSONValue]) {
        array.append(value)
    }
    func endArray(_ array: [JSONValue]) -> JSONValue { .array(array) }
}
