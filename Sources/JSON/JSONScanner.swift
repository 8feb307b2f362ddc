/// Where and why a text is not JSON: the index of the offending byte and the rule it breaks. Two words
/// with no payload, so every call of the scanner can return it in registers; `JSONParser` turns it into a
/// message (the key a message names is the scanner's `key`).
package struct JSONScanFailure: Error, Sendable, Equatable {
    package enum Reason: UInt8, Sendable, Equatable {
        case empty
        case expectedValue
        /// `]` right after a comma.
        case trailingCommaInArray
        case nestedTooDeeply
        /// No `"` where a key belongs.
        case expectedKey
        /// No `"` where a key belongs, after a comma (a trailing comma).
        case expectedKeyAfterComma
        case duplicateKey
        case expectedColon
        case expectedCommaOrBrace
        case expectedCommaOrBracket
        case stringNotClosed
        case controlCharacter
        case badEscape
        case hexEscape
        case unpairedSurrogate
        case notAScalar
        case invalidUTF8
        case expectedDigit
        case expectedFractionDigit
        case expectedExponentDigit
        case leadingZero
        case numberTooLarge
        case trailingText
    }

    package var index: Int
    package var reason: Reason

    package init(index: Int, reason: Reason) {
        self.index = index
        self.reason = reason
    }
}

/// What the scanner makes of each value it checks: a flat report of kinds and ranges (`JSONSyntax`) or a
/// tree (`JSONParser`). Containers are built bottom-up: begin, one call per member or element, end.
protocol JSONBuilder {
    associatedtype Value
    associatedtype Object
    associatedtype Array

    /// A string whose syntax is checked; `range` includes the quotes.
    mutating func string(_ range: Range<Int>) throws(JSONScanFailure) -> Value
    /// A number whose syntax is checked.
    mutating func number(_ range: Range<Int>) throws(JSONScanFailure) -> Value
    /// `true`, `false`, or `null` (nil).
    mutating func literal(_ value: Bool?) -> Value
    mutating func beginObject() -> Object
    /// `key` is the key's bytes between its quotes, `range` the value's bytes; `depth` 1 is the outermost
    /// container.
    mutating func member(
        key: Range<Int>, value: Value, range: Range<Int>, depth: Int, in object: inout Object
    ) throws(JSONScanFailure)
    mutating func endObject(_ object: Object) -> Value
    mutating func beginArray() -> Array
    mutating func element(_ value: Value, range: Range<Int>, depth: Int, in array: inout Array)
    mutating func endArray(_ array: Array) -> Value
}

/// The one JSON grammar of the package (RFC 8259, strict: no leading zeros, no comments, no trailing
/// commas, only the escapes JSON defines, no control characters in strings), over bytes, recursive with
/// bounded nesting so a hostile input cannot exhaust the stack. It checks syntax and reports byte ranges;
/// the builder decides what to keep, so the flat scan allocates nothing.
struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int
    let depthLimit: Int
    var depth = 0
    /// The key (its bytes between the quotes) of the member being read, for the messages that name it.
    var key: Range<Int> = 0..<0

    init(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0, depthLimit: Int) {
        self.bytes = bytes
        self.index = start
        self.depthLimit = depthLimit
    }

    var peek: UInt8? {
        @inline(__always) get { index < bytes.count ? bytes[index] : nil }
    }

    func failure(_ reason: JSONScanFailure.Reason) -> JSONScanFailure {
        JSONScanFailure(index: index, reason: reason)
    }

    @inline(__always)
    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Exactly one value from the current position to the end of the bytes, whitespace around it allowed.
    mutating func document<Builder: JSONBuilder>(_ builder: inout Builder) throws(JSONScanFailure) -> Builder.Value {
        skipSpace()
        let result = try value(&builder)
        skipSpace()
        guard index == bytes.count else { throw failure(.trailingText) }
        return result
    }

    mutating func value<Builder: JSONBuilder>(_ builder: inout Builder) throws(JSONScanFailure) -> Builder.Value {
        skipSpace()
        guard let byte = peek else { throw failure(.expectedValue) }
        let start = index
        switch byte {
        case UInt8(ascii: "{"): return try object(&builder) { _, _, _ in }
        case UInt8(ascii: "["): return try array(&builder) { _, _ in }
        case UInt8(ascii: "\""):
            try string()
            return try builder.string(start..<index)
        case UInt8(ascii: "t"):
            try literal("true")
            return builder.literal(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return builder.literal(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return builder.literal(nil)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try number()
            return try builder.number(start..<index)
        default: throw failure(.expectedValue)
        }
    }

    private mutating func nest() throws(JSONScanFailure) {
        guard depth < depthLimit else { throw failure(.nestedTooDeeply) }
        depth += 1
    }

    /// An object; `member` also sees each of its members (the flat scan's view, without a closure stored
    /// anywhere, so nothing is allocated).
    mutating func object<Builder: JSONBuilder>(
        _ builder: inout Builder, member: (_ key: Range<Int>, Builder.Value, _ value: Range<Int>) -> Void
    ) throws(JSONScanFailure) -> Builder.Value {
        try nest()
        defer { depth -= 1 }
        index += 1
        var object = builder.beginObject()
        skipSpace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return builder.endObject(object)
        }
        var missingKey = JSONScanFailure.Reason.expectedKey
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw failure(missingKey) }
            let keyStart = index
            try string()
            let memberKey = (keyStart + 1)..<(index - 1)
            key = memberKey
            skipSpace()
            guard peek == UInt8(ascii: ":") else { throw failure(.expectedColon) }
            index += 1
            skipSpace()
            let valueStart = index
            let value = try self.value(&builder)
            // The value may hold objects of its own: name this member's key again.
            key = memberKey
            try builder.member(key: memberKey, value: value, range: valueStart..<index, depth: depth, in: &object)
            member(memberKey, value, valueStart..<index)
            skipSpace()
            switch peek {
            case UInt8(ascii: ","):
                index += 1
                missingKey = .expectedKeyAfterComma
            case UInt8(ascii: "}"):
                index += 1
                return builder.endObject(object)
            default: throw failure(.expectedCommaOrBrace)
            }
        }
    }

    /// An array; `element` also sees each of its elements.
    mutating func array<Builder: JSONBuilder>(
        _ builder: inout Builder, element: (Builder.Value, _ value: Range<Int>) -> Void
    ) throws(JSONScanFailure) -> Builder.Value {
        try nest()
        defer { depth -= 1 }
        index += 1
        var array = builder.beginArray()
        skipSpace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return builder.endArray(array)
        }
        while true {
            skipSpace()
            if peek == UInt8(ascii: "]") { throw failure(.trailingCommaInArray) }
            let start = index
            let value = try self.value(&builder)
            builder.element(value, range: start..<index, depth: depth, in: &array)
            element(value, start..<index)
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return builder.endArray(array)
            default: throw failure(.expectedCommaOrBracket)
            }
        }
    }

    /// A string's syntax; what its escapes mean (surrogate pairs) and UTF-8 are checked when it is decoded.
    /// The hot loop of every scan: it runs on a local position, so the index stays in a register.
    @inline(__always)
    private mutating func string() throws(JSONScanFailure) {
        var position = index + 1
        let end = bytes.count
        defer { index = position }
        guard let base = bytes.baseAddress else { throw JSONScanFailure(index: position, reason: .stringNotClosed) }
        while position < end {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return
            }
            if byte < 0x20 { throw JSONScanFailure(index: position, reason: .controlCharacter) }
            position += 1
            if byte != UInt8(ascii: "\\") { continue }
            guard position < end else { throw JSONScanFailure(index: position, reason: .stringNotClosed) }
            switch base[position] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                position += 1
            case UInt8(ascii: "u"):
                position += 1
                for _ in 0..<4 {
                    guard position < end, JSONText.hexDigit(base[position]) != nil else {
                        throw JSONScanFailure(index: position, reason: .hexEscape)
                    }
                    position += 1
                }
            default: throw JSONScanFailure(index: position, reason: .badEscape)
            }
        }
        throw JSONScanFailure(index: position, reason: .stringNotClosed)
    }

    @inline(__always)
    private mutating func literal(_ word: StaticString) throws(JSONScanFailure) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw failure(.expectedValue) }
        let letters = word.utf8Start
        for offset in 0..<count where bytes[index + offset] != letters[offset] { throw failure(.expectedValue) }
        index += count
    }

    /// A number's syntax, on a local position like `string()`: gpsd lines are mostly numbers.
    @inline(__always)
    private mutating func number() throws(JSONScanFailure) {
        var position = index
        let end = bytes.count
        defer { index = position }
        if position < end && bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        while position < end, bytes[position] &- 0x30 < 10 { position += 1 }
        guard position > integerStart else { throw JSONScanFailure(index: position, reason: .expectedDigit) }
        if position - integerStart > 1 && bytes[integerStart] == UInt8(ascii: "0") {
            position = integerStart
            throw JSONScanFailure(index: position, reason: .leadingZero)
        }
        if position < end && bytes[position] == UInt8(ascii: ".") {
            position += 1
            let fractionStart = position
            while position < end, bytes[position] &- 0x30 < 10 { position += 1 }
            guard position > fractionStart else {
                throw JSONScanFailure(index: position, reason: .expectedFractionDigit)
            }
        }
        if position < end && bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < end && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")) {
                position += 1
            }
            let exponentStart = position
            while position < end, bytes[position] &- 0x30 < 10 { position += 1 }
            guard position > exponentStart else {
                throw JSONScanFailure(index: position, reason: .expectedExponentDigit)
            }
        }
    }
}

/// Decoding what the scanner has checked: string escapes and number text.
package enum JSONText {
    static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }

    /// The text of a scanned string (`range` includes its quotes), escapes decoded. Throws for an unpaired
    /// surrogate, an escape that is not a character, or bytes that are not UTF-8.
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(JSONScanFailure)
        -> String
    {
        let inner = (range.lowerBound + 1)..<(range.upperBound - 1)
        guard bytes[inner].contains(UInt8(ascii: "\\")) else {
            guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[inner]), as: UTF8.self) else {
                throw JSONScanFailure(index: range.upperBound, reason: .invalidUTF8)
            }
            return text
        }
        var output: [UInt8] = []
        output.reserveCapacity(inner.count)
        var index = inner.lowerBound
        var pendingHighSurrogate: UInt32?
        while index < inner.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                guard pendingHighSurrogate == nil else {
                    throw JSONScanFailure(index: index, reason: .unpairedSurrogate)
                }
                output.append(byte)
                index += 1
                continue
            }
            let escaped = bytes[index + 1]
            index += 2
            guard escaped == UInt8(ascii: "u") else {
                guard pendingHighSurrogate == nil else {
                    throw JSONScanFailure(index: index, reason: .unpairedSurrogate)
                }
                switch escaped {
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                default: output.append(escaped)  // `"`, `\` and `/`: the scanner let no other through
                }
                continue
            }
            var unit: UInt32 = 0
            for digit in bytes[index..<(index + 4)] { unit = unit << 4 | (hexDigit(digit) ?? 0) }
            index += 4
            var scalarValue = unit
            if (0xD800..<0xDC00).contains(unit) {
                guard pendingHighSurrogate == nil else {
                    throw JSONScanFailure(index: index, reason: .unpairedSurrogate)
                }
                pendingHighSurrogate = unit
                continue
            }
            if (0xDC00..<0xE000).contains(unit) {
                guard let high = pendingHighSurrogate else {
                    throw JSONScanFailure(index: index, reason: .unpairedSurrogate)
                }
                scalarValue = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)
            } else if pendingHighSurrogate != nil {
                throw JSONScanFailure(index: index, reason: .unpairedSurrogate)
            }
            pendingHighSurrogate = nil
            guard let scalar = Unicode.Scalar(scalarValue) else {
                throw JSONScanFailure(index: index, reason: .notAScalar)
            }
            UTF8.encode(scalar) { output.append($0) }
        }
        guard pendingHighSurrogate == nil else {
            throw JSONScanFailure(index: range.upperBound, reason: .unpairedSurrogate)
        }
        guard let text = String(validating: output, as: UTF8.self) else {
            throw JSONScanFailure(index: range.upperBound, reason: .invalidUTF8)
        }
        return text
    }

    /// A scanned number's value; infinite when it is too large for a `Double`.
    package static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
    }
}
