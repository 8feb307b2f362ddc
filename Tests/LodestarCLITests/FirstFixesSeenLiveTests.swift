import Capture
import Foundation
import TestSupport
import Testing
@testable import LodestarCLI

/// `replay` of a capture with power control's `tx` and `event` lines: the times to first fix seen live.
@Suite struct FirstFixesSeenLiveTests {
    private static let fixture = "gpsd-mtk-mt3339.nmea"

    /// The fixture imported, written as is and with `extra` lines inserted after the capture lines at a
    /// quarter, a half and three quarters of it (each given the `t` of the line it follows).
    private struct Files {
        let folder: String
        let plain: String
        let augmented: String
        let started: Date
        let times: [Double]
        /// The file line number of the first line inserted at each place.
        let insertedLines: [Int]

        init(extra: [(Double) -> [String]]) throws {
            folder = try temporaryFolder("seen-live")
            let bytes = try RawLogImport.capture(
                path: Fixtures.path(FirstFixesSeenLiveTests.fixture),
                raw: try Fixtures.bytes(FirstFixesSeenLiveTests.fixture))
            let contents = try CaptureReader.read(bytes)
            let started = try #require(contents.header.started)
            self.started = Date(timeIntervalSince1970: Double(started.seconds) + Double(started.nanoseconds) / 1e9)
            var fileLines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .map(String.init)
            let anchors = extra.indices.map { contents.lines[contents.lines.count * ($0 + 1) / (extra.count + 1)] }
            times = anchors.map(\.t)
            var inserted: [Int] = []
            var added = 0
            for (anchor, lines) in zip(anchors, extra) {
                inserted.append(anchor.number + 1 + added)
                added += lines(anchor.t).count
            }
            insertedLines = inserted
            // From the end, so the earlier line numbers still hold.
            for (anchor, lines) in zip(anchors, extra).reversed() {
                fileLines.insert(contentsOf: lines(anchor.t), at: anchor.number)
            }
            plain = folder + "/plain.jsonl"
            augmented = folder + "/augmented.jsonl"
            try Data(bytes).write(to: URL(fileURLWithPath: plain))
            try Data(fileLines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: augmented))
        }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    private static func t(_ t: Double) -> String { String(format: "%.3f", t) }

    /// Three wakes (standby 2.1 s, off 31.5 s, standby 4 s) with their commands and other power events.
    private func makeFiles() throws -> Files {
        try Files(extra: [
            { t in
                [
                    #"{"t":\#(Self.t(t)),"tx":"JFBNVEsxNjEsMCoyOA0K"}"#,
                    #"{"t":\#(Self.t(t)),"event":{"kind":"regimeCommanded","regime":"standby","detail":"PMTK161"}}"#,
                    #"{"t":\#(Self.t(t)),"event":{"kind":"quiet","regime":"standby","seconds":0.4,"detail":"no output"}}"#,
                    #"{"t":\#(Self.t(t)),"tx":"DQo="}"#,
                    #"{"t":\#(Self.t(t)),"event":{"kind":"firstFixAfterWake","regime":"standby","seconds":2.1,"detail":"hot"}}"#,
                ]
            },
            { t in
                [
                    #"{"t":\#(Self.t(t)),"event":{"kind":"firstFixAfterWake","regime":"off","seconds":31.5,"detail":"warm"}}"#,
                    // Neither a time to first fix nor a kind this build knows: not listed.
                    #"{"t":\#(Self.t(t)),"event":{"kind":"somethingNewer","seconds":9}}"#,
                    #"{"t":\#(Self.t(t)),"event":{"kind":"firstFixAfterWake","detail":"no seconds measured"}}"#,
                ]
            },
            { t in
                [#"{"t":\#(Self.t(t)),"event":{"kind":"firstFixAfterWake","regime":"standby","seconds":4,"detail":"hot"}}"#]
            },
        ])
    }

    private func expectedSection(_ files: Files, prefix: String) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let wakes = zip(files.times, [("standby", "2.1"), ("off", "31.5"), ("standby", "4.0")]).map { t, wake in
            let time = formatter.string(from: files.started.addingTimeInterval(t))
            return "\(prefix)  +\(String(format: "%.1f", t)) s  \(time)  from \(wake.0)  \(wake.1) s\n"
        }
        return "\(prefix)times to first fix seen live: 3 wakes, median 4.0 s, max 31.5 s\n" + wakes.joined()
    }

    @Test func replayListsTheTimesToFirstFixSeenLiveAfterTheLocations() throws {
        let files = try makeFiles()
        defer { files.remove() }
        let plain = run(["replay", files.plain])
        let augmented = run(["replay", files.augmented])
        #expect(plain.code == 0 && augmented.code == 0, "\(plain.error)\(augmented.error)")
        #expect(!plain.output.contains("seen live"))
        #expect(augmented.output == plain.output + expectedSection(files, prefix: "# "))

        // Formats that are documents or machine-read lines keep their output; the summary goes to stderr.
        let plainJSONL = run(["replay", files.plain, "--format", "jsonl"])
        let augmentedJSONL = run(["replay", files.augmented, "--format", "jsonl"])
        #expect(augmentedJSONL.output == plainJSONL.output)
        #expect(plainJSONL.error.isEmpty)
        #expect(augmentedJSONL.error == "lodestar replay: times to first fix seen live: 3 wakes, median 4.0 s, max 31.5 s\n")

        // With a profile, after the simulated replay's own lines.
        let simulated = run(["replay", files.plain, "--profile", "car"])
        let simulatedAugmented = run(["replay", files.augmented, "--profile", "car"])
        #expect(simulatedAugmented.output == simulated.output + expectedSection(files, prefix: "# "))
    }

    @Test func evaluateListsThemInTheTableAndTheJSON() throws {
        let files = try makeFiles()
        defer { files.remove() }
        let table = run(["replay", files.plain, "--profile", "car", "--evaluate"])
        let augmentedTable = run(["replay", files.augmented, "--profile", "car", "--evaluate"])
        #expect(table.code == 0 && augmentedTable.code == 0)
        // The table names the file: compare with the augmented file's name in both.
        let renamed = table.output.replacingOccurrences(of: "plain.jsonl", with: "augmented.jsonl")
        #expect(augmentedTable.output == renamed + "\n" + expectedSection(files, prefix: ""))

        let json = run(["replay", files.plain, "--profile", "car", "--evaluate", "--json"])
        let augmentedJSON = run(["replay", files.augmented, "--profile", "car", "--evaluate", "--json"])
        #expect(!json.output.contains("firstFixesSeenLive"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(augmentedJSON.output.utf8)) as? [String: Any])
        let seenLive = try #require(object["firstFixesSeenLive"] as? [String: Any])
        #expect(seenLive["median"] as? Double == 4)
        #expect(seenLive["max"] as? Double == 31.5)
        let wakes = try #require(seenLive["wakes"] as? [[String: Any]])
        #expect(wakes.compactMap { $0["regime"] as? String } == ["standby", "off", "standby"])
        #expect(wakes.compactMap { $0["seconds"] as? Double } == [2.1, 31.5, 4])
        #expect(wakes.compactMap { $0["t"] as? Double } == files.times)
        #expect(wakes.allSatisfy { ($0["time"] as? String)?.hasSuffix("Z") == true })
        // Everything else is what the capture without the lines gives.
        let withoutListing = augmentedJSON.output.replacing(#/,"firstFixesSeenLive":\{.*\}\}/#, with: "}")
        #expect(withoutListing == json.output.replacingOccurrences(of: "plain.jsonl", with: "augmented.jsonl"))
    }

    @Test(arguments: [
        (#"{"t":T,"tx":"JFBNVEsxNjEsMCoyOA0"}"#, #""tx" is not base64 text"#),
        (#"{"t":T,"event":"firstFixAfterWake"}"#, #""event" is not a JSON object"#),
        (#"{"t":T,"event":{"kind":"firstFixAfterWake","seconds":"2.1"}}"#, #"the event's "seconds" is not a number"#),
    ])
    func aBadPowerControlLineIsRefusedWithItsLine(line: String, says: String) throws {
        let files = try Files(extra: [{ t in [line.replacingOccurrences(of: "T", with: Self.t(t))] }])
        defer { files.remove() }
        let replayed = run(["replay", files.augmented])
        #expect(replayed.code == 65)
        // Replay streams: what came before the bad line is printed, nothing after it.
        let before = run(["replay", files.plain, "--count", "1"])
        #expect(replayed.output.split(separator: "\n").count < run(["replay", files.plain]).output.split(separator: "\n").count)
        #expect(replayed.output.hasPrefix(before.output.split(separator: "\n").first.map(String.init) ?? "-"))
        #expect(replayed.error.hasPrefix("lodestar replay: \(files.augmented):\(files.insertedLines[0]): \(says)"), "\(replayed.error)")
    }
}
