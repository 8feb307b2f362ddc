import Capture
import Foundation
import Policy
import Receivers
import SystemInterface
import ReceiverEmulation
import TestSupport
import Synchronization
import Testing

/// The built `lodestar` binary running `run` as a service would, against a real private gpsd with an emulated
/// receiver on the device side of its pty. The receiver plays a capture `speed` times faster than recorded
/// and the service's clock follows (`--clock-rate`), so its policy naps match what the receiver does.
final class DaemonUnderTest: @unchecked Sendable {
    let folder: String
    var gpsd: PrivateGPSD
    let receiver: EmulatedReceiver
    let speed: Double
    private(set) var process: ChildProcess?
    /// When the kernel saw the process exit, taken by a thread of its own: the test pool's threads can be
    /// held by other suites for seconds on a loaded machine, and must not stretch the measured exit.
    private let exitedAt = ExitTime()
    var configPath: String { folder + "/lodestar.json" }
    var stderrPath: String { folder + "/stderr" }
    var stdoutPath: String { folder + "/stdout" }
    var stateDirectory: String { folder + "/state" }
    var runtimeDirectory: String { folder + "/run" }

    /// `swift build` puts the executable beside the test bundle.
    static var executable: String? {
        let bundleFolder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidate = bundleFolder.appendingPathComponent("lodestar").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }

    init(
        capture name: String = "munich-urban-stopgo-31m.nmea", personality: EmulatedReceiver.Personality = .ublox8,
        model: ReceiverModel, connection: ReceiverConnection = .uart, speed: Double = 10
    ) throws {
        guard let made = TemporaryDirectory(prefix: "lodestar-daemon-test") else {
            throw TestFailure("cannot make a temporary directory")
        }
        folder = made.path
        self.speed = speed
        let contents = try importedCapture(name)
        (gpsd, receiver) = try PrivateGPSD.startReading(
            {
                try EmulatedReceiver(
                    capture: contents, personality: personality, model: model, speed: speed, connection: connection)
            }, terminal: \.terminal, discard: { $0.stop() })
    }

    /// The receiver plays `epochs` (a `DayTimeline`, say) instead of a capture.
    init(
        epochs: [EmulatedReceiver.Epoch], personality: EmulatedReceiver.Personality = .ublox8, model: ReceiverModel,
        connection: ReceiverConnection = .uart, speed: Double
    ) throws {
        guard let made = TemporaryDirectory(prefix: "lodestar-daemon-test") else {
            throw TestFailure("cannot make a temporary directory")
        }
        folder = made.path
        self.speed = speed
        (gpsd, receiver) = try PrivateGPSD.startReading(
            {
                try EmulatedReceiver(
                    epochs: epochs, personality: personality, model: model, speed: speed, connection: connection)
            }, terminal: \.terminal, discard: { $0.stop() })
    }

    deinit {
        if let process, process.isRunning { process.terminate(grace: 1) }
        receiver.stop()
        gpsd.stop()
        TemporaryDirectory.removeTree(folder)
    }

    /// The config the tests start from: this gpsd and device, everything under the test's folder.
    func baseConfig(profile: String) -> [String: Any] {
        [
            "profile": profile,
            "profileDirectory": folder + "/profiles",
            "gpsd": ["host": "127.0.0.1", "port": String(gpsd.port), "device": receiver.devicePath],
            "stateDirectory": stateDirectory,
            "runtimeDirectory": runtimeDirectory,
            "outputs": [
                "jsonl": ["path": "track/locations.jsonl"],
                "gpx": ["directory": "track/gpx"],
                "socket": ["path": "locations.sock", "group": NSNull()],
            ] as [String: Any],
            "status": ["updateInterval": 1],
        ]
    }

    func writeConfig(_ config: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: configPath))
    }

    func writeConfigText(_ text: String) throws {
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    func writeProfile(_ name: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: folder + "/profiles", withIntermediateDirectories: true)
        try text.write(toFile: folder + "/profiles/\(name).json", atomically: true, encoding: .utf8)
    }

    /// Starts `lodestar run --config FILE --clock-rate SPEED` and the receiver. `wrapper` runs before it and
    /// execs it (the binary and its arguments come last), keeping the process id.
    func start(environment: [String: String] = [:], startReceiver: Bool = true, wrapper: [String] = []) throws {
        let binary = try #require(Self.executable, "build the lodestar executable first (swift build --build-tests)")
        let command = wrapper + [binary, "run", "--config", configPath, "--clock-rate", String(speed)]
        process = try ChildProcess(
            executable: command[0],
            arguments: Array(command.dropFirst()),
            environment: environment, standardOutput: stdoutPath, standardError: stderrPath)
        if let processID = process?.processID {
            exitedAt.value.withLock { $0 = nil }
            let exitedAt = exitedAt
            _ = DetachedThread.start {
                // WNOWAIT leaves the child to be reaped by `ChildProcess`.
                var info = siginfo_t()
                while waitid(P_PID, id_t(processID), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
                let now = monotonicSeconds()
                exitedAt.value.withLock { $0 = now }
            }
        }
        if startReceiver { receiver.start() }
    }

    func signal(_ number: Int32) { process?.signal(number) }

    /// Sends SIGTERM and returns the exit status and how long the exit took.
    func terminate() async throws -> (status: Int32, seconds: Double) {
        let process = try #require(process)
        let start = monotonicSeconds()
        process.signal(SIGTERM)
        // Polled with task sleeps: a blocking wait would hold one of the test pool's few threads.
        while exitedAt.value.withLock({ $0 }) == nil, monotonicSeconds() - start < 10 {
            try await Task.sleep(for: .milliseconds(20))
        }
        let exited = try #require(exitedAt.value.withLock { $0 }, "lodestar run did not exit within 10 s of SIGTERM")
        let status = try #require(process.waitForExit(timeout: 1), "lodestar run exited but cannot be reaped")
        return (status, exited - start)
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Every line of every jsonl file of the track (rotated ones first, by name), decoded.
    func jsonlRecords() -> [[String: Any]] {
        let directory = stateDirectory + "/track"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".jsonl") }.sorted { a, b in
                // The live file last.
                if a == "locations.jsonl" { return false }
                if b == "locations.jsonl" { return true }
                return a < b
            }
        var records: [[String: Any]] = []
        for name in names {
            let text = (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] {
                    records.append(object)
                }
            }
        }
        return records
    }

    func jsonlFileNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory + "/track")) ?? [])
            .filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    func locationTimestamps() -> [String] {
        jsonlRecords().filter { $0["type"] as? String == "location" }.compactMap { $0["timestamp"] as? String }
    }

    /// Waits with task sleeps, not thread sleeps: the suites share the test pool's few threads with async tests.
    func waitUntil(_ what: String, timeout: Double = 30, _ condition: () -> Bool) async throws {
        let deadline = monotonicSeconds() + timeout
        while !condition() {
            if let process, !process.isRunning {
                throw TestFailure("lodestar run exited while waiting for \(what)\n\(stderr)")
            }
            guard monotonicSeconds() < deadline else {
                // The log's end alone can miss why: the lines on the receiver's device and identity come first.
                let text = stderr
                let device = text.split(separator: "\n").filter { line in
                    ["receiverIdentified", "receiverGone", "receiverBack", "device", "gpsd"].contains { line.contains($0) }
                }
                throw TestFailure(
                    "timed out after \(timeout) s waiting for \(what)\nthe device's lines:\n"
                        + device.suffix(40).joined(separator: "\n") + "\nthe log's end:\n\(text.suffix(3000))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A client of the locations socket: connects, then collects what the service sends.
final class SocketClient: @unchecked Sendable {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: \(errno)") }
        let result = try withUnixSocketAddress(path) { connect(descriptor, $0, $1) }
        guard result == 0 else {
            let reason = Errno.current
            close(descriptor)
            throw TestFailure("connect \(path): \(reason)")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(descriptor) }

    /// Reads what is there now.
    func drain() {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            buffer += chunk[0..<count]
        }
    }

    var lines: [String] {
        drain()
        return String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

/// When a child process exited, set by the thread that waits for it.
final class ExitTime: Sendable {
    let value = Mutex<Double?>(nil)
}
