import Capture
import Foundation
import GPSD
@testable import LodestarCLI
import Lodestar
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing


/// `record` and `watch` pointed at a port that is not gpsd: exit 69 naming host:port and what answered,
/// nothing recorded, no file created or claimed.
@Suite struct NotGPSDCommandTests {
    static let impostors: [(name: String, behaviour: ImpostorServer.Behaviour, said: String)] = [
        ("ssh", .greets(ImpostorServer.sshBanner), #"it answered "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n""#),
        ("nul", .greets([UInt8](repeating: 0, count: 8)), #"it answered "\0\0\0\0\0\0\0\0""#),
        ("silent", .silent, "sent nothing within 3 s"),
    ]

    @Test(arguments: impostors.map(\.name))
    func recordExits69AndCreatesNoFile(impostor name: String) throws {
        let impostor = try #require(Self.impostors.first { $0.name == name })
        let server = try ImpostorServer(impostor.behaviour)
        defer { server.stop() }
        let folder = try temporaryFolder("record")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/run.capture"
        let started = monotonicSeconds()
        let result = run(["record", file, "--raw", "--gpsd", "127.0.0.1:" + String(server.port)])
        #expect(result.code == 69, "\(result.error)")
        #expect(monotonicSeconds() - started < 5, "told within the banner's 3 s")
        #expect(result.error.contains("127.0.0.1:\(server.port) is not gpsd"), "\(result.error)")
        #expect(result.error.contains(impostor.said), "\(result.error)")
        #expect(!result.error.contains("recording gpsd"), "claims a recording: \(result.error)")
        #expect(result.error.contains("\(file) not created"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test(arguments: impostors.map(\.name))
    func watchExits69NamingWhatAnswered(impostor name: String) throws {
        let impostor = try #require(Self.impostors.first { $0.name == name })
        let server = try ImpostorServer(impostor.behaviour)
        defer { server.stop() }
        let result = run(["watch", "--gpsd", "127.0.0.1:" + String(server.port)])
        #expect(result.code == 69, "\(result.error)")
        #expect(result.error.contains("127.0.0.1:\(server.port) is not gpsd"), "\(result.error)")
        #expect(result.error.contains(impostor.said), "\(result.error)")
        #expect(result.output.isEmpty)
    }
}

@Suite struct RecordOptionTests {
    @Test(arguments: ["", "0", "4095", "1X", "M", "-5M", "1.5M", "99999999999999999999G"])
    func aBadMaximumSizeIsAUsageError(size: String) {
        let result = run(["record", "/nonexistent/run.capture", "--max-size", size, "--gpsd", "localhost:1"])
        #expect(result.code == 64, "\(size): \(result.error)")
        #expect(result.error.contains("--max-size"), "\(result.error)")
    }

    @Test func sizesTakeBinaryUnits() throws {
        let cases: [(String, Int)] = [("4096", 4096), ("8K", 8192), ("50M", 50 << 20), ("1G", 1 << 30), ("2MB", 2 << 20)]
        for (text, bytes) in cases {
            let parsed = try RecordCommand.declaration.parse(["/tmp/x", "--max-size", text])
            #expect(try RecordCommand.maximumSize(parsed) == bytes, "\(text)")
        }
    }
}

/// The text value of the first `"key":"…"` in a gpsd line (gpsd escapes no quote in the keys read here).
private func stringValue(_ key: String, in text: String) -> String? {
    guard let start = text.range(of: "\"\(key)\":\"") else { return nil }
    let rest = text[start.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
}

/// The gpsd objects of a capture, as text, in order.
private func gpsdTexts(_ contents: CaptureContents) -> [String] {
    contents.lines.compactMap { line in if case .gpsd(let range) = line.payload { contents.text(range) } else { nil } }
}

/// `record --max-size`: several files, each a capture of its own that reads and replays alone, and together
/// every line a recording without rotation kept, none lost or twice.
@Suite(.serialized, .tags(.gpsd)) struct RecordRotationCommandTests {
    @Test func rotationBySizeLosesAndRepeatsNothing() throws {
        let bed = try GPSDTestBed.readOnly()
        let folder = try temporaryFolder("record")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rotating = InProcessCommand([
            "record", folder + "/run.capture", "--max-size", "32K", "--gpsd", "127.0.0.1:" + bed.port,
        ])
        let whole = InProcessCommand(["record", folder + "/whole.capture", "--gpsd", "127.0.0.1:" + bed.port])
        try waitUntil("both records to start") {
            rotating.standardError.text.contains("recording gpsd") && whole.standardError.text.contains("recording gpsd")
        }
        #expect(bed.feed(try Fixtures.bytes("gpsd-ublox-neo-m9n.nmea"), speed: 20).completed)
        try bed.gpsd.removeDevice(bed.terminal.devicePath)
        try waitUntil("both to record the device closing") {
            [folder + "/run.capture", folder + "/whole.capture"].allSatisfy { bed.text($0).contains(#""activated":0"#) }
        }
        #expect(try rotating.stop() == 0, "\(rotating.standardError.text)")
        #expect(try whole.stop() == 0, "\(whole.standardError.text)")
        #expect(rotating.standardError.text.contains("earlier parts beside it"), "\(rotating.standardError.text)")

        let files = CaptureRecorder.rotatedFiles(of: folder + "/run.capture") + [folder + "/run.capture"]
        // The M9N's epochs are about 8 KiB of gpsd's JSON (two SKY reports of 3 KiB each): about four a file.
        #expect(files.count >= 5, "\(files)")
        var joined: [String] = []
        for (index, path) in files.enumerated() {
            let bytes = try readWholeFile(path)
            #expect(bytes.count <= 32 * 1024, "\(path) is \(bytes.count) bytes")
            let contents = try CaptureReader.read(bytes)
            #expect(contents.warnings.isEmpty, "\(path)")
            #expect(contents.header.gpsd != nil && contents.header.source == "live", "\(path)")
            var texts = gpsdTexts(contents)
            // Each file opens with gpsd's set-up lines; after the first, they are copies to make it whole.
            let classes = texts.prefix(3).map { stringValue("class", in: $0) }
            #expect(classes == ["VERSION", "DEVICES", "WATCH"], "\(path): \(texts.prefix(3))")
            if index > 0 { texts.removeFirst(min(3, texts.count)) }
            joined += texts
            // Each part replays alone (the last may hold no fix, only the device closing).
            if index < files.count - 1 {
                var fixes = 0
                CaptureReplayer(contents).run(onEvent: { _, event in if case .fix(let fix) = event, fix.hasPosition { fixes += 1 } })
                #expect(fixes > 0, "\(path) replays alone")
            }
        }
        let reference = gpsdTexts(try CaptureReader.read(try readWholeFile(folder + "/whole.capture")))
        #expect(reference.count > 100)
        #expect(joined == reference, "the parts hold \(joined.count) lines, the whole recording \(reference.count)")
    }
}

/// gpsd killed and started again under `record --raw`, end to end: every fix gpsd reports after a restart
/// has its receiver bytes in the capture (which is what makes `replay --through-gpsd` give the fixes `watch`
/// printed live). The race itself (the raw watch's back-off ending after the JSON watch's) is pinned down
/// in RawByteWatchTests, where the moment gpsd comes back is chosen.
@Suite(.serialized, .tags(.gpsd)) struct RecordRawAfterRestartTests {
    /// The `hhmmss` of every NMEA RMC and GGA sentence in `text`.
    static func sentenceTimes(_ text: String) -> Set<String> {
        var times = Set<String>()
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > 2, fields[0].hasSuffix("RMC") || fields[0].hasSuffix("GGA"), fields[1].count >= 6 else {
                continue
            }
            times.insert(String(fields[1].prefix(6)))
        }
        return times
    }

    /// `hhmmss` of a TPV's time with a position; nil for other lines.
    static func fixTime(_ text: String) -> String? {
        guard stringValue("class", in: text) == "TPV", text.contains(#""lat":"#),
            let time = stringValue("time", in: text), let tee = time.firstIndex(of: "T")
        else { return nil }
        return time[time.index(after: tee)...].filter { $0.isNumber }.prefix(6).description
    }

    /// The receiver keeps talking (fed at 10x on its own thread); each gpsd is gone long enough for the
    /// reconnection back-off to reach its 2 s, and is given the device the moment `record` is watching it
    /// again, as the restart tests of the location manager do (GPSDRestartTests).
    @Test func rawBytesResumeWithTheReportsAfterEachRestart() throws {
        let bed = try GPSDTestBed.readOnly()
        var gpsd = bed.gpsd
        defer { gpsd.stop() }
        let folder = try temporaryFolder("record")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/run.capture"
        let record = InProcessCommand(["record", file, "--raw", "--gpsd", "127.0.0.1:" + bed.port])
        try waitUntil("record to start") { record.standardError.text.contains("recording gpsd") }

        let log = RawLogEpochs(try Fixtures.bytes("munich-urban-stopgo-31m.nmea"))
        let terminal = bed.terminal
        let feed = BackgroundFeed(settle: 0)
        feed.start { shouldStop in _ = CaptureFeeder(speed: 10).feed(log, to: terminal, shouldStop: shouldStop) }
        defer {
            feed.stop()
            feed.waitUntilDone()
        }
        let restarts = 2
        for restart in 1...restarts {
            sleepSeconds(3)
            gpsd.kill()
            try waitUntil("the loss, \(restart)") {
                record.standardError.text.components(separatedBy: "went away").count - 1 == restart
            }
            // A different point of the reconnection back-off (0.1 s doubling to 2 s) each time.
            sleepSeconds(1 + 1.7 * Double(restart))
            gpsd = try gpsd.successor()
            try waitUntil("gpsd back, \(restart)") {
                record.standardError.text.components(separatedBy: "gpsd at 127.0.0.1:\(bed.port) back").count - 1 == restart
            }
            try gpsd.addDevice(terminal.devicePath)
        }
        sleepSeconds(3)
        feed.stop()
        feed.waitUntilDone()
        sleepSeconds(0.5)
        #expect(try record.stop() == 0, "\(record.standardError.text)")

        // The capture split where each gpsd starts (its VERSION banner): each piece's fixes against its rx bytes.
        let contents = try CaptureReader.read(try readWholeFile(file))
        var pieces: [(fixes: [(t: Double, time: String)], firstRx: Double?, received: String)] = []
        for line in contents.lines {
            switch line.payload {
            case .gpsd(let range):
                let text = contents.text(range)
                if stringValue("class", in: text) == "VERSION" { pieces.append(([], nil, "")) }
                if let time = Self.fixTime(text), !pieces.isEmpty { pieces[pieces.count - 1].fixes.append((line.t, time)) }
            case .received(let range):
                guard !pieces.isEmpty else { break }
                let bytes = String(decoding: contents.rawBytes(range), as: UTF8.self)
                pieces[pieces.count - 1].received += bytes
                if pieces[pieces.count - 1].firstRx == nil { pieces[pieces.count - 1].firstRx = line.t }
            default:
                break
            }
        }
        #expect(pieces.count == restarts + 1, "one piece per gpsd")
        for (index, piece) in pieces.enumerated() {
            #expect(piece.fixes.count > 10, "piece \(index) has \(piece.fixes.count) fixes")
            let received = Self.sentenceTimes(piece.received)
            let missing = piece.fixes.filter { !received.contains($0.time) }
            // The raw watch connects a moment after the JSON one: at most the first epoch may fall between.
            let timing = "first fix at t=\(piece.fixes.first?.t ?? -1), first rx at t=\(piece.firstRx ?? -1)"
            #expect(
                missing.isEmpty || (missing.count == 1 && missing.first?.t == piece.fixes.first?.t),
                "gpsd \(index) reported fixes whose bytes the raw watch missed (\(timing)): \(missing.map(\.time))")
        }
    }
}
