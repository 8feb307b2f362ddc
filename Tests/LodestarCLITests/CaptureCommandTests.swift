import SystemInterface
import ReceiverEmulation
import TestSupport
import Capture
import Foundation
import GPSD
import GPSModel
import Lodestar
import LodestarCLI
import Testing


/// A private gpsd that writes nothing to its pty (so what it reports is only what the test feeds) and a
/// fresh folder for the recording, which the caller removes.
private func jsonlPositions(_ text: String) throws -> [EpochPosition] {
    try EpochPosition.fromLodestar(text.split(whereSeparator: \.isNewline).map(String.init))
}

/// What gpsd's offline decoder makes of a raw log.
private func gpsdecodePositions(_ path: String) throws -> [EpochPosition] {
    EpochPosition.fromGpspipe(String(decoding: try gpsdecode(path), as: UTF8.self))
}

/// Import and replay of every capture in the repo, against gpsdecode's own decoding.
@Suite struct ImportReplayTests {
    @Test(arguments: Fixtures.captureNames)
    func importGivesOneFixPerEpochWithGpsdecodesCoordinates(capture: String) throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = Fixtures.path(capture)
        let imported = run(["import", log, "-o", folder + "/capture.jsonl"])
        #expect(imported.code == 0, "\(imported.error)")
        let replayed = run(["replay", folder + "/capture.jsonl", "--format", "jsonl"])
        #expect(replayed.code == 0, "\(replayed.error)")
        samePositions(try jsonlPositions(replayed.output), try gpsdecodePositions(log), capture)
        // A raw log replays the same when imported on the fly.
        let direct = run(["replay", log, "--format", "jsonl"])
        #expect(direct.output == replayed.output)
    }

    @Test func importedCaptureTimesRecordsFromTheReceiversClock() throws {
        // The Reno drive logs at 0.5 Hz with a 13-minute gap: t follows the receiver's timestamps.
        let log = Fixtures.path("garmin-drive-reno-tahoe-2h43m.nmea")
        let contents = try CaptureReader.read(try RawLogImport.capture(path: log, raw: try Fixtures.bytes(
            "garmin-drive-reno-tahoe-2h43m.nmea")))
        var gaps: [Double] = []
        var previous: Double?
        for line in contents.lines {
            guard case .gpsd(let range) = line.payload, contents.text(range).contains(#""class":"TPV""#) else { continue }
            if let previous { gaps.append(line.t - previous) }
            previous = line.t
        }
        #expect(gaps.allSatisfy { $0 >= 0 })
        #expect(gaps.filter { $0 == 2 }.count > gaps.count * 9 / 10, "0.5 Hz epochs are 2 s apart")
        #expect(gaps.contains { $0 > 600 && $0 < 900 }, "the logging gap is kept")
        #expect(contents.header.source == "import")
    }

    @Test func gpsBabelLoadsEveryReplayedLocation() throws {
        let log = Fixtures.path("munich-urban-stopgo-31m.nmea")
        let jsonl = run(["replay", log, "--format", "jsonl"])
        let gpx = run(["replay", log, "--format", "gpx"])
        #expect(gpx.code == 0)
        let printed = jsonl.output.split(whereSeparator: \.isNewline).count
        #expect(printed > 1000)
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try gpx.output.write(toFile: folder + "/track.gpx", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(
            fileURLWithPath: try #require(findExecutable("gpsbabel"), "gpsbabel is not installed: run scripts/setup"))
        process.arguments = ["-t", "-i", "gpx", "-f", folder + "/track.gpx", "-o", "unicsv", "-F", "-"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let rows = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).count - 1
        #expect(rows == printed)
    }
}

/// Through a real gpsd: the capture's raw bytes into a private gpsd and back through the live path.
@Suite(.serialized, .tags(.gpsd)) struct ReplayThroughGPSDTests {
    @Test(arguments: [
        "gpsd-sirf2-haicom305n-walk.nmea", "gpsd-quectel-eg25g-moving.nmea", "gpsd-ublox-neo-m9n.nmea",
        "gpsd-unicore-um621-fixloss.nmea", "ublox-ubx-cartrip-15m.ubx", "garmin-geko201-regensburg-drive-26m.nmea",
    ])
    func throughGPSDGivesTheSameFixesAsStraightIntoThePipeline(capture: String) throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = Fixtures.path(capture)
        #expect(run(["import", log, "-o", folder + "/c.jsonl"]).code == 0)
        let direct = run(["replay", folder + "/c.jsonl", "--format", "jsonl"])
        let throughGPSD = run(["replay", folder + "/c.jsonl", "--format", "jsonl", "--through-gpsd"])
        #expect(throughGPSD.code == 0, "\(throughGPSD.error)")
        // An imported capture's reports are gpsdecode's; gpsd itself also reports the log's first fixed epoch,
        // which gpsdecode's batch decoding leaves without a time (before the first RMC gives the date). That
        // one leading fix is the only difference allowed, and only at the start.
        var viaGPSD = try jsonlPositions(throughGPSD.output)
        let straight = try jsonlPositions(direct.output)
        if viaGPSD.count == straight.count + 1, let first = viaGPSD.first, let next = straight.first, first.time < next.time {
            viaGPSD.removeFirst()
        }
        samePositions(viaGPSD, straight, capture)
    }
}

/// `record` against the test gpsd while `watch` watches it too; the recording must replay to what was
/// printed live.
@Suite(.serialized, .tags(.gpsd)) struct RecordRoundTripTests {
    @Test(arguments: Fixtures.captureNames)
    func recordingReplaysToWhatWatchPrintedLive(capture: String) throws {
        let bed = try GPSDTestBed.readOnly()
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/run.jsonl"
        let record = InProcessCommand(["record", file, "--gpsd", "127.0.0.1:" + bed.port, "--raw", "--note", "test"])
        let watch = InProcessCommand(["watch", "--gpsd", "127.0.0.1:" + bed.port, "--format", "jsonl"])
        try waitUntil("record to start") { record.standardError.text.contains("recording gpsd") }
        try waitUntil("watch to start") { watch.standardError.text.contains("watching gpsd") }
        // gpsd drops reports for a client whose socket is full (throttled_write): on a loaded CI machine both
        // readers lost hundreds of fixes of the 2 h 43 min drive fed at full speed. The feed is held back while
        // either lags (`feedWithoutDrops`), and that drive still goes at 500x (22 s).
        let speed: Double? = capture == "garmin-drive-reno-tahoe-2h43m.nmea" ? 500 : nil
        #expect(bed.feedWithoutDrops(try Fixtures.bytes(capture), speed: speed).completed)
        try bed.gpsd.removeDevice(bed.terminal.devicePath)
        try waitUntil("watch to see the device close", timeout: 60) {
            watch.standardError.text.contains("\(bed.terminal.devicePath) closed")
        }
        // The raw watch reads on its own connection; give it a moment to drain.
        sleepSeconds(0.5)
        #expect(try record.stop() == 0, "\(record.standardError.text)")
        #expect(try watch.stop() == 0)

        let live = try jsonlPositions(watch.standardOutput.text)
        let contents = try CaptureReader.read(try readWholeFile(file))
        #expect(contents.header.source == "live")
        #expect(contents.header.gpsd != nil)
        #expect(contents.header.notes == ["test"])
        #expect(contents.receivedLineCount > 0, "--raw kept the receiver's bytes")

        let replayed = run(["replay", file, "--format", "jsonl"])
        if live.isEmpty {
            // The cold-boot log gives gpsd no fix after the harness's primer (see WatchAgainstGpspipeTests):
            // its recording replays to the same nothing, and says so.
            #expect(capture == "gpsd-se4100l-coldboot-badclock.nmea")
            #expect(replayed.code == 65 && replayed.error.contains("no position fix"), "\(replayed.error)")
            return
        }
        #expect(replayed.code == 0, "\(replayed.error)")
        samePositions(try jsonlPositions(replayed.output), live, "\(capture) replayed")
        let full = try EpochPosition.fromLodestar(
            replayed.output.split(whereSeparator: \.isNewline).map(String.init))
        #expect(full.count == live.count, "watch said: \(watch.standardError.text)")

        // The raw bytes the recording kept are what the receiver sent: through gpsd again, the same fixes.
        let again = run(["replay", file, "--format", "jsonl", "--through-gpsd"])
        #expect(again.code == 0, "\(again.error)")
        samePositions(try jsonlPositions(again.output), live, "\(capture) raw bytes through gpsd")
    }

    @Test func anExistingFileIsNotOverwrittenWithoutForce() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "keep me\n".write(toFile: folder + "/x", atomically: true, encoding: .utf8)
        let result = run(["record", folder + "/x", "--gpsd", "localhost:1"])
        #expect(result.code == 73)
        #expect(result.error.contains("exists"))
        #expect(try String(contentsOfFile: folder + "/x", encoding: .utf8) == "keep me\n")
        let imported = run([
            "import", Fixtures.path("gpsd-mtk-mt3339.nmea"), "-o", folder + "/x",
        ])
        #expect(imported.code == 73)
        #expect(imported.error.contains("--force"))
    }

    @Test func gpsdNotThereLeavesNoFile() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let port = String(try freeLoopbackPort())
        let result = run(["record", folder + "/run.jsonl", "--gpsd", "127.0.0.1:" + port])
        #expect(result.code == 69)
        #expect(result.error.contains("127.0.0.1:\(port)"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/run.jsonl"))
    }

    /// A full disk (here a file-size limit, which fails writes the same way) stops the recording with a
    /// message, exit 74, and every line written before it replays.
    @Test func aFullDiskStopsRecordingAndKeepsWhatWasWritten() throws {
        let binary = try #require(ExecutableTests.executable, "build the lodestar executable first")
        let bed = try GPSDTestBed.readOnly()
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/run.jsonl"
        // ulimit -f counts 1024-byte blocks: 16 KiB is a few dozen gpsd lines.
        let record = try ChildProcess(
            executable: "/bin/bash",
            arguments: ["-c", "ulimit -f 16; exec \"$0\" record \"$1\" --gpsd \"127.0.0.1:$2\"", binary, file, bed.port],
            standardOutput: folder + "/out", standardError: folder + "/err")
        try waitUntil("record to start") { bed.text(folder + "/err").contains("recording gpsd") }
        _ = bed.feed(try Fixtures.bytes("gpsd-ublox-neo-m9n.nmea"))
        let status = try #require(record.waitForExit(timeout: 30), "record did not stop at the limit")
        #expect(status >> 8 == 74, "exit status \(status >> 8): \(bed.text(folder + "/err"))")
        let message = bed.text(folder + "/err")
        #expect(message.contains(file) && message.contains("File too large"), "\(message)")
        let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        #expect(size <= 16 * 1024)
        let replayed = run(["replay", file, "--format", "jsonl"])
        #expect(replayed.code == 0, "\(replayed.error)")
        #expect(!replayed.output.isEmpty, "the lines before the failure replay")
    }
}

/// Every bad input `replay` must reject: the exit code and a message saying what and where.
@Suite struct ReplayBadInputTests {
    private func capture(_ folder: String, _ lines: [String]) throws -> String {
        let path = folder + "/c.jsonl"
        try lines.joined().write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private static let header = #"{"lodestar":"capture","version":1}"# + "\n"
    private static let tpv = #"{"t":1.000,"gpsd":{"class":"TPV","device":"d","mode":2,"time":"2026-11-30T03:22:01.000Z","lat":52.1,"lon":4.3}}"# + "\n"
    private static let tpv2 = #"{"t":2.000,"gpsd":{"class":"TPV","device":"d","mode":2,"time":"2026-11-30T03:22:02.000Z","lat":52.2,"lon":4.3}}"# + "\n"

    @Test func aTornFinalLineWarnsAndTheRestReplays() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try capture(folder, [Self.header, Self.tpv, Self.tpv2, #"{"t":3.000,"gpsd":{"class":"TPV","dev"#])
        let result = run(["replay", path, "--format", "jsonl"])
        #expect(result.code == 0)
        #expect(result.error.contains("warning: \(path):4: torn final line"))
        #expect(result.output.split(whereSeparator: \.isNewline).count == 2)
    }

    /// A real capture rewritten as Python's json module writes it (a space after each `:` and `,`) replays
    /// the same locations as the compact one, and one such line appended to a compact capture is understood.
    @Test func aSpacedCaptureReplaysLikeTheCompactOne() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let compact = folder + "/compact.capture"
        #expect(run(["import", Fixtures.path("gpsd-mtk-mt3339.nmea"), "-o", compact]).code == 0)
        let lines = try String(contentsOfFile: compact, encoding: .utf8).split(separator: "\n").map(String.init)
        func spaced(_ line: String) throws -> String {
            let text = spacedJSON(line)
            #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
            return text
        }
        let spacedPath = folder + "/spaced.capture"
        try (lines.map(spaced).joined(separator: "\n") + "\n").write(toFile: spacedPath, atomically: true, encoding: .utf8)
        let expected = run(["replay", compact, "--format", "jsonl"])
        #expect(expected.code == 0)
        #expect(expected.output.split(separator: "\n").count > 10)
        let replayed = run(["replay", spacedPath, "--format", "jsonl"])
        #expect(replayed.code == 0, "\(replayed.error)")
        #expect(replayed.output == expected.output)
        #expect(!replayed.error.contains("warning"), "\(replayed.error)")

        // The last TPV line spaced, after the compact rest.
        let lastTPV = try #require(lines.lastIndex { $0.contains(#""class":"TPV""#) })
        var mixed = lines
        mixed[lastTPV] = try spaced(lines[lastTPV])
        let mixedPath = folder + "/mixed.capture"
        try (mixed.joined(separator: "\n") + "\n").write(toFile: mixedPath, atomically: true, encoding: .utf8)
        let mixedReplay = run(["replay", mixedPath, "--format", "jsonl"])
        #expect(mixedReplay.output == expected.output)
        #expect(mixedReplay.error.isEmpty, "\(mixedReplay.error)")
    }

    /// A line that is valid JSON but carries nothing this lodestar reads is a warning naming FILE:LINE.
    @Test func aValidButUnknownLineWarnsWithFileAndLine() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try capture(folder, [Self.header, Self.tpv, #"{"t": 1.5, "gspd": {"class": "TPV"}}"# + "\n", Self.tpv2])
        let result = run(["replay", path, "--format", "jsonl"])
        #expect(result.code == 0)
        #expect(result.error.contains("lodestar replay: warning: \(path):3: skipped: a JSON object with none of the keys"), "\(result.error)")
        #expect(result.output.split(whereSeparator: \.isNewline).count == 2)
    }

    @Test func aMalformedLineElsewhereExits65WithFileAndLine() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try capture(folder, [Self.header, Self.tpv, "{\"t\":1.5,\"gpsd\":{\"class\":\"SKY\"\n", Self.tpv2])
        let result = run(["replay", path])
        #expect(result.code == 65)
        #expect(result.error.contains("\(path):3: not a valid JSON object"))
        #expect(result.output.isEmpty, "nothing is printed from a capture that is not valid")
    }

    @Test func anUnknownVersionExits65() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try capture(folder, [#"{"lodestar":"capture","version":7}"# + "\n", Self.tpv])
        let result = run(["replay", path])
        #expect(result.code == 65)
        #expect(result.error.contains("\(path):1: capture version 7"))
    }

    @Test func aMissingFileExits66() {
        let result = run(["replay", "/nonexistent/capture.jsonl"])
        #expect(result.code == 66)
        #expect(result.error.contains("/nonexistent/capture.jsonl: No such file or directory"))
    }

    @Test func anEmptyFileExits65() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try capture(folder, [])
        let result = run(["replay", path])
        #expect(result.code == 65)
        #expect(result.error.contains("\(path) is empty"))
    }

    @Test func aRawLogWithNoFixExits65() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Satellites in view but never a fix: RMC void, GGA quality 0.
        let path = folder + "/nofix.nmea"
        try "$GPRMC,235234,V,,,,,,,250905,,,N*78\r\n$GPGGA,235234,,,,,0,00,,,M,,M,,*60\r\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let result = run(["replay", path])
        #expect(result.code == 65)
        #expect(result.error.contains("no position fix"), "\(result.error)")
        let imported = run(["import", path, "-o", folder + "/out.jsonl"])
        #expect(imported.code == 65)
        #expect(!FileManager.default.fileExists(atPath: folder + "/out.jsonl"))
    }

    /// GGA alone carries a time of day but no date: gpsd decodes positions without a time, which would all be
    /// at t=0. Refused, naming what is missing.
    @Test func aRawLogWithPositionsButNoTimeExits65() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/gga.nmea"
        try (0..<5).map { "$GPGGA,16574\($0),4901.5940,N,01203.9163,E,1,07,1.0,336.7,M,46.6,M,,*" }
            .map { line -> String in
                let body = line.dropFirst().dropLast()
                let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
                return line + String(format: "%02X\r\n", sum)
            }
            .joined().write(toFile: path, atomically: true, encoding: .utf8)
        for arguments in [["replay", path], ["import", path, "-o", folder + "/out.jsonl"]] {
            let result = run(arguments)
            #expect(result.code == 65, "\(arguments)")
            #expect(result.error.contains("the log has positions but no time"), "\(result.error)")
            #expect(result.error.contains("GGA but no RMC or ZDA"), "\(result.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/out.jsonl"))
    }

    /// A capture recorded from a receiver sending GGA alone: positions, none with a time. Each way of
    /// replaying it says so, rather than that the receiver never had a fix (or nothing at all).
    @Test func aCaptureOfPositionsWithoutATimeExits65() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let untimed = (1...3).map { #"{"t":\#($0).000,"gpsd":{"class":"TPV","device":"d","mode":3,"lat":52.1,"lon":4.3}}"# + "\n" }
        let path = try capture(folder, [Self.header] + untimed)
        for extra in [[], ["--profile", "car"], ["--profile", "car", "--evaluate"]] {
            let result = run(["replay", path] + extra)
            #expect(result.code == 65, "\(extra)")
            #expect(result.error.contains("has 3 positions but none with a time"), "\(extra): \(result.error)")
        }
    }

    @Test func aCaptureWithoutRawBytesCannotGoThroughGPSD() throws {
        let folder = try temporaryFolder("capture")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try capture(folder, [Self.header, Self.tpv, Self.tpv2])
        let result = run(["replay", path, "--through-gpsd"])
        #expect(result.code == 65)
        #expect(result.error.contains("no receiver bytes"))
    }
}

/// The reader and the replay never crash, whatever the bytes: random bytes, random truncations and random
/// line swaps of a real capture. Seeded, so a failure reproduces.
@Suite struct CaptureFuzzTests {
    /// Reads and, when the read succeeds, replays: either outcome is fine, a crash is not.
    private func survive(_ bytes: [UInt8]) -> Bool {
        guard let contents = try? CaptureReader.read(bytes) else { return false }
        var events = 0
        CaptureReplayer(contents).run(onEvent: { _, _ in events += 1 })
        return true
    }

    @Test func randomDamageNeverCrashesTheReader() throws {
        let log = Fixtures.path("gpsd-quectel-eg25g-moving.nmea")
        let original = try RawLogImport.capture(path: log, raw: try Fixtures.bytes("gpsd-quectel-eg25g-moving.nmea"))
        #expect(survive(original))
        var random = SplitMix64(seed: 20_261_130)
        var lines = original.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        var read = 0
        for round in 0..<300 {
            var damaged: [UInt8]
            switch round % 3 {
            case 0:
                damaged = (0..<Int.random(in: 1...4096, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if round % 2 == 0 { damaged = Array(#"{"lodestar":"capture","version":1}"#.utf8) + [0x0A] + damaged }
            case 1:
                damaged = Array(original.prefix(Int.random(in: 0...original.count, using: &random)))
                // Flip a few bytes too.
                for _ in 0..<Int.random(in: 0...3, using: &random) where !damaged.isEmpty {
                    damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            default:
                let first = Int.random(in: 0..<lines.count, using: &random)
                let second = Int.random(in: 0..<lines.count, using: &random)
                lines.swapAt(first, second)
                damaged = Array(lines.joined(separator: [0x0A]))
            }
            if survive(damaged) { read += 1 }
        }
        // Some damage leaves a readable capture (a truncation at a line end), most does not.
        #expect(read > 0 && read < 300)
    }
}
