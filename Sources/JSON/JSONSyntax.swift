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
        withoutActuallyEscaping(member) { member in
            var builder = TopLevelBuilder(member: member, element: nil)
            return scan(bytes, opening: UInt8(ascii: "{"), with: &builder)
        }
    }

    /// Checks that `bytes` is exactly one JSON array and calls `element` with each top-level element's kind
    /// and byte range. False when the text is not valid JSON.
    package static func scanArray(
        _ bytes: UnsafeBufferPointer<UInt8>, element: (_ kind: Kind, _ value: Range<Int>) -> Void
    ) -> Bool {
        withoutActuallyEscaping(element) { element in
            var builder = TopLevelBuilder(member: nil, element: element)
            return scan(bytes, opening: UInt8(ascii: "["), with: &builder)
        }
    }

    private static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, opening: UInt8, with builder: inout TopLevelBuilder
    ) -> Bool {
        var scanner = JSONScanner(bytes, depthLimit: depthLimit)
        scanner.skipSpace()
        guard scanner.peek == opening else { return false }
        do {
            _ = try scanner.document(&builder)
            return true
        } catch {
            return false
        }
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

/// Kinds and ranges of the outermost container's members or elements; everything deeper is only checked.
private struct TopLevelBuilder: JSONBuilder {
    let member: ((Range<Int>, JSONSyntax.Kind, Range<Int>) -> Void)?
    let element: ((JSONSyntax.Kind, Range<Int>) -> Void)?

    func string(_ range: Range<Int>) -> JSONSyntax.Kind { .string }
    func number(_ range: Range<Int>) -> JSONSyntax.Kind { .number }
    func literal(_ value: Bool?) -> JSONSyntax.Kind { value == nil ? .null : .bool }
    func beginObject() {}
    func member(key: Range<Int>, value: JSONSyntax.Kind, range: Range<Int>, depth: Int, in object: inout Void) {
        if depth == 1 { member?(key, value, range) }
    }
    func endObject(_ object: Void) -> JSONSyntax.Kind { .object }
    func beginArray() {}
    func element(_ value: JSONSyntax.Kind, range: Range<Int>, depth: Int, in array: inout Void) {
        if depth == 1 { element?(value, range) }
    }
    func endArray(_ array: Void) -> JSONSyntax.Kind { .array }
}
