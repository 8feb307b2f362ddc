import Foundation
import Lodestar
import TestSupport
import Testing

@testable import LodestarCLI

/// Absurd times in a capture, holes in it, and options that only some modes take: each refused with its
/// reason or honoured, never ignored, and never a hang.
@Suite struct ReplayHardeningTests {
    /// A short capture (the first 600 lines of the Munich drive, imported) with `edit` applied to its lines.
    static func capture(in folder: String, _ edit: (inout [String]) -> Void = { _ in }) throws -> String {
        let raw = try String(contentsOfFile: Fixtures.path("munich-urban-stopgo-31m.nmea"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).prefix(3_000).joined(separator: "\n")
        try (raw + "\n").write(toFile: folder + "/base.nmea", atomically: true, encoding: .utf8)
        let (code, _, error) = run(["import", folder + "/base.nmea", "-o", folder + "/base.jsonl", "--force"])
        #expect(code == 0, "\(error)")
        var lines = try String(contentsOfFile: folder + "/base.jsonl", encoding: .utf8).split(separator: "\n")
            .map(String.init)
        edit(&lines)
        let path = folder + "/edited.jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func withFolder(_ body: (String) throws -> Void) throws {
        let folder = try temporaryFolder("hardening")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    static func settingT(_ line: String, _ t: String) -> String {
        guard let comma = line.firstIndex(of: ",") else { return line }
        return "{\"t\":" + t + String(line[comma...])
    }

    /// `t` and the receiver's time (a gpsd `time`) both moved on: a capture whose recorder saw nothing for a
    /// while, with the receiver's clock going on meanwhile.
    static func shiftingT(_ line: String, by seconds: Double) -> String {
        guard let comma = line.firstIndex(of: ","), let t = Double(line.dropFirst(5).prefix { $0 != "," }) else {
            return line
        }
        var rest = String(line[comma...])
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let key = rest.range(of: "\"time\":\""), let end = rest[key.upperBound...].firstIndex(of: "\""),
            let time = formatter.date(from: String(rest[key.upperBound..<end]))
        {
            rest.replaceSubrange(key.upperBound..<end, with: formatter.string(from: time.addingTimeInterval(seconds)))
        }
        return "{\"t\":" + String(format: "%.3f", t + seconds) + rest
    }

    @Test(arguments: [
        ("1e308", "after the year 9999"), ("9e999", "not a finite number"), ("-1", "negative"),
        ("3000000", "jumps"),
    ])
    func anAbsurdTimeIsRefusedWithItsLine(t: String, says: String) throws {
        try Self.withFolder { folder in
            var number = 0
            let path = try Self.capture(in: folder) { lines in
                number = lines.count
                lines[lines.count - 1] = Self.settingT(lines[lines.count - 1], t)
            }
            for arguments in [
                ["replay", path, "--format", "jsonl"], ["replay", path, "--profile", "car"],
                ["replay", path, "--profile", "car", "--evaluate"],
            ] {
                let started = Date()
                let (code, _, error) = run(arguments)
                #expect(code == 65, "\(arguments): \(error)")
                #expect(error.contains("\(path):\(number): ") && error.contains(says), "\(error)")
                #expect(Date().timeIntervalSince(started) < 30)
            }
        }
    }

    /// A hole of 29 days in the middle costs a few steps, not one per nap: the policy is told the receiver is
    /// gone, and after the hole it is back and finds fixes again.
    @Test func aHoleInTheCaptureIsJumpedOver() throws {
        try Self.withFolder { folder in
            let hole = 29.0 * 86_400
            let path = try Self.capture(in: folder) { lines in
                for index in (lines.count / 2)..<lines.count { lines[index] = Self.shiftingT(lines[index], by: hole) }
            }
            let (code, output, error) = run(["replay", path, "--profile", "car", "--format", "jsonl"])
            #expect(code == 0, "\(error)")
            let lines = output.split(separator: "\n")
            // Without the jump, 29 days of 2-minute retries would be tens of thousands of lines.
            #expect(lines.count < 2_000, "\(lines.count) lines")
            let lost = try #require(lines.firstIndex { $0.contains("\"kind\":\"receiverLost\"") && $0.contains("no line for") })
            let back = try #require(lines[lost...].firstIndex { $0.contains("\"kind\":\"receiverBack\"") })
            #expect(lines[back...].contains { $0.contains("\"type\":\"location\"") }, "no location after the hole")
            // Always-on pays the hole's first hour, not 29 days: against the same capture without the hole.
            func alwaysOn(_ capture: String) throws -> (energy: Double, duration: Double, policy: Double) {
                let (code, output, error) = run(["replay", capture, "--profile", "car", "--evaluate", "--json"])
                #expect(code == 0, "\(error)")
                let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
                let baselines = try #require(json["baselines"] as? [String: Any])
                let energy = try #require((baselines["alwaysOn"] as? [String: Any])?["energy"] as? Double)
                let policy = try #require((json["policy"] as? [String: Any])?["energy"] as? Double)
                return (energy, try #require(json["duration"] as? Double), policy)
            }
            let withHole = try alwaysOn(path)
            let whole = try alwaysOn(try Self.capture(in: folder))
            // After the hole's first hour the receiver counts as off: the model's off current.
            let model = try #require(ProfileStore.builtIn("car")).receiver
            let expected =
                whole.energy * (whole.duration + 3_600) / whole.duration + model.current(in: .off) * (hole - 3_600) / 3_600
            #expect(abs(withHole.energy - expected) < expected * 0.02, "\(withHole.energy) mAh, expected \(expected)")
            #expect(withHole.policy < withHole.energy)
        }
    }

    @Test(arguments: [["--count", "3"], ["--format", "gpx"], ["--speed", "2"]])
    func optionsTheEvaluationDoesNotTakeAreRefused(option: [String]) throws {
        let (code, _, error) = run(["replay", Fixtures.path("gpsd-mtk-mt3339.nmea"), "--profile", "car", "--evaluate"] + option)
        #expect(code == 64)
        #expect(error.contains("\(option[0]) does not apply to --evaluate"), "\(error)")
    }

    @Test func countStopsTheSimulationAndItsSummary() throws {
        let (code, output, error) = run([
            "replay", Fixtures.path("munich-urban-stopgo-31m.nmea"), "--profile", "car", "--format", "jsonl", "--count", "3",
        ])
        #expect(code == 0)
        #expect(output.split(separator: "\n").count { $0.contains("\"type\":\"location\"") } == 3)
        #expect(error.contains("; 3 locations delivered of") && error.contains("stopped by --count"), "\(error)")
    }

    @Test func theReportIsNotReplacedWithoutForce() throws {
        try Self.withFolder { folder in
            let report = folder + "/report.html"
            try "mine".write(toFile: report, atomically: true, encoding: .utf8)
            let arguments = ["replay", Fixtures.path("gpsd-mtk-mt3339.nmea"), "--profile", "car", "--evaluate", "--report", report]
            let (code, _, error) = run(arguments)
            #expect(code == 73)
            #expect(error.contains("use --force"), "\(error)")
            #expect(try String(contentsOfFile: report, encoding: .utf8) == "mine")
            #expect(run(arguments + ["--force"]).0 == 0)
            #expect(try String(contentsOfFile: report, encoding: .utf8).hasPrefix("<!doctype html>"))
        }
    }
}
