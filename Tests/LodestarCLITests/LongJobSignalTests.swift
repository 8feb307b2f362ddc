import Foundation
import SystemInterface
import TestSupport
import Testing

/// Long computations end within a second of SIGTERM or SIGINT, and say what was cut: the binary as a user
/// runs it, on a capture long enough to be mid-way when the signal comes.
@Suite(.tags(.slow)) struct LongJobSignalTests {
    /// A capture of the 2 h 43 min Reno drive, imported once.
    static func longCapture(in folder: String) throws -> String {
        let binary = try #require(ExecutableTests.executable, "build the lodestar executable first")
        let path = folder + "/reno.jsonl"
        let process = try ChildProcess(
            executable: binary,
            arguments: ["import", Fixtures.path("garmin-drive-reno-tahoe-2h43m.nmea"), "-o", path],
            standardOutput: "/dev/null", standardError: "/dev/null")
        #expect(process.waitForExit(timeout: 60) == 0)
        return path
    }

    @Test(arguments: [(SIGTERM, Int32(143), "SIGTERM"), (SIGINT, Int32(130), "SIGINT")])
    func aSignalHalfASecondIntoAnEvaluationEndsItWithinASecond(signal: Int32, code: Int32, name: String) throws {
        let binary = try #require(ExecutableTests.executable)
        let folder = try temporaryFolder("signal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let capture = try Self.longCapture(in: folder)
        let process = try ChildProcess(
            executable: binary,
            arguments: ["replay", capture, "--profile", "car", "--evaluate", "--report", folder + "/report.html"],
            standardOutput: folder + "/out", standardError: folder + "/err")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(process.isRunning, "the evaluation ended before the signal: the capture is too short for this test")
        let sent = Date()
        process.signal(signal)
        let status = try #require(process.waitForExit(timeout: 5), "the evaluation did not end on \(name)")
        let seconds = Date().timeIntervalSince(sent)
        #expect(seconds < 1, "ended \(seconds) s after \(name)")
        #expect(status >> 8 == code, "raw status \(status)")
        // Clearly cut: nothing printed as if complete, no report, and stderr says so.
        let error = (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? ""
        #expect(error.contains("stopped by \(name)") && error.contains("cut"), "\(error)")
        #expect(((try? String(contentsOfFile: folder + "/out", encoding: .utf8)) ?? "").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder + "/report.html"))
    }

    @Test func aSignalEndsAPacedSimulationAtOnce() throws {
        let binary = try #require(ExecutableTests.executable)
        let folder = try temporaryFolder("signal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // --speed is honoured with --profile: at 10x a 31-minute drive takes minutes, so it is running.
        let process = try ChildProcess(
            executable: binary,
            arguments: [
                "replay", Fixtures.path("munich-urban-stopgo-31m.nmea"), "--profile", "car", "--speed", "10",
                "--format", "jsonl",
            ],
            standardOutput: folder + "/out", standardError: folder + "/err")
        Thread.sleep(forTimeInterval: 2)
        #expect(process.isRunning, "a 31-minute drive at 10x ended within 2 s: --speed was ignored")
        let sent = Date()
        process.signal(SIGTERM)
        let status = try #require(process.waitForExit(timeout: 5))
        #expect(Date().timeIntervalSince(sent) < 1)
        #expect(status >> 8 == 0)
        let error = (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? ""
        #expect(error.contains("stopped by SIGTERM"), "\(error)")
    }
}
