import Foundation
import Lodestar
import Policy
import Receivers
import SystemInterface
import TestSupport
import Testing

/// `lodestar run` as systemd runs it: the binary, a config file, signals, against a private gpsd and an
/// emulated u-blox behind it.
@Suite(.tags(.gpsd)) struct DaemonRunTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A built-in profile as a file (profiles/NAME.json) with some keys changed.
    static func profileText(_ name: String, newName: String, changes: [String: Any]) throws -> String {
        let data = try Data(contentsOf: repository.appendingPathComponent("profiles/\(name).json"))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["name"] = newName
        for (key, value) in changes { object[key] = value }
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static var car: ReceiverModel { ProfileStore.builtIn("car")?.receiver ?? .genericNMEA }

    @Test func writesRotatedJSONLAndGPXAndServesTwoSocketClients() async throws {
        let run = try DaemonUnderTest(model: Self.car, speed: 10)
        // The example config as shipped, pointed at this test's gpsd and folders; the always-on profile so
        // every epoch is a location, and rotation at 20 kB where the example has 10 MB.
        let example = try Data(contentsOf: Self.repository.appendingPathComponent("examples/lodestar.json"))
        var config = try #require(try JSONSerialization.jsonObject(with: example) as? [String: Any])
        let base = run.baseConfig(profile: "always-on")
        for key in ["profile", "profileDirectory", "gpsd", "stateDirectory", "runtimeDirectory"] { config[key] = base[key] }
        var receiver = try #require(config["receiver"] as? [String: Any])
        receiver["connection"] = "uart"
        config["receiver"] = receiver
        var outputs = try #require(config["outputs"] as? [String: Any])
        var jsonl = try #require(outputs["jsonl"] as? [String: Any])
        var rotation = try #require(jsonl["rotation"] as? [String: Any])
        rotation["maxBytes"] = 20_000
        jsonl["rotation"] = rotation
        outputs["jsonl"] = jsonl
        var socket = try #require(outputs["socket"] as? [String: Any])
        socket["group"] = NSNull()
        outputs["socket"] = socket
        config["outputs"] = outputs
        try run.writeConfig(config)
        try run.start(startReceiver: false)
        let socketPath = run.runtimeDirectory + "/locations.sock"
        try await run.waitUntil("the locations socket") { FileManager.default.fileExists(atPath: socketPath) }
        let first = try SocketClient(path: socketPath)
        let second = try SocketClient(path: socketPath)
        run.receiver.start()
        try await run.waitUntil("150 locations on both clients", timeout: 60) {
            first.lines.count >= 150 && second.lines.count >= 150
        }
        let (status, _) = try await run.terminate()
        #expect(status == 0, "exit status \(status >> 8)\n\(run.stderr.suffix(2000))")
        let firstLines = first.lines
        let secondLines = second.lines
        #expect(firstLines == secondLines, "both clients get the same lines")
        for line in firstLines.prefix(5) {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["type"] as? String == "location")
        }
        let timestamps = run.locationTimestamps()
        #expect(run.jsonlFileNames().count >= 2, "rotated by size: \(run.jsonlFileNames())")
        #expect(Set(timestamps).count == timestamps.count, "no location written twice")
        // The clients connected before the receiver started: they saw every location the file has.
        let socketTimestamps = firstLines.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["timestamp"] as? String
        }
        #expect(socketTimestamps == timestamps, "\(run.stderr.suffix(3000))")
        // The day's GPX file loads in gpsbabel with every point.
        let gpxFolder = run.stateDirectory + "/track/gpx"
        let gpxFiles = try FileManager.default.contentsOfDirectory(atPath: gpxFolder).filter { $0.hasSuffix(".gpx") }
        var points = 0
        for file in gpxFiles { points += try GPSBabel.trackPointCount(gpxFolder + "/" + file) }
        #expect(points == timestamps.count, "GPX points \(points), jsonl locations \(timestamps.count)")
        // The example's capture of the run.
        let captures = (try? FileManager.default.contentsOfDirectory(atPath: run.stateDirectory + "/captures")) ?? []
        #expect(captures.contains { $0.hasPrefix("run") }, "\(captures) \((try? FileManager.default.subpathsOfDirectory(atPath: run.stateDirectory)) ?? [])\n\(run.stderr.prefix(3000))")
    }

    /// SIGHUP as systemd sends it, on the notify socket a Type=notify-reload unit with a watchdog gives: READY=1
    /// and watchdog pings, RELOADING=1 then READY=1 for a reload, a broken config refused with its key path while
    /// the track goes on, STOPPING=1 at SIGTERM. What a reload does inside (the old run let go, a run of the new
    /// profile, the refusal in the status) DaemonVirtualTimeTests checks in virtual time.
    @Test func hangupReloadsNotifyingSystemdAndKeepsTheOldConfigWhenTheNewOneIsBroken() async throws {
        let run = try DaemonUnderTest(model: Self.car, speed: 10)
        let notifySocket = try DatagramListener(path: run.folder + "/notify.sock")
        try run.writeConfig(run.baseConfig(profile: "always-on"))
        try run.start(environment: ["NOTIFY_SOCKET": notifySocket.path, "WATCHDOG_USEC": "2000000"])
        try await run.waitUntil("READY=1 and locations", timeout: 60) {
            notifySocket.messages.contains("READY=1") && run.locationTimestamps().count >= 10
        }
        try await run.waitUntil("a STATUS line and two watchdog pings", timeout: 30) {
            let messages = notifySocket.messages
            return messages.contains { $0.hasPrefix("STATUS=") } && messages.count { $0 == "WATCHDOG=1" } >= 2
        }

        try run.writeConfig(run.baseConfig(profile: "car"))
        run.signal(SIGHUP)
        try await run.waitUntil("the reload, and READY=1 after RELOADING=1", timeout: 30) {
            let messages = notifySocket.messages
            guard let reloading = messages.firstIndex(of: "RELOADING=1") else { return false }
            return run.stderr.contains("reloading: profile car") && messages[reloading...].contains("READY=1")
        }

        try run.writeConfigText(#"{"profile": "car", "outputs": {"jsonl": {"fsyncInterval": "often"}}}"#)
        let delivered = run.locationTimestamps().count
        run.signal(SIGHUP)
        try await run.waitUntil("the refused reload", timeout: 30) {
            _ = notifySocket.messages
            return run.stderr.contains("reload refused")
        }
        #expect(run.stderr.contains("outputs.jsonl.fsyncInterval"), "the problem is logged with its key path")
        // The notify socket is read while waiting, as systemd reads it: its queue holds 10 datagrams
        // (net.unix.max_dgram_qlen), and a slow wait that left it full dropped STOPPING=1.
        try await run.waitUntil("locations after the refused reload", timeout: 90) {
            _ = notifySocket.messages
            return run.locationTimestamps().count > delivered
        }
        let (status, _) = try await run.terminate()
        #expect(status == 0)
        #expect(notifySocket.messages.contains("STOPPING=1"))
        let statusLine = try #require(notifySocket.messages.last { $0.hasPrefix("STATUS=") })
        #expect(
            ReceiverRegime.allCases.contains { statusLine.hasPrefix("STATUS=\($0.rawValue)") } && statusLine.contains("mAh"),
            "\(statusLine)")
    }

    @Test func terminateLeavesTheReceiverInTheExitRegimeAndExitsZeroWithinTwoSeconds() async throws {
        let run = try DaemonUnderTest(model: Self.car, speed: 10)
        try run.writeProfile("car-standby", try Self.profileText("car", newName: "car-standby", changes: ["exitRegime": "standby"]))
        try run.writeConfig(run.baseConfig(profile: "car-standby"))
        try run.start()
        try await run.waitUntil("locations", timeout: 60) { run.locationTimestamps().count >= 5 }
        let (status, seconds) = try await run.terminate()
        #expect(status == 0, "exit status \(status >> 8)")
        #expect(seconds < 2, "exited \(seconds) s after SIGTERM")
        // The service's own account, which a loaded machine's scheduling of this test does not stretch.
        let line = try #require(run.stderr.split(separator: "\n").last { $0.contains("lodestar run: stopped ") })
        let own = try #require(Double(line.split(separator: " ")[3]), "\(line)")
        #expect(own < 1.8, "\(line)")
        try await Task.sleep(for: .milliseconds(500))
        let last = try #require(run.receiver.timeline.last)
        #expect(last.state.rawValue == "standby", "the emulator's last state: \(last.state.rawValue)")
    }

    /// A receiver with no power commands and no switch (plain NMEA, gpsd's NMEA0183 driver) under the car profile:
    /// nothing can lower its current, so no saving is claimed, the watch is never released and re-taken (the
    /// policy filters what it delivers and the receiver runs), and the journal gets a handful of regime lines,
    /// not hundreds. Five minutes of the receiver's time at 10x.
    @Test func aReceiverWithoutPowerControlRunsAndSavesNothing() async throws {
        let run = try DaemonUnderTest(personality: .genericNMEA, model: Self.car, speed: 10)
        try run.writeConfig(run.baseConfig(profile: "car"))
        try run.start()
        try await run.waitUntil("five minutes of the receiver's time", timeout: 90) { run.receiver.clock >= 300 }
        try await Task.sleep(for: .milliseconds(1500))
        let binary = try #require(DaemonUnderTest.executable)
        let statusOut = run.folder + "/status.out"
        let status = try ChildProcess(
            executable: binary, arguments: ["status", "--runtime-dir", run.runtimeDirectory, "--json"],
            standardOutput: statusOut)
        #expect(status.waitForExit(timeout: 10) == 0)
        let text = (try? String(contentsOfFile: statusOut, encoding: .utf8)) ?? ""
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let inner = try #require(object["status"] as? [String: Any], "\(text)")
        #expect(inner["mechanism"] as? String == "closeDevice", "\(text)")
        #expect(object["savingPercent"] as? Double == 0, "\(text)")
        let plain = run.folder + "/status.txt"
        let words = try ChildProcess(
            executable: binary, arguments: ["status", "--runtime-dir", run.runtimeDirectory], standardOutput: plain)
        #expect(words.waitForExit(timeout: 10) == 0)
        let said = (try? String(contentsOfFile: plain, encoding: .utf8)) ?? ""
        #expect(said.contains("no power control for this receiver: the policy filters, the receiver runs"), "\(said)")
        #expect(said.contains("(0 % saved)"), "\(said)")
        let (code, _) = try await run.terminate()
        #expect(code == 0)
        let log = run.stderr
        let regimeLines = log.split(separator: "\n").filter { $0.hasPrefix("lodestar run: regime ") }
        #expect(regimeLines.count <= 5, "\(regimeLines.count) regime changes:\n\(regimeLines.joined(separator: "\n"))")
        #expect(!log.contains("released the device"), "\(log.prefix(2000))")
        #expect(!run.locationTimestamps().isEmpty)
    }

    @Test func statusReadsTheRunningServiceAndStateSurvivesARestart() async throws {
        let run = try DaemonUnderTest(model: Self.car, speed: 10)
        try run.writeConfig(run.baseConfig(profile: "car"))
        try run.start()
        try await run.waitUntil("locations", timeout: 60) { run.locationTimestamps().count >= 5 }
        try await Task.sleep(for: .milliseconds(1500))
        let binary = try #require(DaemonUnderTest.executable)
        let statusOut = run.folder + "/status.out"
        let status = try ChildProcess(
            executable: binary, arguments: ["status", "--runtime-dir", run.runtimeDirectory], standardOutput: statusOut)
        #expect(status.waitForExit(timeout: 10) == 0)
        let text = (try? String(contentsOfFile: statusOut, encoding: .utf8)) ?? ""
        for expected in ["regime", "last fix", "receiver", "fixes delivered", "mAh", "last error"] {
            #expect(text.lowercased().contains(expected.lowercased()), "status lacks \(expected):\n\(text)")
        }
        let (code, _) = try await run.terminate()
        #expect(code == 0)
        let state = try String(contentsOfFile: run.stateDirectory + "/state.json", encoding: .utf8)
        let last = try #require(run.locationTimestamps().last)
        #expect(state.contains(last), "state.json keeps the last delivered location")

        // Stopped: status says so and exits 69.
        let stopped = try ChildProcess(executable: binary, arguments: ["status", "--runtime-dir", run.runtimeDirectory])
        #expect(stopped.waitForExit(timeout: 10).map { $0 >> 8 } == 69)

        // Started again, it resumes from the saved state: the last location is known before any new fix.
        let delivered = run.locationTimestamps().count
        try run.start(startReceiver: false)
        try await run.waitUntil("the restored state", timeout: 30) { run.stderr.contains("restored: last location \(last)") }
        #expect(run.stderr.contains("\(delivered) locations over 1 earlier run"), "\(run.stderr.prefix(1500))")
        let (again, _) = try await run.terminate()
        #expect(again == 0)
        let saved = try String(contentsOfFile: run.stateDirectory + "/state.json", encoding: .utf8)
        #expect(saved.contains(#""runs":2"#) || saved.contains(#""runs": 2"#), "\(saved)")
    }
}

/// A bound AF_UNIX datagram socket, as systemd's notify socket.
final class DatagramListener: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private var received: [String] = []

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: \(errno)") }
        let result = try withUnixSocketAddress(path) { bind(descriptor, $0, $1) }
        guard result == 0 else { throw TestFailure("bind \(path): \(Errno.current)") }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Every message so far; one datagram may hold several newline-separated assignments.
    var messages: [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init)
        }
        return received
    }
}
