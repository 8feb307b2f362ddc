import Capture
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The streaming epoch splitter against the in-memory splitter it replaced (kept below as the reference),
/// on every capture of the repository, fed whole and in chunks of many sizes.
@Suite struct RawLogEpochSplitterTests {
    static let captures: String = {
        var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(2)  // RawLogEpochSplitterTests.swift, CaptureTests
        return components.joined(separator: "/") + "/Fixtures/captures"
    }()

    static var captureNames: [String] {
        var names: [String] = []
        guard let directory = opendir(captures) else { return [] }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".nmea") || name.hasSuffix(".ubx") { names.append(name) }
        }
        return names.sorted()
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        guard let file = fopen(captures + "/" + name, "rb") else { throw Missing(name: name) }
        defer { fclose(file) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { return result }
            result += chunk[0..<count]
        }
    }

    struct Missing: Error { var name: String }

    /// Epochs and their bytes from feeding `bytes` in chunks of `sizes` (cycled).
    static func streamed(_ bytes: [UInt8], sizes: [Int]) -> [(RawLogEpochs.Epoch, [UInt8])] {
        var result: [(RawLogEpochs.Epoch, [UInt8])] = []
        var splitter = RawLogEpochSplitter()
        var start = 0
        var turn = 0
        while start < bytes.count {
            let end = min(bytes.count, start + sizes[turn % sizes.count])
            splitter.feed(Array(bytes[start..<end])) { result.append(($0, Array($1))) }
            start = end
            turn += 1
        }
        splitter.finish { result.append(($0, Array($1))) }
        return result
    }

    /// The same epochs, their times within a microsecond: the reference reads times through `Double(String)`,
    /// the splitter digit by digit, and the last bit may differ.
    static func agree(_ epochs: [RawLogEpochs.Epoch], _ reference: [RawLogEpochs.Epoch]) -> Bool {
        epochs.count == reference.count
            && zip(epochs, reference).allSatisfy { epoch, expected in
                guard epoch.range == expected.range else { return false }
                switch (epoch.receiverTime, expected.receiverTime) {
                case (nil, nil): return true
                case (let a?, let b?): return abs(a - b) < 1e-6
                default: return false
                }
            }
    }

    static func expectSame(_ bytes: [UInt8], _ what: String, sizes: [Int]) {
        let reference = ReferenceSplit.split(bytes)
        let streamed = Self.streamed(bytes, sizes: sizes)
        #expect(agree(streamed.map(\.0), reference), "\(what), chunks of \(sizes.prefix(3))")
        #expect(streamed.allSatisfy { epoch, chunk in Array(bytes[epoch.range]) == chunk }, "\(what): bytes")
    }

    @Test(arguments: captureNames)
    func sameEpochsAsTheInMemorySplitterInAnyChunks(capture: String) throws {
        let bytes = try Self.bytes(capture)
        let reference = ReferenceSplit.split(bytes)
        #expect(reference.count > 10)
        #expect(Self.agree(RawLogEpochs(bytes).epochs, reference))
        var generator = SystemRandomNumberGenerator()
        let random = (0..<64).map { _ in Int.random(in: 1...9000, using: &generator) }
        for sizes in [[4096], random] {
            Self.expectSame(bytes, capture, sizes: sizes)
        }
        // Byte by byte on the log's start, which holds every kind of packet boundary it has: fast enough.
        let start = Array(bytes.prefix(32 << 10))
        for sizes in [[1], [7]] { Self.expectSame(start, capture + " (start)", sizes: sizes) }
    }

    @Test func mixedNMEAAndUBXCutAcrossEveryBoundary() throws {
        // A UBX packet and NMEA sentences in one log, fed in every chunk size up to a packet's length.
        var log = Array("$GPRMC,120000.00,A,4807.038,N,01131.000,E,0.0,0.0,010125,,,A*6A\r\n".utf8)
        log += [0xB5, 0x62, 0x01, 0x07, 0x08, 0x00, 0xE8, 0x03, 0x00, 0x00, 1, 2, 3, 4, 0xAA, 0xBB]
        log += Array("junk\n#comment\n$GPGGA,120001.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,,M,,*47\r\n".utf8)
        log += [0xB5, 0x62, 0x01]  // a UBX packet cut by the end of the log
        for size in 1...40 { Self.expectSame(log, "mixed log", sizes: [size]) }
    }

    @Test func aLogWithoutTimesIsCutIntoBoundedEpochs() {
        // `/dev/zero` as a raw log: no packet, no time; the splitter never holds more than an epoch's bound.
        let zeros = [UInt8](repeating: 0, count: 3 * RawLogEpochSplitter.largestEpoch + 5)
        let epochs = Self.streamed(zeros, sizes: [100_000])
        #expect(epochs.allSatisfy { $0.0.range.count <= RawLogEpochSplitter.largestEpoch + RawLogEpochSplitter.largestPacket })
        #expect(epochs.map(\.0.range.count).reduce(0, +) == zeros.count)
        #expect(epochs.allSatisfy { $0.0.receiverTime == nil })
        #expect(RawLogEpochs(zeros).epochs == epochs.map(\.0))
        // One NMEA "sentence" with no newline is cut at the packet bound, whole or streamed alike.
        let endless = Array("$GPTXT,".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 3 * RawLogEpochSplitter.largestPacket)
        #expect(Self.streamed(endless, sizes: [1000]).map(\.0) == RawLogEpochs(endless).epochs)
        #expect(Self.streamed(endless, sizes: [1000]).map(\.0.range.count).reduce(0, +) == endless.count)
    }
}

/// The in-memory splitter as it was before it streamed (RawLogEpochs.split), kept as the reference; it reads
/// times and fields its own way (`nmeaTime`, `littleEndian`), so it checks the splitter's arithmetic rather than
/// repeating it.
enum ReferenceSplit {
    private enum ClockKind { case nmea, ubx }

    static func split(_ bytes: [UInt8]) -> [RawLogEpochs.Epoch] {
        var epochs: [RawLogEpochs.Epoch] = []
        var chunkStart = 0
        var chunkTime: Double?
        var clock: ClockKind?
        var index = 0
        while index < bytes.count {
            let (end, time, kind) = packet(in: bytes, at: index)
            if let time, let kind, clock == nil || clock == kind {
                clock = kind
                if let current = chunkTime, current != time {
                    epochs.append(RawLogEpochs.Epoch(range: chunkStart..<index, receiverTime: current))
                    chunkStart = index
                }
                chunkTime = time
            }
            index = end
        }
        if chunkStart < bytes.count {
            epochs.append(RawLogEpochs.Epoch(range: chunkStart..<bytes.count, receiverTime: chunkTime))
        }
        return epochs
    }

    private static func packet(in bytes: [UInt8], at start: Int) -> (end: Int, time: Double?, kind: ClockKind?) {
        let byte = bytes[start]
        if byte == 0xB5, start + 6 <= bytes.count, bytes[start + 1] == 0x62 {
            let length = littleEndian(bytes, at: start + 4, count: 2)
            let end = start + 8 + length
            if end <= bytes.count {
                // A UBX-NAV payload starts with iTOW, milliseconds of the GPS week.
                guard bytes[start + 2] == 0x01, length >= 4 else { return (end, nil, nil) }
                return (end, Double(littleEndian(bytes, at: start + 6, count: 4)) / 1000, .ubx)
            }
        }
        if byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "#") {
            var end = start + 1
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            end = min(end + 1, bytes.count)
            let time = byte == UInt8(ascii: "$") ? nmeaTime(bytes[start..<end]) : nil
            return (end, time, time == nil ? nil : .nmea)
        }
        var end = start + 1
        while end < bytes.count {
            let next = bytes[end]
            if next == UInt8(ascii: "$") || next == UInt8(ascii: "!") || next == 0xB5 { break }
            if next == UInt8(ascii: "#"), bytes[end - 1] == 0x0A { break }
            end += 1
        }
        return (end, nil, nil)
    }

    /// The oracle's own reading of a little-endian field (UBX's length and iTOW), folded from its last byte
    /// rather than shifted into place as the splitter does.
    private static func littleEndian(_ bytes: [UInt8], at start: Int, count: Int) -> Int {
        bytes[start..<start + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// The oracle's own reading of the UTC field, through text and `Double`, so it checks the splitter's
    /// digit arithmetic rather than repeating it.
    static func nmeaTime(_ sentence: ArraySlice<UInt8>) -> Double? {
        let fields = String(decoding: sentence, as: UTF8.self).split(separator: ",", omittingEmptySubsequences: false)
        guard let address = fields.first, address.count >= 4 else { return nil }
        let index: Int
        switch address.suffix(3) {
        case "RMC", "GGA", "GNS", "ZDA": index = 1
        case "GLL": index = 5
        default: return nil
        }
        guard fields.count > index else { return nil }
        let field = fields[index]
        guard field.count >= 6, field.prefix(6).allSatisfy({ $0.isASCII && $0.isNumber }),
            let hours = Double(field.prefix(2)), let minutes = Double(field.dropFirst(2).prefix(2)),
            let whole = Double(field.dropFirst(4).prefix(2))
        else { return nil }
        var fraction = 0.0
        if field.count > 7, field.dropFirst(6).first == "." {
            let digits = field.dropFirst(7).filter { $0.isASCII && $0.isNumber }
            fraction = digits.isEmpty ? 0 : Double("0." + digits) ?? 0
        }
        return hours * 3600 + minutes * 60 + whole + fraction
    }
}
