/// The flat view of the JSON scanner: a strict syntax check of one object (or array) that reports its
/// top-level members as byte ranges, never copying. libgps's `gps_unpack` returns 0 whatever it is given
/// and stops silently at the first bad token, so a recorded line (a capture's, a test's) is checked here
/// first; captures are read with it too. Allocation-free.
package enum JSONSyntax {
    package enum Kind: Equatable, Sendable {
        case string, number, bool, null, object, array
    }

    /// Nesting deeper than any gpsd report or capture line, shallow enough for the stack.
    static let depthLimit = 63

    /// Checks that `bytes` is exactly one JSON object (whitespace around it allowed) and calls `member` with
    /// each top-level member: the key's raw bytes (between the quotes, escapes left as they are), the value's
    /// kind and the value's byte range (quotes included for strings). False when the text is not valid JSON.
    package static func scanObject(
        _ bytes: UnsafeBufferPointer<UInt8>, member: (_ key: Range<Int>, _ kind: Kind, _ value: Range<Int>) -> Void
    ) -> Bool {
        scanWhole(bytes, opening: UInt8(ascii: "{")) { scanner, builder throws(JSONScanFailure) in
            _ = try scanner.object(&builder, member: member)
        }
    }

    /// Checks that `bytes` is exactly one JSON array and calls `element` with each top-level element's kind
    /// and byte range. False when the text is not valid JSON.
    package static func scanArray(
        _ bytes: UnsafeBufferPointer<UInt8>, element: (_ kind: Kind, _ value: Range<Int>) -> Void
    ) -> Bool {
        scanWhole(bytes, opening: UInt8(ascii: "[")) { scanner, builder throws(JSONScanFailure) in
            _ = try scanner.array(&builder, element: element)
        }
    }

    /// Whether `bytes` is exactly one value opening with `opening` (whitespace around it allowed), which
    /// `scan` reads.
    private static func scanWhole(
        _ bytes: UnsafeBufferPointer<UInt8>, opening: UInt8,
        _ scan: (inout JSONScanner, inout KindBuilder) throws(JSONScanFailure) -> Void
    ) -> Bool {
        var scanner = JSONScanner(bytes, depthLimit: depthLimit)
        var builder = KindBuilder()
        scanner.skipSpace()
        guard scanner.peek == opening else { return false }
        do {
            try scan(&scanner, &builder)
        } catch {
            return false
        }
        scanner.skipSpace()
        return scanner.index == bytes.count
    }

    /// The text of a JSON string value (`range` includes its quotes), escapes decoded; nil when an escape
    /// is not a character or the bytes are not UTF-8.
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        guard range.count >= 2 else { return nil }
        return try? JSONText.string(bytes, range)
    }

    /// A JSON number's value (the range of a `.number` member).
    package static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        JSONText.number(bytes, range)
    }
}

/// Only the kind of each value: everything below the outermost container is checked and forgotten.
private struct KindBuilder: JSONBuilder {
    func string(_ range: Range<Int>) -> JSONSyntax.Kind { .string }
    func number(_ range: Range<Int>) -> JSONSyntax.Kind { .number }
    func literal(_ value: Bool?) -> JSONSyntax.Kind { value == nil ? .null : .bool }
    func beginObject() {}
    func member(key: Range<Int>, value: JSONSyntax.Kind, range: Range<Int>, depth: Int, in object: inout Void) {}
    func endObject(_ object: Void) -> JSONSyntax.Kind { .object }
    func beginArray() {}
    func element(_ value: JSONSyntax.Kind, range: Range<Int>, depth: Int, in array: inout Void) {}
    func endArray(_ array: Void) -> JSONSyntax.Kind { .array }
}
