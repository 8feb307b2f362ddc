#if canImport(Glibc)
import Glibc
#endif

/// Reads the few things the live path needs before (or instead of) libgps's decoding, straight from a gpsd
/// JSON line: the class, an epoch's time and device, the `"activated":0` libgps cannot parse. Patterns are
/// static and values come back as byte ranges or fixed-size keys, so peeking allocates nothing: it runs
/// several times for every line gpsd sends.
public enum JSONPeek {
    /// The value of the `"class"` key, as a String (for the decoder's switch).
    public static func className(in line: UnsafeBufferPointer<CChar>) -> String? {
        stringValue(of: "class", in: line)
    }

    /// Whether the line's class is `name`.
    public static func hasClass(_ name: StaticString, in line: UnsafeBufferPointer<CChar>) -> Bool {
        guard let range = stringRange(of: "class", in: line) else { return false }
        return name.withUTF8Buffer { expected in
            range.count == expected.count && zip(range, expected).allSatisfy { line[$0] == CChar(bitPattern: $1) }
        }
    }

    /// The string value of the first `"key":"value"`.
    public static func stringValue(of key: StaticString, in line: UnsafeBufferPointer<CChar>) -> String? {
        guard let range = stringRange(of: key, in: line) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(line)[range]), as: UTF8.self)
    }

    static func stringValue(of key: StaticString, in text: String) -> String? {
        text.utf8CString.withUnsafeBufferPointer { stringValue(of: key, in: UnsafeBufferPointer(rebasing: $0.dropLast())) }
    }

    /// The string value of the first `"key":"value"` as a fixed-size key.
    static func textKey(of key: StaticString, in line: UnsafeBufferPointer<CChar>) -> TextKey? {
        stringRange(of: key, in: line).map { TextKey(line[$0]) }
    }

    /// Where the value of the first `"key":"value"` lies (without its quotes).
    static func stringRange(of key: StaticString, in line: UnsafeBufferPointer<CChar>) -> Range<Int>? {
        guard let start = valueStart(of: key, quoted: true, in: line) else { return nil }
        var end = start
        while end < line.count, line[end] != 0x22, line[end] != 0 { end += 1 }
        guard end < line.count, line[end] == 0x22 else { return nil }
        return start..<end
    }

    /// The non-negative integer value of the first `"key":123`.
    public static func integerValue(of key: StaticString, in line: UnsafeBufferPointer<CChar>) -> Int? {
        guard var index = valueStart(of: key, quoted: false, in: line) else { return nil }
        var value = 0
        var digits = 0
        while index < line.count, line[index] >= 0x30, line[index] <= 0x39, digits < 9 {
            value = value * 10 + Int(line[index] - 0x30)
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// The non-negative integer at the start of `digits` (up to 9 digits), as `integerValue` reads one.
    static func leadingInteger(_ digits: Slice<UnsafeBufferPointer<CChar>>) -> Int? {
        var value = 0
        var count = 0
        for byte in digits {
            guard byte >= 0x30, byte <= 0x39, count < 9 else { break }
            value = value * 10 + Int(byte - 0x30)
            count += 1
        }
        return count > 0 ? value : nil
    }

    /// The number value of the first `"key":1.25` (strtod's syntax; the line must be NUL-terminated).
    public static func doubleValue(of key: StaticString, in line: UnsafeBufferPointer<CChar>) -> Double? {
        guard let start = valueStart(of: key, quoted: false, in: line) else { return nil }
        return number(at: start, in: line)
    }

    /// The number starting at `start` (strtod's syntax; the line must be NUL-terminated).
    static func number(at start: Int, in line: UnsafeBufferPointer<CChar>) -> Double? {
        guard let base = line.baseAddress else { return nil }
        var end: UnsafeMutablePointer<CChar>?
        let value = strtod(base + start, &end)
        guard let end, end > UnsafeMutablePointer(mutating: base + start), value.isFinite else { return nil }
        return value
    }

    /// Whether `key` appears as a member name.
    public static func hasMember(_ key: StaticString, in line: UnsafeBufferPointer<CChar>) -> Bool {
        valueStart(of: key, quoted: false, in: line) != nil
    }

    /// Walks the members of a flat JSON object (one gpsd report line) once, in order, calling `body` with each
    /// member's key and value (a string value without its quotes, `quoted` true). False when the line is not
    /// an object of plain members: a nested value, an escape, broken syntax; `body` returning false ends the
    /// walk early (and also gives false).
    static func forEachMember(
        in line: UnsafeBufferPointer<CChar>, _ body: (_ key: Range<Int>, _ value: Range<Int>, _ quoted: Bool) -> Bool
    ) -> Bool {
        let count = line.count
        var index = 0
        func skipSpace() {
            while index < count, line[index] == 0x20 || line[index] == 0x09 { index += 1 }
        }
        /// The string starting after the quote at `index`, and `index` past its closing quote.
        func string() -> Range<Int>? {
            index += 1
            let start = index
            while index < count, line[index] != 0x22 {
                if line[index] == 0x5C || line[index] == 0 { return nil }
                index += 1
            }
            guard index < count else { return nil }
            defer { index += 1 }
            return start..<index
        }
        skipSpace()
        guard index < count, line[index] == 0x7B else { return false }
        index += 1
        skipSpace()
        if index < count, line[index] == 0x7D { return true }
        while true {
            skipSpace()
            guard index < count, line[index] == 0x22, let key = string() else { return false }
            skipSpace()
            guard index < count, line[index] == 0x3A else { return false }
            index += 1
            skipSpace()
            guard index < count else { return false }
            let value: Range<Int>
            let quoted = line[index] == 0x22
            if quoted {
                guard let text = string() else { return false }
                value = text
            } else {
                let start = index
                while index < count {
                    let byte = line[index]
                    if byte == 0x2C || byte == 0x7D || byte == 0x20 || byte == 0x09 { break }
                    if byte == 0x5B || byte == 0x7B || byte == 0x22 || byte == 0 { return false }
                    index += 1
                }
                guard index > start else { return false }
                value = start..<index
            }
            guard body(key, value, quoted) else { return false }
            skipSpace()
            guard index < count else { return false }
            if line[index] == 0x2C {
                index += 1
                continue
            }
            return line[index] == 0x7D
        }
    }

    /// The line without the JSON whitespace between its tokens, NUL-terminated, or nil when it has none (as
    /// gpsd writes it). Strings are copied as they are.
    static func compacted(_ line: UnsafeBufferPointer<CChar>) -> [CChar]? {
        var index = 0
        var inString = false
        var escaped = false
        var result: [CChar]?
        while index < line.count, line[index] != 0 {
            let byte = line[index]
            let isSpace = byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
            } else if byte == 0x22 {
                inString = true
            }
            if isSpace, !inString, result == nil {
                result = Array(line[0..<index])
                result?.reserveCapacity(line.count + 1)
            }
            if !(isSpace && !inString) { result?.append(byte) }
            index += 1
        }
        result?.append(0)
        return result
    }

    /// Index just past `"key":` (and the opening quote when `quoted`). JSON allows whitespace around the
    /// colon (`"key" : 1`, as Python's json module writes it): it is skipped, so valid JSON in any spacing
    /// is read the same as gpsd's compact lines.
    private static func valueStart(of key: StaticString, quoted: Bool, in line: UnsafeBufferPointer<CChar>) -> Int? {
        key.withUTF8Buffer { name -> Int? in
            func skipSpace(_ index: Int) -> Int {
                var index = index
                while index < line.count, line[index] == 0x20 || line[index] == 0x09 || line[index] == 0x0A
                    || line[index] == 0x0D
                {
                    index += 1
                }
                return index
            }
            var from = 0
            while let at = first(name, in: line, from: from) {
                let end = at + name.count
                if at > 0, line[at - 1] == 0x22, end < line.count, line[end] == 0x22 {
                    let colon = skipSpace(end + 1)
                    if colon < line.count, line[colon] == 0x3A {
                        let value = skipSpace(colon + 1)
                        if !quoted { return value }
                        if value < line.count, line[value] == 0x22 { return value + 1 }
                    }
                }
                from = at + 1
            }
            return nil
        }
    }

    /// Index of the first occurrence of `pattern` at or after `from`.
    private static func first(_ pattern: UnsafeBufferPointer<UInt8>, in line: UnsafeBufferPointer<CChar>, from: Int = 0) -> Int? {
        guard let head = pattern.first, line.count - from >= pattern.count else { return nil }
        let firstByte = CChar(bitPattern: head)
        var index = from
        let last = line.count - pattern.count
        while index <= last {
            if line[index] == firstByte {
                var offset = 1
                while offset < pattern.count, line[index + offset] == CChar(bitPattern: pattern[offset]) { offset += 1 }
                if offset == pattern.count { return index }
            }
            index += 1
        }
        return nil
    }
}

/// A short text (a gpsd time or device path) held without allocating: up to 48 bytes inline, longer texts
/// by their first 40 bytes, their length and an FNV-1a hash of the rest.
struct TextKey: Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    private var count = 0

    init(_ bytes: Slice<UnsafeBufferPointer<CChar>>) {
        count = bytes.count
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        withUnsafeMutableBytes(of: &words) { raw in
            let inline = count <= raw.count ? count : raw.count - 8
            for (offset, byte) in bytes.enumerated() {
                if offset < inline {
                    raw[offset] = UInt8(bitPattern: byte)
                } else {
                    hash = (hash ^ UInt64(UInt8(bitPattern: byte))) &* 0x0000_0100_0000_01B3
                }
            }
            if inline < count { raw.storeBytes(of: hash, toByteOffset: raw.count - 8, as: UInt64.self) }
        }
    }

    static func == (lhs: TextKey, rhs: TextKey) -> Bool {
        lhs.count == rhs.count && lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        withUnsafeBytes(of: words) { hasher.combine(bytes: $0) }
    }
}
