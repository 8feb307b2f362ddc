/// Reads the few things libgps does not give us straight from a gpsd JSON line, without building a String
/// for every line (the live path reads one per report).
enum JSONPeek {
    /// The value of the `"class"` key. gpsd writes it first, but any position works.
    static func className(in line: UnsafeBufferPointer<CChar>) -> String? {
        stringValue(of: "class", in: line)
    }

    /// The string value of a top-level-looking `"key":"value"` pair (first occurrence).
    static func stringValue(of key: String, in line: UnsafeBufferPointer<CChar>) -> String? {
        let pattern = Array("\"\(key)\":\"".utf8)
        guard let start = find(pattern, in: line) else { return nil }
        var end = start
        while end < line.count, line[end] != 0x22, line[end] != 0 { end += 1 }
        guard end < line.count, line[end] == 0x22 else { return nil }
        return String(
            decoding: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(line)[start..<end]), as: UTF8.self)
    }

    static func stringValue(of key: String, in text: String) -> String? {
        text.utf8CString.withUnsafeBufferPointer { stringValue(of: key, in: UnsafeBufferPointer(rebasing: $0.dropLast())) }
    }

    /// The non-negative integer value of `"key":123` (first occurrence).
    static func integerValue(of key: String, in line: UnsafeBufferPointer<CChar>) -> Int? {
        let pattern = Array("\"\(key)\":".utf8)
        guard var index = find(pattern, in: line) else { return nil }
        var value = 0
        var digits = 0
        while index < line.count, line[index] >= 0x30, line[index] <= 0x39, digits < 9 {
            value = value * 10 + Int(line[index] - 0x30)
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// Where `text` starts in `line`.
    static func offset(of text: String, in line: UnsafeBufferPointer<CChar>) -> Int? {
        let pattern = Array(text.utf8)
        return find(pattern, in: line).map { $0 - pattern.count }
    }

    static func contains(_ text: String, in line: UnsafeBufferPointer<CChar>) -> Bool {
        find(Array(text.utf8), in: line) != nil
    }

    /// Index just past the first occurrence of `pattern`.
    private static func find(_ pattern: [UInt8], in line: UnsafeBufferPointer<CChar>) -> Int? {
        guard !pattern.isEmpty, line.count >= pattern.count else { return nil }
        let first = CChar(bitPattern: pattern[0])
        var index = 0
        let last = line.count - pattern.count
        while index <= last {
            if line[index] == first {
                var matched = true
                for offset in 1..<pattern.count where line[index + offset] != CChar(bitPattern: pattern[offset]) {
                    matched = false
                    break
                }
                if matched { return index + pattern.count }
            }
            index += 1
        }
        return nil
    }
}
