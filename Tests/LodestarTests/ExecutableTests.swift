import SystemInterface
import Testbed
import Capture
import Foundation
import GPSD
import GPSModel
import Lodestar
import Testing

/// The built `lodestar` binary as a user runs it: output piped line by line, Ctrl-C ends it cleanly.
@Suite struct ExecutableTests {
    /// `swift build` puts the executable beside the test bundle.
    static var executable: String? {
        let bundleFolder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidate = bundleFolder.appendingPathComponent("lodestar").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }

    @Test func interruptEndsWatchCleanlyAfterPrintingFixesAsTheyArrive() throws {
        let binary = try #require(Self.executable, "build the lodestar executable first (swift build --build-tests)")
        var options = PrivateGPSD.Options()
        options.readOnly = true
        let bed = try GPSDTestBed(options: options)
        let folder = NSTemporaryDirectory() + "lodestar-exe-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let watch = try ChildProcess(
            executable: binary, arguments: ["watch", "--port", bed.port, "--format", "jsonl"],
            standardOutput: folder + "/out", standardError: folder + "/err")
        try waitUntil("the binary to watch") { bed.text(folder + "/err").contains("watching gpsd") }
        _ = bed.feed(try Fixtures.bytes("gpsd-sirf4-bu353s4.nmea"))
        // Lines are written as fixes arrive, while the command still runs.
        try waitUntil("fixes in the output file") { bed.text(folder + "/out").split(separator: "\n").count >= 20 }
        #expect(watch.isRunning)
        watch.signal(SIGINT)
        let status = try #require(watch.waitForExit(timeout: 5), "watch did not end on SIGINT")
        #expect(status == 0, "raw wait status \(status)")
        for line in bed.text(folder + "/out").split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["type"] as? String == "location")
        }
    }

    @Test func closedPortExits69FromTheBinary() throws {
        let binary = try #require(Self.executable)
        let watch = try ChildProcess(executable: binary, arguments: ["watch", "--port", "1"])
        let status = try #require(watch.waitForExit(timeout: 5))
        #expect(status >> 8 == 69)
    }
}

/// The live source as async Swift: an `AsyncSequence` of events, read on its own thread.
@Suite struct LiveSourceAsyncTests {
    @Test func eventsArriveAsAnAsyncSequence() async throws {
        var options = PrivateGPSD.Options()
        options.readOnly = true
        let bed = try GPSDTestBed(options: options)
        let source = LiveReportSource(host: "127.0.0.1", port: bed.port)
        let capture = try Fixtures.bytes("gpsd-sirf4-bu353s4.nmea")
        var fixes: [Fix] = []
        var sawDevice = false
        for try await event in source.events() {
            switch event {
            case .watching:
                let terminal = bed.terminal
                Thread.detachNewThread { _ = CaptureFeeder().feed(RawLogEpochs(capture), to: terminal) { false } }
            case .deviceActivated:
                sawDevice = true
            case .fix(let fix) where fix.hasPosition:
                fixes.append(fix)
            default:
                break
            }
            if fixes.count == 10 { break }
        }
        #expect(sawDevice)
        #expect(fixes.count == 10)
        // One fix per epoch: strictly increasing times.
        let times = fixes.compactMap(\.time)
        #expect(times == times.sorted() && Set(times).count == times.count)
    }

    @Test func unreachableGpsdEndsTheSequenceWithTheError() async {
        let source = LiveReportSource(host: "127.0.0.1", port: "1")
        await #expect(throws: GPSDError.self) {
            for try await _ in source.events() {}
        }
    }
}
