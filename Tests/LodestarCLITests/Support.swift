import SystemInterface
import TestSupport
import Capture
import Foundation
import GPSD
import Lodestar
import LodestarCLI
import Testing

/// Runs `lodestar ARGS` in-process to its end: the one runner the command tests share.
func run(_ arguments: [String]) -> (code: Int32, output: String, error: String) {
    let output = MemorySink()
    let error = MemorySink()
    let context = CommandContext(standardOutput: output, standardError: error, shouldStop: { false })
    return (LodestarCommand.main(arguments: arguments, context: context), output.text, error.text)
}

/// The checkout these tests were compiled from (its README, docs/, examples/, profiles/).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// gpsd's offline decoder's JSON for a raw log (`gpsdecode -j`), run here independently of the importer.
func gpsdecode(_ path: String) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try #require(findExecutable("gpsdecode")))
    process.arguments = ["-j"]
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return [UInt8](data)
}

/// A fresh folder under the temporary directory, named for the test that asks (`lodestar-record-…`).
func temporaryFolder(_ name: String = "test") throws -> String {
    let folder = NSTemporaryDirectory() + "lodestar-\(name)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}

/// A stop flag for an in-process command.
final class StopSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    func stop() { lock.withLock { stopped = true } }
    var isStopped: Bool { lock.withLock { stopped } }
}

/// `lodestar watch` run in-process on its own thread, its output collected.
final class InProcessCommand: @unchecked Sendable {
    let standardOutput = MemorySink()
    let standardError = MemorySink()
    let stopSwitch = StopSwitch()
    private let lock = NSLock()
    private var exitCode: Int32?

    init(_ arguments: [String]) {
        let context = CommandContext(
            standardOutput: standardOutput, standardError: standardError,
            shouldStop: { [stopSwitch] in stopSwitch.isStopped })
        let thread = Thread { [self] in
            let code = LodestarCommand.main(arguments: arguments, context: context)
            lock.withLock { exitCode = code }
        }
        thread.start()
    }

    var status: Int32? { lock.withLock { exitCode } }

    func stop(timeout: Double = 10) throws -> Int32 {
        stopSwitch.stop()
        try waitUntil("the command to end", timeout: timeout) { status != nil }
        return status ?? -1
    }
}

/// One fix as both sides print it: the receiver's time and coordinates.
struct EpochPosition: Equatable, CustomStringConvertible {
    var time: String
    var latitude: Double
    var longitude: Double

    var description: String { "\(time) \(latitude) \(longitude)" }

    /// `lodestar watch --format jsonl` lines.
    static func fromLodestar(_ lines: [String]) throws -> [EpochPosition] {
        try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            guard let time = object["timestamp"] as? String, let latitude = object["latitude"] as? Double,
                let longitude = object["longitude"] as? Double
            else { throw TimedOut(what: "a location in \(line)") }
            return EpochPosition(time: time, latitude: latitude, longitude: longitude)
        }
    }

    /// `gpspipe -w` output: TPVs with mode ≥ 2, a time and coordinates; of several TPVs in a row with the
    /// same time, the last (gpsd adds to the epoch with each sentence).
    static func fromGpspipe(_ text: String) -> [EpochPosition] {
        var result: [EpochPosition] = []
        var lastTime: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["class"] as? String == "TPV"
            else { continue }
            let device = object["device"] as? String ?? ""
            guard let time = object["time"] as? String, let mode = object["mode"] as? Int, mode >= 2,
                let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double
            else { continue }
            let position = EpochPosition(time: time, latitude: latitude, longitude: longitude)
            if lastTime[device] == time, !result.isEmpty {
                result[result.count - 1] = position
            } else {
                result.append(position)
            }
            lastTime[device] = time
        }
        return result
    }
}

/// The same epochs, times and coordinates (to 1e-7°); records the first difference.
func samePositions(_ mine: [EpochPosition], _ theirs: [EpochPosition], _ what: String) {
    #expect(mine.count == theirs.count, "\(what): \(mine.count) fixes against \(theirs.count)")
    for (one, other) in zip(mine, theirs) {
        let same = one.time == other.time && abs(one.latitude - other.latitude) <= 1e-7
            && abs(one.longitude - other.longitude) <= 1e-7
        if !same {
            Issue.record("\(what): \(one) against \(other)")
            return
        }
    }
}
