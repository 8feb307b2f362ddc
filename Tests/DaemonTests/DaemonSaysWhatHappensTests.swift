import Foundation
import Lodestar
import Policy
import Receivers
import SystemInterface
import TestSupport
import Testing

/// `lodestar run` telling what happens to what it delivers: an output that cannot be written backs off and is
/// logged once, a store on a full disk counts what it lost, status carries both, and an error leaves status
/// when its condition does.
@Suite(.tags(.gpsd), .serialized) struct DaemonSaysWhatHappensTests {
    static var car: ReceiverModel { ProfileStore.builtIn("car")?.receiver ?? .genericNMEA }

    private func status(_ run: DaemonUnderTest) -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: run.runtimeDirectory + "/status.json"),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    private func errors(_ run: DaemonUnderTest) -> [String] { status(run)["errors"] as? [String] ?? [] }

    private func gpxOutput(_ run: DaemonUnderTest) -> [String: Any]? {
        (status(run)["outputs"] as? [[String: Any]])?.first { ($0["name"] as? String)?.hasPrefix("gpx") == true }
    }

    @Test func lossesAreCountedLoggedOnceAndErrorsClearWithTheirCondition() async throws {
        let run = try DaemonUnderTest(model: Self.car, speed: 10)
        // The GPX folder's place is taken by a file: every write fails, for root too.
        try FileManager.default.createDirectory(atPath: run.stateDirectory + "/track", withIntermediateDirectories: true)
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: run.stateDirectory + "/track/gpx"))
        var config = run.baseConfig(profile: "always-on")
        var wrapper: [String] = []
        // As root the store goes on a 160 KiB tmpfs of the service's own mount namespace: a full disk.
        let fullDisk = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
        if fullDisk {
            let small = run.folder + "/small"
            try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
            config["store"] = ["path": small + "/store.sqlite"]
            wrapper = ["/usr/bin/unshare", "-m", "/bin/sh", "-c", #"mount -t tmpfs -o size=160k none "$0" && exec "$@""#, small]
        }
        try run.writeConfig(config)
        try run.start(wrapper: wrapper)
        try await run.waitUntil("locations", timeout: 60) { run.locationTimestamps().count >= 30 }
        try await run.waitUntil("the GPX output's losses in status", timeout: 30) {
            ((gpxOutput(run)?["lost"] as? Int) ?? 0) >= 20
        }
        #expect(gpxOutput(run)?["failure"] != nil)
        let gpxLines = run.stderr.split(separator: "\n").filter { $0.contains("track/gpx: cannot write") }
        #expect(gpxLines.count == 1, "one line for the failure, not one per location:\n\(gpxLines.joined(separator: "\n"))")
        #expect(!run.stderr.contains("writing again"))
        if fullDisk {
            try await run.waitUntil("the store's losses in status", timeout: 240) {
                ((status(run)["storeLost"] as? Int) ?? 0) > 0
            }
            #expect(run.stderr.contains("cannot write to the store"), "\(run.stderr.suffix(2000))")
        }

        // A refused reload is the last error; a reload that succeeds takes it away.
        try run.writeConfigText(#"{"profile": "always-on", "outputs": {"jsonl": {"fsyncInterval": "often"}}}"#)
        run.signal(SIGHUP)
        // A store that keeps failing may be the newest problem: the refusal is among those still true.
        try await run.waitUntil("the refused reload in status", timeout: 30) {
            errors(run).contains { $0.contains("reload refused") }
        }
        // The folder mended: the next reload reopens the output, which writes again.
        try FileManager.default.removeItem(atPath: run.stateDirectory + "/track/gpx")
        try run.writeConfig(run.baseConfig(profile: "always-on").merging(fullDisk ? ["store": config["store"] as Any] : [:]) { $1 })
        run.signal(SIGHUP)
        try await run.waitUntil("the accepted reload", timeout: 30) { run.stderr.contains("reloading: profile always-on") }
        try await run.waitUntil("status without the refusal", timeout: 30) {
            let errors = errors(run)
            return !errors.contains { $0.contains("reload refused") } && errors.allSatisfy { $0.contains("store") }
                && gpxOutput(run)?["failure"] == nil
        }
        #expect(run.stderr.contains("writing again after"), "\(run.stderr.suffix(2000))")
        let (code, _) = try await run.terminate()
        #expect(code == 0)
        // The stop names the regime the receiver is left in, and no later line says another.
        let log = run.stderr
        let stopping = try #require(log.range(of: "stopping: the receiver goes to "))
        let exit = log[stopping.upperBound...].prefix { $0.isLetter }
        let after = log[stopping.upperBound...].split(separator: "\n").dropFirst().filter { $0.contains("lodestar run: regime ") }
        #expect(!exit.isEmpty)
        for line in after { #expect(line.contains("regime \(exit): "), "\(line) after the stop to \(exit)") }
    }
}
