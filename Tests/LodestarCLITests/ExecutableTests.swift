import SystemInterface
import TestSupport
import Capture
import Foundation
import GPSD
import GPSModel
import Lodestar
import Testing

/// The built `lodestar` binary as a user runs it: output piped line by line, Ctrl-C ends it cleanly.
@Suite(.tags(.gpsd)) struct ExecutableTests {
    /// `swift build` puts the executable beside the test bundle.
    static var executable: String? {
        let bundleFolder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidate = bundleFolder.appendingPathComponent("lodestar").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }

    @Test func interruptEndsWatchCleanlyAfterPrintingFixesAsTheyArrive() throws {
        let binary = try #require(Self.executable, "build the lodestar executable first (swift build --build-tests)")
        let bed = try GPSDTestBed.readOnly()
        let folder = try temporaryFolder("exe")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let watch = try ChildProcess(
            executable: binary, arguments: ["watch", "--gpsd", "localhost:" + bed.port, "--format", "jsonl"],
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
        let watch = try ChildProcess(executable: binary, arguments: ["watch", "--gpsd", "localhost:1"])
        let status = try #require(watch.waitForExit(timeout: 5))
        #expect(status >> 8 == 69)
    }
}
