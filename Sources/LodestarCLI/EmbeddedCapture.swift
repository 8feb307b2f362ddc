/// The real capture `lodestar demo` replays when no file is given, compiled into the binary so the demo
/// works wherever the binary is copied.
public enum EmbeddedCapture {
    public static var name: String { DemoCapture.name }

    /// The capture's bytes, exactly as recorded; nil only if the embedded text were damaged.
    public static func bytes() -> [UInt8]? {
        guard let decoded = Base64.decode(DemoCapture.base64), decoded.count == DemoCapture.byteCount else {
            return nil
        }
        return decoded
    }
}

/// RFC 4648 base64, skipping line breaks; Foundation is not linked for this alone.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var table = [Int8](repeating: -1, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = Int8(index)
        }
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text.utf8 {
            if character == UInt8(ascii: "\n") || character == UInt8(ascii: "\r") || character == UInt8(ascii: " ") {
                continue
            }
            if character == UInt8(ascii: "=") { break }
            let value = table[Int(character)]
            guard value >= 0 else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }
}
