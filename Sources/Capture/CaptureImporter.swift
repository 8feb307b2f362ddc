import GPSD
import GPSModel
import JSON

/// Turns a raw receiver log (NMEA, UBX, or both, with no timing of its own) into a capture: the reports
/// gpsd's offline decoder `gpsdecode` made of it as `gpsd` lines, and the log's own bytes, one `rx` line per
/// receiver epoch, so the capture replays both straight into the pipeline and through a real gpsd.
///
/// Pure: the runtime runs `gpsdecode` and hands over its output.
public enum CaptureImporter {
    /// A jump in the receiver's clock larger than this (a bad clock after a cold start, a garbage date) is
    /// not taken as elapsed time: the records after it follow one second later. Logging gaps of a few
    /// minutes (the Reno drive has 13) are kept.
    public static let largestTrustedJump = 3600.0

    /// The capture, as bytes ready to write. `decoded` is `gpsdecode`'s standard output for `raw`.
    /// `deviceName` replaces gpsdecode's `"device":"stdin"` so replayed locations name the log.
    public static func capture(
        raw: [UInt8], decoded: [UInt8], deviceName: String, started: UTCTime? = nil
    ) throws(CaptureError) -> [UInt8] {
        let gpsdLines = timedReports(decoded, deviceName: deviceName)
        guard gpsdLines.contains(where: { $0.hasPosition }) else {
            throw CaptureError(
                .noFix, line: nil,
                "the log has no position fix: gpsdecode found \(gpsdLines.count) reports but none with a position "
                    + "(a receiver that never got a fix, or not a receiver log)")
        }
        let receiverLines = timedEpochs(RawLogEpochs(raw))
        var header = CaptureHeader(
            started: started ?? gpsdLines.first(where: { $0.time != nil })?.time, devicePath: deviceName,
            source: "import", notes: headerNotes(raw))
        header.deviceDriver = nil

        var output = CaptureLineEncoder.header(header)
        output.reserveCapacity(raw.count * 3 + decoded.count + 4096)
        // Merge by t; at equal t the receiver's bytes come before gpsd's report of them.
        var receiverIndex = 0
        for report in gpsdLines {
            while receiverIndex < receiverLines.count, receiverLines[receiverIndex].t <= report.t {
                output += CaptureLineEncoder.record(
                    t: receiverLines[receiverIndex].t, .received(Array(raw[receiverLines[receiverIndex].range])))
                receiverIndex += 1
            }
            output += CaptureLineEncoder.gpsd(t: report.t, object: report.text)
        }
        while receiverIndex < receiverLines.count {
            output += CaptureLineEncoder.record(
                t: receiverLines[receiverIndex].t, .received(Array(raw[receiverLines[receiverIndex].range])))
            receiverIndex += 1
        }
        return output
    }

    struct TimedReport {
        var t: Double
        var text: ArraySlice<UInt8>
        var time: UTCTime?
        var hasPosition: Bool
    }

    /// gpsdecode's lines, each timed by the receiver: a TPV by its own time, any other report by the next
    /// TPV's (gpsd sends an epoch's SKY before the TPV that ends it).
    static func timedReports(_ decoded: [UInt8], deviceName: String) -> [TimedReport] {
        let stdinDevice = Array(#""device":"stdin""#.utf8)
        var renamed: [UInt8] = Array(#""device":"#.utf8)
        JSONWriter.appendQuoted(deviceName, to: &renamed)

        var reports: [TimedReport] = []
        var waiting: [Int] = []
        var clock = ReceiverClock()
        var start = 0
        while start < decoded.count {
            var end = start
            while end < decoded.count, decoded[end] != 0x0A { end += 1 }
            var line = decoded[start..<end]
            start = end + 1
            if line.last == 0x0D { line = line.dropLast() }
            guard line.first == UInt8(ascii: "{") else { continue }
            var text = line
            if let position = firstRange(of: stdinDevice, in: line) {
                text = ArraySlice(line[line.startIndex..<position.lowerBound] + renamed + line[position.upperBound...])
            }
            let (isTPV, time, hasPosition) = text.withUnsafeBufferPointer { bytes -> (Bool, UTCTime?, Bool) in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    guard JSONPeek.hasClass("TPV", in: chars) else { return (false, nil, false) }
                    let time = JSONPeek.stringValue(of: "time", in: chars).flatMap { UTCTime(iso8601: Array($0.utf8)) }
                        .flatMap { $0.isReceiverTime ? $0 : nil }
                    let position = (JSONPeek.integerValue(of: "mode", in: chars) ?? 0) >= 2
                        && JSONPeek.hasMember("lat", in: chars) && JSONPeek.hasMember("lon", in: chars)
                    return (true, time, position)
                }
            }
            reports.append(TimedReport(t: clock.t, text: text, time: time, hasPosition: hasPosition))
            if isTPV, let time {
                let t = clock.advance(to: Double(time.seconds) + Double(time.nanoseconds) / 1e9)
                for index in waiting { reports[index].t = t }
                waiting.removeAll()
                reports[reports.count - 1].t = t
            } else {
                waiting.append(reports.count - 1)
            }
        }
        return reports
    }

    struct TimedEpoch {
        var t: Double
        var range: Range<Int>
    }

    /// The log's epochs, each timed by the receiver's own clock (time of day for NMEA, of week for UBX).
    static func timedEpochs(_ log: RawLogEpochs) -> [TimedEpoch] {
        var clock = ReceiverClock()
        var previous: Double?
        return log.epochs.map { epoch in
            if let time = epoch.receiverTime {
                // Unwrap midnight or the week's end first, then let the clock judge the jump.
                let unwrapped = previous.map { $0 + RawLogEpochs.gap(from: $0, to: time) } ?? time
                previous = unwrapped
                _ = clock.advance(to: unwrapped)
            }
            return TimedEpoch(t: clock.t, range: epoch.range)
        }
    }

    /// Seconds since the first timestamp, never going back, and not trusting jumps beyond
    /// `largestTrustedJump`.
    struct ReceiverClock {
        private(set) var t = 0.0
        private var last: Double?

        mutating func advance(to seconds: Double) -> Double {
            if let last {
                let delta = seconds - last
                if delta > 0 { t += delta <= CaptureImporter.largestTrustedJump ? delta : 1 }
            }
            last = seconds
            return t
        }
    }

    /// gpsd's test logs start with `#` lines (Name, Chipset, Date…): they become the header's notes.
    static func headerNotes(_ raw: [UInt8]) -> [String] {
        var notes: [String] = []
        var start = 0
        while start < raw.count, raw[start] == UInt8(ascii: "#"), notes.count < 100 {
            var end = start
            while end < raw.count, raw[end] != 0x0A { end += 1 }
            var text = raw[(start + 1)..<end]
            while let first = text.first, first == 0x20 { text = text.dropFirst() }
            while let last = text.last, last == 0x0D || last == 0x20 { text = text.dropLast() }
            if !text.isEmpty { notes.append(String(decoding: text.prefix(500), as: UTF8.self)) }
            start = end + 1
        }
        return notes
    }

    private static func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        while index <= haystack.endIndex - needle.count {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index..<(index + needle.count)
            }
            index += 1
        }
        return nil
    }
}
