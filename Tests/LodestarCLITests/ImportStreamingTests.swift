import SystemInterface
import TestSupport
import Capture
import Foundation
import GPSD
import GPSModel
import JSON
import LodestarCLI
import Testing

/// `lodestar import` streams: the same bytes as the in-memory importer it replaced (kept below as the
/// reference), whatever the chunks, and SIGTERM ends it quickly with a valid, cut capture.
@Suite struct ImportStreamingTests {
    /// The streamed merge fed both sides in chunks of `size` bytes, as the runtime does.
    static func streamed(raw: [UInt8], decoded: [UInt8], name: String, size: Int) throws -> [UInt8] {
        var survey = CaptureImporter.Survey(deviceName: name)
        for start in stride(from: 0, to: decoded.count, by: size) {
            survey.add(Array(decoded[start..<min(decoded.count, start + size)]))
        }
        survey.end()
        #expect(survey.problem == nil)
        var output = CaptureLineEncoder.header(
            CaptureImporter.header(
                started: survey.started, deviceName: name,
                notes: CaptureImporter.headerNotes(Array(raw.prefix(CaptureImporter.notesPrefix)))))
        var merge = CaptureImporter.Merge(deviceName: name)
        var splitter = RawLogEpochSplitter()
        var decodedAt = 0
        var rawAt = 0
        while true {
            switch merge.next() {
            case .line(let line): output += line
            case .needsDecoded:
                if decodedAt == decoded.count {
                    merge.endDecoded()
                } else {
                    merge.addDecoded(Array(decoded[decodedAt..<min(decoded.count, decodedAt + size)]))
                    decodedAt = min(decoded.count, decodedAt + size)
                }
            case .needsEpochs:
                if rawAt == raw.count {
                    splitter.finish { merge.addEpoch($0, bytes: $1) }
                    merge.endEpochs()
                } else {
                    splitter.feed(Array(raw[rawAt..<min(raw.count, rawAt + size)])) { merge.addEpoch($0, bytes: $1) }
                    rawAt = min(raw.count, rawAt + size)
                }
            case .done: return output
            }
        }
    }

    @Test(arguments: Fixtures.captureNames)
    func streamingImportWritesTheSameBytesAsTheInMemoryImporter(capture: String) throws {
        let path = Fixtures.path(capture)
        let raw = try Fixtures.bytes(capture)
        let decoded = try gpsdecode(path)
        let reference = try ReferenceImporter.capture(raw: raw, decoded: decoded, deviceName: capture)
        #expect(try CaptureImporter.capture(raw: raw, decoded: decoded, deviceName: capture) == reference)
        // Byte by byte only on the small logs, to keep the suite fast; every log in chunks of a random size.
        let sizes = (raw.count < 64 << 10 ? [1, 7, 4096] : []) + [Int.random(in: 100...70_000)]
        for size in sizes {
            #expect(try Self.streamed(raw: raw, decoded: decoded, name: capture, size: size) == reference, "\(size)")
        }
        // The command, through gpsdecode's pipe, writes the same file.
        let folder = try temporaryFolder("import")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = MemorySink()
        let context = CommandContext(standardOutput: MemorySink(), standardError: error, shouldStop: { false })
        let code = LodestarCommand.main(arguments: ["import", path, "-o", folder + "/out.jsonl"], context: context)
        #expect(code == 0, "\(error.text)")
        #expect(try readWholeFile(folder + "/out.jsonl") == reference)
    }

    @Test func reportsWaitingForATimeAreBoundedAndKeptInOrder() throws {
        let tpv = { (second: Int) in
            #"{"class":"TPV","device":"stdin","mode":3,"time":"2024-05-01T10:00:0\#(second).000Z","lat":48.1,"lon":11.5}"#
        }
        let sky = #"{"class":"SKY","device":"stdin"}"#
        let waiting = CaptureImporter.mostWaitingReports + 500
        let decoded = Array(([tpv(0), tpv(2)] + Array(repeating: sky, count: waiting) + [tpv(5)]).joined(separator: "\n").utf8)
        let capture = try CaptureReader.read(try CaptureImporter.capture(raw: [], decoded: decoded, deviceName: "log"))
        let times = capture.lines.map(\.t)
        #expect(times.count == waiting + 3)
        // The first mostWaitingReports + 1 SKYs go at the clock as it was; the rest wait for the next TPV.
        #expect(times.filter { $0 == 2 }.count == CaptureImporter.mostWaitingReports + 2)
        #expect(times.filter { $0 == 5 }.count == waiting - CaptureImporter.mostWaitingReports)
        #expect(times == times.sorted())
    }

    @Test func sigtermEndsALongImportWithin1SecondLeavingAValidCutCapture() throws {
        let binary = try #require(ExecutableTests.executable, "build the lodestar executable first (swift build --build-tests)")
        let folder = NSTemporaryDirectory() + "lodestar-import-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/long", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // 20 copies of a 2.5 MB log: minutes of work for a debug build, so 0.5 s in it is well under way.
        let name = "garmin-drive-reno-tahoe-2h43m.nmea"
        let once = try Fixtures.bytes(name)
        let long = folder + "/long/" + name
        #expect(FileManager.default.createFile(atPath: long, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: long))
        for _ in 0..<20 { handle.write(Data(once)) }
        try handle.close()

        let output = folder + "/cut.jsonl"
        let process = try ChildProcess(
            executable: binary, arguments: ["import", long, "-o", output],
            standardError: folder + "/err")
        sleepSeconds(0.5)
        try #require(process.isRunning, "the import ended before the signal")
        process.signal(SIGTERM)
        let signalled = monotonicSeconds()
        let status = try #require(process.waitForExit(timeout: 10), "import did not end on SIGTERM")
        let took = monotonicSeconds() - signalled
        #expect(took < 1, "import took \(took) s to end after SIGTERM")
        #expect(status & 0x7f == 0 && status >> 8 == 143, "raw wait status \(status)")
        let said = String(decoding: try readWholeFile(folder + "/err"), as: UTF8.self)
        #expect(said.contains("lodestar import: stopped by SIGTERM: \(output) holds the capture up to t="), "\(said)")
        #expect(said.contains(" s (cut)"), "\(said)")

        // A valid capture of whole lines, the start of the log's own import.
        let cut = try readWholeFile(output)
        #expect(cut.last == 0x0A)
        let contents = try CaptureReader.read(cut)
        #expect(contents.warnings.isEmpty)
        #expect(contents.lines.count > 10)
        let whole = try ReferenceImporter.capture(
            raw: once, decoded: try gpsdecode(Fixtures.path(name)), deviceName: name)
        let cutLines = cut.split(separator: 0x0A)
        let wholeLines = whole.split(separator: 0x0A)
        let compared = min(cutLines.count, wholeLines.count - 5)
        #expect(Array(cutLines.prefix(compared)) == Array(wholeLines.prefix(compared)))
        // The time said is the last line's, to the second.
        let saidT = said.split(separator: "t=").last.flatMap { Double($0.prefix { $0 != " " }) }
        let lastT = try #require(contents.lines.last).t
        #expect(saidT.map { abs($0 - lastT) <= 0.5 } == true, "\(said) against \(lastT)")
    }
}

/// The in-memory importer as it was before it streamed, kept as the reference (but for reading a TPV through
/// the JSON parser, see `tpv`); its epochs come
/// from the reference splitter (RawLogEpochSplitterTests keeps it in CaptureTests; this is its twin).
enum ReferenceImporter {
    struct TimedReport {
        var t: Double
        var text: ArraySlice<UInt8>
        var time: UTCTime?
        var hasPosition: Bool
    }

    static func capture(raw: [UInt8], decoded: [UInt8], deviceName: String) throws -> [UInt8] {
        let gpsdLines = timedReports(decoded, deviceName: deviceName)
        try #require(gpsdLines.contains(where: { $0.hasPosition }))
        let receiverLines = timedEpochs(RawLogEpochs(raw).epochs)
        var header = CaptureHeader(
            started: gpsdLines.first(where: { $0.time != nil })?.time, devicePath: deviceName,
            source: "import", notes: headerNotes(raw))
        header.deviceDriver = nil
        var output = CaptureLineEncoder.header(header)
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

    static func timedReports(_ decoded: [UInt8], deviceName: String) -> [TimedReport] {
        let stdinDevice = Array(#""device":"stdin""#.utf8)
        var renamed: [UInt8] = Array(#""device":"#.utf8)
        JSONWriter.appendQuoted(deviceName, to: &renamed)
        var reports: [TimedReport] = []
        var waiting: [Int] = []
        var clock = Clock()
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
                text = ArraySlice(Array(line[line.startIndex..<position.lowerBound]) + renamed + Array(line[position.upperBound...]))
            }
            let (isTPV, time, hasPosition) = tpv(text)
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

    /// Whether a report is a TPV, its receiver time and whether it has a position, read through the JSON
    /// parser: the oracle's own way, where the importer peeks at the text (JSONPeek).
    static func tpv(_ text: ArraySlice<UInt8>) -> (isTPV: Bool, time: UTCTime?, hasPosition: Bool) {
        guard let report = try? JSONParser.parse(Array(text)), case .string("TPV")? = report.value(at: "class") else {
            return (false, nil, false)
        }
        var time: UTCTime?
        if case .string(let iso8601)? = report.value(at: "time"), let parsed = UTCTime(iso8601: Array(iso8601.utf8)),
            parsed.isReceiverTime
        {
            time = parsed
        }
        var mode = 0.0
        if case .number(let number)? = report.value(at: "mode") { mode = number }
        return (true, time, mode >= 2 && report.value(at: "lat") != nil && report.value(at: "lon") != nil)
    }

    static func timedEpochs(_ epochs: [RawLogEpochs.Epoch]) -> [(t: Double, range: Range<Int>)] {
        var clock = Clock()
        var previous: Double?
        return epochs.map { epoch in
            if let time = epoch.receiverTime {
                let unwrapped = previous.map { $0 + RawLogEpochs.gap(from: $0, to: time) } ?? time
                previous = unwrapped
                _ = clock.advance(to: unwrapped)
            }
            return (clock.t, epoch.range)
        }
    }

    struct Clock {
        private(set) var t = 0.0
        private var last: Double?

        mutating func advance(to seconds: Double) -> Double {
            if let last {
                let delta = seconds - last
                if delta > 0 { t += delta <= 3600 ? delta : 1 }
            }
            last = seconds
            return t
        }
    }

    /// The oracle's own reading of the `#` header: the text's lines, trimmed, until the first that is not a
    /// comment; not the importer's byte loop again.
    static func headerNotes(_ raw: [UInt8]) -> [String] {
        var notes: [String] = []
        // "\r\n" is one Character, a newline, as "\n" is.
        let text = String(decoding: raw, as: UTF8.self)
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            guard line.hasPrefix("#"), notes.count < 100 else { break }
            var text = Substring(line.dropFirst())
            while text.first == " " { text = text.dropFirst() }
            while text.last == "\r" || text.last == " " { text = text.dropLast() }
            if !text.isEmpty { notes.append(String(text.utf8.prefix(500)) ?? "") }
        }
        return notes
    }

    static func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        let start = haystack.startIndex
        return Array(haystack).firstRange(of: needle).map { (start + $0.lowerBound)..<(start + $0.upperBound) }
    }
}
