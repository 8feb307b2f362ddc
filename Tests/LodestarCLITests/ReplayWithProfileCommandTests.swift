import Foundation
import TestSupport
import Testing
@testable import LodestarCLI

/// `lodestar replay --profile` as a user runs it.
@Suite struct ReplayWithProfileCommandTests {
    @Test func theCarProfileShowsTheReceiverGoingDownAtStopsAndComingBackWithReasons() throws {
        let drive = Fixtures.path("garmin-drive-reno-tahoe-2h43m.nmea")
        let first = run(["replay", drive, "--profile", "car", "--format", "jsonl"])
        #expect(first.code == 0, "\(first.error)")
        let objects = try first.output.split(whereSeparator: \.isNewline).map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let types = Set(objects.compactMap { $0["type"] as? String })
        #expect(types == ["location", "regime", "event"])
        let events = objects.filter { $0["type"] as? String == "event" }
        let paused = events.filter { $0["kind"] as? String == "paused" }
        let resumed = events.filter { $0["kind"] as? String == "resumed" }
        #expect(paused.count >= 5 && resumed.count >= 5, "\(paused.count) pauses, \(resumed.count) resumes")
        #expect(paused.allSatisfy { ($0["detail"] as? String)?.hasPrefix("stationary") == true })
        #expect(resumed.allSatisfy { ($0["detail"] as? String)?.hasPrefix("probe fix") == true })
        // Each pause takes the receiver down, with the same reason, at the same t.
        let regimes = objects.filter { $0["type"] as? String == "regime" }
        for pause in paused {
            #expect(regimes.contains { $0["t"] as? Double == pause["t"] as? Double && $0["regime"] as? String == "off" })
        }
        // In time order, and the same bytes every time.
        let times = objects.compactMap { $0["t"] as? Double }
        #expect(times == times.sorted())
        #expect(run(["replay", drive, "--profile", "car", "--format", "jsonl"]).output == first.output)
        #expect(first.error.contains("profile car: receiver down"))
        // A reader can follow every line on both clocks: t since the start, and a UTC timestamp.
        #expect(objects.allSatisfy { $0["t"] is Double && $0["timestamp"] is String })
        // The first status line says the receiver is simulated, and on which model.
        let firstStatus = first.error.split(separator: "\n").first.map(String.init) ?? ""
        #expect(firstStatus.hasPrefix("lodestar replay: profile car, receiver simulated (no receiver is used) on the ublox8 model"), "\(firstStatus)")
    }

    @Test func aMalformedProfileExits78NamingTheKeyPath() throws {
        let folder = try temporaryFolder("profile")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/bad.json"
        try #"{"name":"bad","policy":{"stationary":{"automotiveNavigation":{"window":"long"}}}}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        let drive = Fixtures.path("gpsd-mtk-mt3339.nmea")
        let result = run(["replay", drive, "--profile", file])
        #expect(result.code == 78)
        #expect(result.error.contains("policy.stationary.automotiveNavigation.window"), "\(result.error)")
        #expect(result.output.isEmpty)
        #expect(run(["replay", drive, "--profile", "no-such-profile"]).code == 66)
        #expect(run(["replay", drive, "--profile", "car", "--through-gpsd"]).code == 64)
    }
}
