import GPSD
import GPSModel
import JSON

/// Turns a raw receiver log (NMEA, UBX, or both, with no timing of its own) into a capture: the reports
/// gpsd's offline decoder `gpsdecode` made of it as `gpsd` lines, and the log's own bytes, one `rx` line per
/// receiver epoch, so the capture replays both straight into the pipeline and through a real gpsd.
///
/// Pure: the runtime runs `gpsdecode`, reads the log and hands both over in chunks (`Survey`, `Merge`), so a
/// day-long log is imported in the memory of a few chunks (`RawLogImport`).
public enum CaptureImporter {
    /// A jump in the receiver's clock larger than this (a bad clock after a cold start, a garbage date) is
    /// not taken as elapsed time: the records after it follow one second later. Logging gaps of a few
    /// minutes (the Reno drive has 13) are kept.
    public static let largestTrustedJump = 3600.0

    /// Reports wait for the next TPV's time; more than this many waiting (a decoder that never sees a time)
    /// are timed with the clock as it is, so the wait holds no more than this in memory.
    public static let mostWaitingReports = 1000

    /// The capture, as bytes ready to write, built in memory. `decoded` is `gpsdecode`'s standard output for
    /// `raw`. `deviceName` replaces gpsdecode's `"device":"stdin"` so replayed locations name the log.
    public static func capture(
        raw: [UInt8], decoded: [UInt8], deviceName: String, started: UTCTime? = nil
    ) throws(CaptureError) -> [UInt8] {
        var survey = Survey(deviceName: deviceName)
        survey.add(decoded)
        survey.end()
        if let problem = survey.problem { throw problem }
        var output = CaptureLineEncoder.header(
            header(started: started ?? survey.started, deviceName: deviceName, notes: headerNotes(raw)))
        var merge = Merge(deviceName: deviceName)
        merge.addDecoded(decoded)
        merge.endDecoded()
        var splitter = RawLogEpochSplitter()
        splitter.feed(raw) { merge.addEpoch($0, bytes: $1) }
        splitter.finish { merge.addEpoch($0, bytes: $1) }
        merge.endEpochs()
        while case .line(let line) = merge.next() { output += line }
        return output
    }

    /// The capture's header: `started` is the first fix's time (`Survey.started`).
    public static func header(started: UTCTime?, deviceName: String, notes: [String]) -> CaptureHeader {
        var header = CaptureHeader(started: started, devicePath: deviceName, source: "import", notes: notes)
        header.deviceDriver = nil
        return header
    }

    /// What the header needs from gpsdecode's output before any line is written: the first receiver time of
    /// a TPV (the capture's `started`), and whether any report has a position (without one there is nothing
    /// to import). Fed gpsdecode's output in chunks; `isComplete` once both are known.
    public struct Survey: Sendable, DecodedLineReader {
        public private(set) var started: UTCTime?
        public private(set) var hasPosition = false
        public private(set) var reportCount = 0
        var lines = DecodedLines()
        private let renamed: [UInt8]

        public init(deviceName: String) {
            renamed = CaptureImporter.renamedDevice(deviceName)
        }

        public var isComplete: Bool { started != nil && hasPosition }

        public mutating func add(_ chunk: [UInt8]) { readLines(chunk) }

        public mutating func end() { readLines(nil) }

        /// After `end`: why the log cannot be imported, if it cannot.
        public var problem: CaptureError? {
            guard hasPosition else {
                return CaptureError(
                    .noFix, line: nil,
                    "the log has no position fix: gpsdecode found \(reportCount) reports but none with a position "
                        + "(a receiver that never got a fix, or not a receiver log)")
            }
            // Every report at t=0 would be a capture with nothing to replay.
            guard started != nil else {
                return CaptureError(
                    .noFix, line: nil,
                    "the log has positions but no time: gpsdecode found \(reportCount) reports, none with a time "
                        + "(\(Fix.untimedPositionsCause))")
            }
            return nil
        }

        mutating func take(_ line: ArraySlice<UInt8>) {
            guard let report = CaptureImporter.report(line, renamed: renamed) else { return }
            reportCount += 1
            if started == nil { started = report.time }
            hasPosition = hasPosition || report.hasPosition
        }
    }

    /// The capture's lines after its header: gpsdecode's reports, each timed by the receiver, merged by `t`
    /// with the log's epochs; at equal `t` the receiver's bytes come before gpsd's report of them.
    ///
    /// The runtime feeds both sides as `next()` asks: `.needsDecoded` (more of gpsdecode's output, or
    /// `endDecoded`), `.needsEpochs` (more of the log, or `endEpochs`). Each line is handed out as soon as
    /// its place is known, so what waits is at most a chunk of each side and `mostWaitingReports` reports.
    public struct Merge: Sendable, DecodedLineReader {
        public enum Step: Sendable, Equatable {
            case line([UInt8])
            case needsDecoded
            case needsEpochs
            case done
        }

        public private(set) var gpsdLineCount = 0
        public private(set) var tpvCount = 0
        public private(set) var receivedLineCount = 0
        /// The `t` of the last line handed out.
        public private(set) var lastT = 0.0

        private let renamed: [UInt8]
        var lines = DecodedLines()
        private var clock = ReceiverClock()
        /// Reports waiting for the next TPV's time.
        private var waiting: [TimedReport] = []
        /// Reports whose `t` is known, from `readyHead` on.
        private var ready: [TimedReport] = []
        private var readyHead = 0
        private var epochs: [(t: Double, bytes: [UInt8])] = []
        private var epochHead = 0
        private var epochTimer = EpochTimer()
        private var decodedEnded = false
        private var epochsEnded = false

        public init(deviceName: String) {
            renamed = CaptureImporter.renamedDevice(deviceName)
        }

        public mutating func addDecoded(_ chunk: [UInt8]) { readLines(chunk) }

        public mutating func endDecoded() {
            readLines(nil)
            release()
            decodedEnded = true
        }

        public mutating func addEpoch(_ epoch: RawLogEpochs.Epoch, bytes: ArraySlice<UInt8>) {
            epochs.append((epochTimer.t(at: epoch.receiverTime), Array(bytes)))
        }

        public mutating func endEpochs() {
            epochsEnded = true
        }

        public mutating func next() -> Step {
            if readyHead < ready.count {
                let report = ready[readyHead]
                if epochHead < epochs.count {
                    if epochs[epochHead].t <= report.t { return nextEpoch() }
                } else if !epochsEnded {
                    return .needsEpochs
                }
                readyHead += 1
                if readyHead == ready.count {
                    ready.removeAll(keepingCapacity: true)
                    readyHead = 0
                }
                gpsdLineCount += 1
                if report.isTPV { tpvCount += 1 }
                lastT = report.t
                return .line(CaptureLineEncoder.gpsd(t: report.t, object: report.text))
            }
            if !decodedEnded { return .needsDecoded }
            if epochHead < epochs.count { return nextEpoch() }
            return epochsEnded ? .done : .needsEpochs
        }

        private mutating func nextEpoch() -> Step {
            let (t, bytes) = epochs[epochHead]
            epochHead += 1
            if epochHead == epochs.count {
                epochs.removeAll(keepingCapacity: true)
                epochHead = 0
            }
            receivedLineCount += 1
            lastT = t
            return .line(CaptureLineEncoder.record(t: t, .received(bytes)))
        }

        /// gpsdecode's lines, each timed by the receiver: a TPV by its own time, any other report by the
        /// next TPV's (gpsd sends an epoch's SKY before the TPV that ends it).
        mutating func take(_ line: ArraySlice<UInt8>) {
            guard let report = CaptureImporter.report(line, renamed: renamed) else { return }
            if report.isTPV, let time = report.time {
                let t = clock.advance(to: Double(time.seconds) + Double(time.nanoseconds) / 1e9)
                release(at: t)
                ready.append(TimedReport(t: t, text: report.text, isTPV: true))
            } else {
                waiting.append(TimedReport(t: clock.t, text: report.text, isTPV: report.isTPV))
                if waiting.count > CaptureImporter.mostWaitingReports { release() }
            }
        }

        /// Hands the waiting reports over, at `t` or at the time they arrived.
        private mutating func release(at t: Double? = nil) {
            for var report in waiting {
                if let t { report.t = t }
                ready.append(report)
            }
            waiting.removeAll(keepingCapacity: true)
        }
    }

    struct TimedReport: Sendable {
        var t: Double
        var text: [UInt8]
        var isTPV: Bool
    }

    /// One of gpsdecode's lines, its device renamed; nil for a line that is not a JSON object.
    static func report(_ line: ArraySlice<UInt8>, renamed: [UInt8]) -> (
        text: [UInt8], isTPV: Bool, time: UTCTime?, hasPosition: Bool
    )? {
        var line = line
        if line.last == 0x0D { line = line.dropLast() }
        guard line.first == UInt8(ascii: "{") else { return nil }
        var text = Array(line)
        if let position = firstRange(of: stdinDevice, in: line) {
            // Appended piece by piece: Swift 6.0 (Debian trixie's) does not type-check slice + array + slice.
            text = Array(line[line.startIndex..<position.lowerBound])
            text += renamed
            text += line[position.upperBound...]
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
        return (text, isTPV, time, hasPosition)
    }

    private static let stdinDevice = Array(#""device":"stdin""#.utf8)

    static func renamedDevice(_ deviceName: String) -> [UInt8] {
        var renamed: [UInt8] = Array(#""device":"#.utf8)
        JSONWriter.appendQuoted(deviceName, to: &renamed)
        return renamed
    }

    /// What reads gpsdecode's output line by line (`Survey`, `Merge`): its lines so far, and what it does with
    /// each whole one.
    protocol DecodedLineReader {
        var lines: DecodedLines { get set }
        mutating func take(_ line: ArraySlice<UInt8>)
    }

    /// gpsdecode's output cut into lines across chunks. A line longer than `largestLine` (gpsd's reports
    /// are a few KiB at most) is dropped, so a decoder gone wrong cannot fill the memory.
    struct DecodedLines: Sendable {
        static let largestLine = 1 << 20
        private var partial: [UInt8] = []
        private var dropping = false

        mutating func add(_ chunk: [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
            var start = 0
            while let newline = chunk[start...].firstIndex(of: 0x0A) {
                if dropping {
                    dropping = false
                } else if partial.isEmpty {
                    body(chunk[start..<newline])
                } else {
                    partial += chunk[start..<newline]
                    body(partial[...])
                    partial.removeAll(keepingCapacity: true)
                }
                start = newline + 1
            }
            guard !dropping, start < chunk.count else { return }
            partial += chunk[start...]
            if partial.count > Self.largestLine {
                partial = []
                dropping = true
            }
        }

        mutating func end(_ body: (ArraySlice<UInt8>) -> Void) {
            if !partial.isEmpty, !dropping { body(partial[...]) }
            partial = []
            dropping = false
        }
    }

    /// Epochs timed by the receiver's own clock (time of day for NMEA, of week for UBX).
    struct EpochTimer: Sendable {
        private var clock = ReceiverClock()
        private var previous: Double?

        mutating func t(at receiverTime: Double?) -> Double {
            if let time = receiverTime {
                // Unwrap midnight or the week's end first, then let the clock judge the jump.
                let unwrapped = previous.map { $0 + RawLogEpochs.gap(from: $0, to: time) } ?? time
                previous = unwrapped
                _ = clock.advance(to: unwrapped)
            }
            return clock.t
        }
    }

    /// Seconds since the first timestamp, never going back, and not trusting jumps beyond
    /// `largestTrustedJump`.
    struct ReceiverClock: Sendable {
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

    /// gpsd's test logs start with `#` lines (Name, Chipset, Date…): they become the header's notes. The
    /// runtime hands over the log's first `notesPrefix` bytes, which hold them in any real log.
    public static let notesPrefix = 1 << 20

    public static func headerNotes(_ raw: [UInt8]) -> [String] {
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

extension CaptureImporter.DecodedLineReader {
    /// Hands each whole line of `chunk` to `take`; nil, at the end of the output, hands over the last line
    /// if it had no newline.
    mutating func readLines(_ chunk: [UInt8]?) {
        // Moved out for the call, so `take` may change self (and the buffer is not copied).
        var lines = self.lines
        self.lines = CaptureImporter.DecodedLines()
        if let chunk { lines.add(chunk) { take($0) } } else { lines.end { take($0) } }
        self.lines = lines
    }
}
