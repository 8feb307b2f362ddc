import Foundation
import Testing

@testable import LodestarCLI

/// A runtime directory holding a status file as `lodestar run` writes it (written here by hand, so the file's
/// format is checked too).
private final class RuntimeDirectory {
    let path: String
    init() throws {
        path = try temporaryFolder("status")
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/status.json"))
    }

    /// A status written `updatedAgo` seconds ago by `pid`, started an hour and a half ago, its last fix
    /// 3 min 20 s ago.
    func writeStatus(pid: Int32, updatedAgo: Double = 0, lastError: Bool = true, fixAgo: Double = 200) throws {
        let now = Date()
        let error =
            lastError
            ? #""lastError": "jsonl /var/lib/lodestar/track/locations.jsonl: No space left on device", "lastErrorAt": "\#(iso(now - 125))","#
            : ""
        try write(
            """
            {
              "pid": \(pid), "started": "\(iso(now - 5400))", "updated": "\(iso(now - updatedAgo))",
              "updateInterval": 5, "profile": "car", "device": "/dev/ttyACM0", "receiver": "u-blox 8 (UBX)",
              "mechanism": "ubx", "regime": "standby", "regimeReason": "stopped for 5 min",
              "lastFix": "\(iso(now - fixAgo))",
              "lastLocation": {"timestamp": "\(iso(now - fixAgo))", "latitude": 48.8583701, "longitude": -2.2944813,
                               "horizontalAccuracy": 4.2, "fixMode": "3d"},
              "fixesDelivered": 1234, \(error)
              "chargeMilliampHours": 0.42, "alwaysOnMilliampHours": 1.73
            }
            """)
    }

    private func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

/// The pid of a process that has ended and been reaped.
private func deadProcessID() throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/true")
    try process.run()
    process.waitUntilExit()
    return process.processIdentifier
}

@Suite struct StatusCommandTests {
    @Test func aFixDatedAheadOfTheClockIsInTheFutureNotJustNow() throws {
        let runtime = try RuntimeDirectory()
        try runtime.writeStatus(pid: getpid(), fixAgo: -545)
        let (code, output, error) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 0, "\(error)")
        #expect(output.contains("last fix: 9 min in the future, "), "\(output)")
        #expect(!output.contains("just now"), "\(output)")
    }

    @Test func aRunningServiceIsDescribedLineByLine() throws {
        let runtime = try RuntimeDirectory()
        try runtime.writeStatus(pid: getpid())
        let (code, output, error) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 0, "\(error)")
        #expect(error.isEmpty)
        let lines = output.split(separator: "\n").map(String.init)
        // On a Raspberry Pi the board it runs on adds the system line.
        #expect(lines.count == (StatusCommand.thisBoard() == nil ? 7 : 8), "\(output)")
        #expect(lines.first?.hasPrefix("lodestar is running: pid \(getpid()), profile car, up 1 h 30 min") == true)
        #expect(lines.contains("regime: standby (stopped for 5 min)"))
        #expect(lines.contains("last fix: 3 min ago, 48.8583701 N, 2.2944813 W, ±4.2 m"))
        #expect(lines.contains("receiver: /dev/ttyACM0, u-blox 8 (UBX); mechanism: ubx"))
        #expect(lines.contains("fixes delivered: 1234"))
        #expect(lines.contains("energy since start: 0.42 mAh against 1.73 mAh always on (76 % saved)"))
        #expect(
            lines.contains("last error: jsonl /var/lib/lodestar/track/locations.jsonl: No space left on device (2 min ago)"))
        #expect(!output.contains("warning"))
    }

    /// On a board (named, or the Pi it runs on), the whole system's share follows the receiver's: an hour and a
    /// half of a Zero 2 W's 120 mA at 5 V is 0.9 Wh beside the receiver's 0.0014, so the system is at 99.5 % of
    /// always-on while the receiver is at 24 %.
    @Test func aBoardAddsTheWholeSystemsShare() throws {
        let runtime = try RuntimeDirectory()
        try runtime.writeStatus(pid: getpid())
        let (code, output, error) = run(["status", "--runtime-dir", runtime.path, "--board", "zero2w", "--battery", "5"])
        #expect(code == 0, "\(error)")
        #expect(
            output.contains(
                "\nwhole system on a Raspberry Pi Zero 2 W (120 mA at 5 V idle): 99.5 % of always-on, the receiver alone "
                    + "24.3 %; a 5 Wh battery lasts 8.3 h (8.3 h with the receiver always on)\n"), "\(output)")
        let (_, json, _) = run(["status", "--runtime-dir", runtime.path, "--board", "pi4", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let system = try #require(object["system"] as? [String: Any], "\(json)")
        #expect(system["board"] as? String == "pi4" && system["percentOfAlwaysOn"] as? Double == 99.8, "\(system)")
    }

    @Test func theStoreAndEachUploaderHaveALine() throws {
        let runtime = try RuntimeDirectory()
        try runtime.writeStatus(pid: getpid(), lastError: false)
        // The same status with a store and two uploaders, as a service with uploads writes it.
        let path = runtime.path + "/status.json"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let success = ISO8601DateFormatter().string(from: Date() - 90)
        text = text.replacingOccurrences(
            of: #""fixesDelivered": 1234,"#,
            with: #""fixesDelivered": 1234, "store": "/var/lib/lodestar/store.sqlite", "storeDropped": 0, "uploads": ["#
                + #"{"name": "owntracks", "destination": "owntracks mqtt://b:1883 owntracks/pi/van", "state": "backing off", "#
                + #""queueDepth": 37, "lastSuccess": "\#(success)", "lastError": "connection refused by b:1883", "sent": 900, "#
                + #""connections": 12}, {"name": "traccar", "destination": "traccar http://t:5055 van", "state": "idle", "#
                + #""queueDepth": 0, "sent": 937, "connections": 1}],"#)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let (code, output, error) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 0, "\(error)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "store: /var/lib/lodestar/store.sqlite; 0 unsent locations dropped when full, 0 lost (it could not "
                    + "write them)"), "\(output)")
        #expect(
            lines.contains(
                "upload owntracks: backing off, 37 waiting, last success 1 min ago; 900 sent over 12 connections; "
                    + "last error: connection refused by b:1883"), "\(output)")
        #expect(lines.contains("upload traccar: idle, 0 waiting, no success yet; 937 sent over 1 connection"), "\(output)")
    }

    @Test func aMinimalStatusSaysNoneYet() throws {
        let runtime = try RuntimeDirectory()
        let now = ISO8601DateFormatter().string(from: Date())
        try runtime.write(
            #"{"pid": \#(getpid()), "started": "\#(now)", "updated": "\#(now)", "profile": "bike", "mechanism": "none", "regime": "continuous"}"#
        )
        let (code, output, _) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 0)
        #expect(output.contains("\nregime: continuous\n"))
        #expect(output.contains("\nlast fix: none yet\n"))
        #expect(output.contains("\nreceiver: none identified yet; mechanism: none\n"))
        #expect(output.contains("\nenergy since start: 0.00 mAh against 0.00 mAh always on\n"))
        #expect(output.hasSuffix("\nlast error: none\n"))
    }

    @Test func aStaleStatusIsFlaggedButTheServiceRuns() throws {
        let runtime = try RuntimeDirectory()
        // pid 1 always runs; a user who may not signal it gets EPERM, which counts as alive too.
        try runtime.writeStatus(pid: 1, updatedAgo: 600)
        let (code, output, _) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 0)
        #expect(
            output.contains(
                "\nwarning: the status was last updated 10 min ago (it is written every 5 s): the service may be hung\n"),
            "\(output)")
    }

    @Test func aGoneProcessIsNotRunningWithItsLastStatus() throws {
        let runtime = try RuntimeDirectory()
        let pid = try deadProcessID()
        try runtime.writeStatus(pid: pid, updatedAgo: 90)
        let (code, output, _) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 69)
        #expect(output.hasPrefix("lodestar is not running (pid \(pid) is gone) since "), "\(output)")
        #expect(output.contains("(1 min ago); its last status:\nregime: standby (stopped for 5 min)\n"), "\(output)")
    }

    @Test func noStatusFileIsNotRunning() throws {
        let runtime = try RuntimeDirectory()
        let (code, output, error) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 69)
        #expect(output.isEmpty)
        #expect(error == "lodestar is not running (no \(runtime.path)/status.json)\n")
    }

    @Test func aDamagedStatusFileIsADataError() throws {
        let runtime = try RuntimeDirectory()
        try runtime.write(#"{"pid": 12, "started": "#)
        let (code, output, error) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 65)
        #expect(output.isEmpty)
        #expect(error.hasPrefix("lodestar status: \(runtime.path)/status.json is damaged: line 1, column "), "\(error)")
    }

    /// A list in the status that is not one, or holds an element of the wrong type, is named down to the element.
    @Test(arguments: [
        (#""errors": ["store full", 3]"#, #""errors[1]" is a number, not a string"#),
        (#""outputs": [{"name": "jsonl"}, "stdout"]"#, #""outputs[1]" is a string, not an object"#),
        (#""uploads": [{"name": 7}]"#, #""uploads[0].name" is a number, not a string"#),
        (#""outputs": {"name": "jsonl"}"#, #""outputs" is an object, not an array"#),
    ])
    func aWrongListInTheStatusFileIsNamed(member: String, problem: String) throws {
        let runtime = try RuntimeDirectory()
        try runtime.write(
            """
            {"pid": 12, "started": "2026-11-30T03:22:00.000Z", "updated": "2026-11-30T03:22:05.000Z",
             "profile": "car", "mechanism": "ubx", "regime": "standby", \(member)}
            """)
        let (code, output, error) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 65)
        #expect(output.isEmpty)
        #expect(error.contains("\(runtime.path)/status.json is damaged: \(problem)"), "\(error)")
    }

    @Test func aStatusFileThatCannotBeReadIsNoInput() throws {
        let runtime = try RuntimeDirectory()
        try FileManager.default.createDirectory(atPath: runtime.path + "/status.json", withIntermediateDirectories: false)
        let (code, _, error) = run(["status", "--runtime-dir", runtime.path])
        #expect(code == 66)
        #expect(error.contains("cannot read the status"), "\(error)")
    }

    @Test func jsonSaysTheStateAndCarriesTheStatus() throws {
        let runtime = try RuntimeDirectory()
        try runtime.writeStatus(pid: getpid(), lastError: false)
        let (code, output, _) = run(["status", "--runtime-dir", runtime.path, "--json"])
        #expect(code == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(object["state"] as? String == "running")
        #expect((object["savingPercent"] as? Double).map { abs($0 - 75.7) < 0.01 } == true)
        let status = try #require(object["status"] as? [String: Any])
        #expect(status["pid"] as? Int == Int(getpid()))
        #expect(status["regime"] as? String == "standby")
        #expect(status["lastError"] == nil)
        #expect((status["lastLocation"] as? [String: Any])?["latitude"] as? Double == 48.8583701)

        try runtime.writeStatus(pid: try deadProcessID())
        let (stoppedCode, stopped, _) = run(["status", "--runtime-dir", runtime.path, "--json"])
        #expect(stoppedCode == 69)
        #expect(stopped.contains(#""state": "stopped""#))
    }
}
