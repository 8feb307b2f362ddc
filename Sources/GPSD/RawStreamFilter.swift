/// Separates a raw watch's receiver bytes from the JSON gpsd mixes in: its answers to the `?WATCH` itself
/// (VERSION, DEVICES, WATCH) and device notices. Those are whole lines starting `{"class":"`; no NMEA
/// sentence starts with `{`, and a UBX frame would have to contain that exact text right after a 0x0A.
public struct RawStreamFilter: Sendable {
    private static let marker = Array(#"{"class":""#.utf8)
    private var atLineStart = true
    /// Bytes held at a line start while it is unclear whether they begin a JSON line.
    private var held: [UInt8] = []
    private var inJSONLine = false

    public init() {}

    /// The receiver's bytes out of `chunk` (possibly fewer or more than came in: a possible JSON start is
    /// held until the next chunk shows what it is).
    public mutating func receiverBytes(_ chunk: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(chunk.count)
        for byte in chunk {
            if inJSONLine {
                if byte == 0x0A {
                    inJSONLine = false
                    atLineStart = true
                }
                continue
            }
            if atLineStart || !held.isEmpty {
                held.append(byte)
                if held.count <= Self.marker.count, held == Array(Self.marker.prefix(held.count)) {
                    if held.count == Self.marker.count {
                        inJSONLine = true
                        held.removeAll()
                    }
                    atLineStart = false
                    continue
                }
                output += held
                held.removeAll()
                atLineStart = byte == 0x0A
                continue
            }
            output.append(byte)
            atLineStart = byte == 0x0A
        }
        return output
    }
}
