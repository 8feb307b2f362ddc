/// A raw receiver log (NMEA, UBX, or both, as gpsd's test logs and `gpspipe -R` write them) cut into one
/// chunk per receiver epoch, each with the receiver's own time, so it can be written to a pty at the pace
/// it was recorded. Raw logs carry no timing of their own (docs/capture-format.md).
///
/// The log held in memory; `RawLogEpochSplitter` does the cutting, and does it for a log read in chunks too.
public struct RawLogEpochs: Sendable {
    public struct Epoch: Sendable, Equatable {
        /// Byte range of the epoch's packets (and any bytes between them) in the log.
        public var range: Range<Int>
        /// Seconds on the receiver's clock: time of day for NMEA, time of week for UBX; nil if unknown.
        public var receiverTime: Double?

        public init(range: Range<Int>, receiverTime: Double?) {
            self.range = range
            self.receiverTime = receiverTime
        }
    }

    public let bytes: [UInt8]
    public let epochs: [Epoch]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var epochs: [Epoch] = []
        var splitter = RawLogEpochSplitter()
        splitter.feed(bytes) { epoch, _ in epochs.append(epoch) }
        splitter.finish { epoch, _ in epochs.append(epoch) }
        self.epochs = epochs
    }

    /// Seconds between two epochs' receiver times, unwrapped across midnight (NMEA) or a week (UBX).
    public static func gap(from earlier: Double, to later: Double) -> Double {
        var delta = later - earlier
        if delta < -43_200 && delta > -86_400 { delta += 86_400 }
        if delta <= -302_400 { delta += 604_800 }
        return delta
    }
}

/// Cuts a raw log into receiver epochs as its bytes arrive, in chunks of any size: a packet cut by a
/// chunk's end waits for the next chunk. It holds the open epoch and at most one packet beyond it, so a
/// day-long log is cut in the memory of a few chunks.
///
/// Two bounds keep that true of any input: a packet (an NMEA line, a run of unrecognised bytes) longer than
/// `largestPacket` is cut there, and an epoch that reaches `largestEpoch` without a new receiver time (a log
/// with no timestamps, `/dev/zero`) is handed over in pieces of that size, each with the same time. Real
/// logs never come near either: an NMEA sentence is at most 82 bytes, a UBX packet at most 64 KiB.
public struct RawLogEpochSplitter: Sendable {
    public static let largestPacket = 1 << 17
    public static let largestEpoch = 1 << 20

    private enum ClockKind { case nmea, ubx }

    /// The log's bytes from the open epoch's start on.
    private var buffer: [UInt8] = []
    /// Offset in the log of `buffer[0]`, which is also the open epoch's start.
    private var bufferStart = 0
    /// Offset in the log of the next packet to read.
    private var next = 0
    private var epochTime: Double?
    // Mixed logs carry two clocks (time of day and time of week); epochs follow the first one seen.
    private var clock: ClockKind?

    public init() {}

    /// Adds the log's next bytes; `body` gets each epoch they complete, with its bytes.
    public mutating func feed(_ chunk: [UInt8], _ body: (RawLogEpochs.Epoch, ArraySlice<UInt8>) -> Void) {
        // A whole log handed over at once is not copied.
        if buffer.isEmpty { buffer = chunk } else { buffer += chunk }
        cut(atEnd: false, body)
    }

    /// Ends the log: `body` gets the last epochs.
    public mutating func finish(_ body: (RawLogEpochs.Epoch, ArraySlice<UInt8>) -> Void) {
        cut(atEnd: true, body)
        if !buffer.isEmpty {
            body(RawLogEpochs.Epoch(range: bufferStart..<(bufferStart + buffer.count), receiverTime: epochTime), buffer[...])
            bufferStart += buffer.count
            buffer = []
        }
    }

    private mutating func cut(atEnd: Bool, _ body: (RawLogEpochs.Epoch, ArraySlice<UInt8>) -> Void) {
        var epochStart = 0
        var index = next - bufferStart
        while index < buffer.count {
            guard let (end, time, kind) = Self.packet(in: buffer, at: index, atEnd: atEnd) else { break }
            if let time, let kind, clock == nil || clock == kind {
                clock = kind
                if let current = epochTime, current != time, index > epochStart {
                    body(RawLogEpochs.Epoch(range: (bufferStart + epochStart)..<(bufferStart + index), receiverTime: current),
                        buffer[epochStart..<index])
                    epochStart = index
                }
                epochTime = time
            }
            index = end
            if index - epochStart >= Self.largestEpoch {
                body(RawLogEpochs.Epoch(range: (bufferStart + epochStart)..<(bufferStart + index), receiverTime: epochTime),
                    buffer[epochStart..<index])
                epochStart = index
            }
        }
        next = bufferStart + index
        if epochStart > 0 {
            buffer.removeSubrange(0..<epochStart)
            bufferStart += epochStart
        }
    }

    /// The end of the packet (or run of unrecognised bytes) starting at `start`, and its time if it has one;
    /// nil when that depends on bytes not yet read (`atEnd` false).
    private static func packet(in bytes: [UInt8], at start: Int, atEnd: Bool) -> (end: Int, time: Double?, kind: ClockKind?)? {
        let limit = min(bytes.count, start + largestPacket)
        // Whether the bytes up to `limit` are all the packet can have.
        let settled = atEnd || limit == start + largestPacket
        let byte = bytes[start]
        if byte == 0xB5 {
            guard start + 6 <= limit || settled else { return nil }
            if start + 6 <= limit, bytes[start + 1] == 0x62 {
                let length = Int(bytes[start + 4]) | Int(bytes[start + 5]) << 8
                let end = start + 8 + length
                guard end <= limit || settled else { return nil }
                if end <= limit {
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
        }
        if byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "#") {
            var end = start + 1
            while end < limit, bytes[end] != 0x0A { end += 1 }
            guard end < limit || settled else { return nil }
            end = min(end + 1, limit)
            let time = byte == UInt8(ascii: "$") ? nmeaTime(bytes[start..<end]) : nil
            return (end, time, time == nil ? nil : .nmea)
        }
        // Anything else (banners, blank lines, other binary protocols) up to the next likely packet start.
        var end = start + 1
        while end < limit {
            let next = bytes[end]
            if next == UInt8(ascii: "$") || next == UInt8(ascii: "!") || next == 0xB5 { break }
            if next == UInt8(ascii: "#"), bytes[end - 1] == 0x0A { break }
            end += 1
        }
        guard end < limit || settled else { return nil }
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
