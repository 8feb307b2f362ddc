/// A raw receiver log (NMEA, UBX, or both, as gpsd's test logs and `gpspipe -R` write them) cut into one
/// chunk per receiver epoch, each with the receiver's own time, so it can be written to a pty at the pace
/// it was recorded. Raw logs carry no timing of their own (docs/capture-format.md).
public struct RawLogEpochs: Sendable {
    public struct Epoch: Sendable, Equatable {
        /// Byte range of the epoch's packets (and any bytes between them) in the log.
        public var range: Range<Int>
        /// Seconds on the receiver's clock: time of day for NMEA, time of week for UBX; nil if unknown.
        public var receiverTime: Double?
    }

    public let bytes: [UInt8]
    public let epochs: [Epoch]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        epochs = RawLogEpochs.split(bytes)
    }

    /// Seconds between two epochs' receiver times, unwrapped across midnight (NMEA) or a week (UBX).
    public static func gap(from earlier: Double, to later: Double) -> Double {
        var delta = later - earlier
        if delta < -43_200 && delta > -86_400 { delta += 86_400 }
        if delta <= -302_400 { delta += 604_800 }
        return delta
    }

    private enum ClockKind { case nmea, ubx }

    private static func split(_ bytes: [UInt8]) -> [Epoch] {
        var epochs: [Epoch] = []
        var chunkStart = 0
        var chunkTime: Double?
        // Mixed logs carry two clocks (time of day and time of week); epochs follow the first one seen.
        var clock: ClockKind?
        var index = 0
        while index < bytes.count {
            let (end, time, kind) = packet(in: bytes, at: index)
            if let time, let kind, clock == nil || clock == kind {
                clock = kind
                if let current = chunkTime, current != time {
                    epochs.append(Epoch(range: chunkStart..<index, receiverTime: current))
                    chunkStart = index
                }
                chunkTime = time
            }
            index = end
        }
        if chunkStart < bytes.count {
            epochs.append(Epoch(range: chunkStart..<bytes.count, receiverTime: chunkTime))
        }
        return epochs
    }

    /// The end of the packet (or run of unrecognised bytes) starting at `start`, and its time if it has one.
    private static func packet(in bytes: [UInt8], at start: Int) -> (end: Int, time: Double?, kind: ClockKind?) {
        let byte = bytes[start]
        if byte == 0xB5, start + 6 <= bytes.count, bytes[start + 1] == 0x62 {
            let length = Int(bytes[start + 4]) | Int(bytes[start + 5]) << 8
            let end = start + 8 + length
            if end <= bytes.count {
                // Every UBX-NAV message starts its payload with iTOW, milliseconds of the GPS week.
                if bytes[start + 2] == 0x01, length >= 4 {
                    let p = start + 6
                    let milliseconds = UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8 | UInt32(bytes[p + 2]) << 16
                        | UInt32(bytes[p + 3]) << 24
                    return (end, Double(milliseconds) / 1000, .ubx)
                }
                return (end, nil, nil)
            }
        }
        if byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "#") {
            var end = start + 1
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            end = min(end + 1, bytes.count)
            let time = byte == UInt8(ascii: "$") ? nmeaTime(bytes[start..<end]) : nil
            return (end, time, time == nil ? nil : .nmea)
        }
        // Anything else (banners, blank lines, other binary protocols) up to the next likely packet start.
        var end = start + 1
        while end < bytes.count {
            let next = bytes[end]
            if next == UInt8(ascii: "$") || next == UInt8(ascii: "!") || next == 0xB5 { break }
            if next == UInt8(ascii: "#"), bytes[end - 1] == 0x0A { break }
            end += 1
        }
        return (end, nil, nil)
    }

    /// Seconds of the day from the UTC field of RMC, GGA, GNS, ZDA (field 1) or GLL (field 5).
    static func nmeaTime(_ sentence: ArraySlice<UInt8>) -> Double? {
        let fields = sentence.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard let address = fields.first, address.count >= 4 else { return nil }
        let type = String(decoding: address.suffix(3), as: UTF8.self)
        let fieldIndex: Int
        switch type {
        case "RMC", "GGA", "GNS", "ZDA": fieldIndex = 1
        case "GLL": fieldIndex = 5
        default: return nil
        }
        guard fields.count > fieldIndex else { return nil }
        let field = Array(fields[fieldIndex])
        guard field.count >= 6, field.prefix(6).allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        func number(_ range: Range<Int>) -> Double {
            field[range].reduce(0) { $0 * 10 + Double($1 - 0x30) }
        }
        var seconds = number(0..<2) * 3600 + number(2..<4) * 60 + number(4..<6)
        if field.count > 7, field[6] == UInt8(ascii: ".") {
            var scale = 0.1
            for digit in field[7...] where digit >= 0x30 && digit <= 0x39 {
                seconds += Double(digit - 0x30) * scale
                scale /= 10
            }
        }
        return seconds
    }
}
