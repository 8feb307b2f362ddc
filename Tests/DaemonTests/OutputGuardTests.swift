@testable import Daemon
import GPSModel
import Policy
import SystemInterface
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the service says about its outputs: a failing output backs off and is logged once, with the count of
/// what it lost; the socket's notices reach the log when they happen; status carries every loss; a fix ahead
/// of the host's clock is not "just now".
@Suite struct OutputGuardTests {
    /// An output that fails every location while `broken`, and ignores the other records (as a GPX file does).
    final class FlakyOutput: TrackOutput {
        var broken = true
        var written = 0
        var name: String { "gpx /srv/track" }
        func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure) {
            guard case .location = record else { return }
            if broken { throw OutputFailure(path: "/srv/track", reason: "Read-only file system") }
            written += 1
        }
        func tick(now: UTCTime) throws(OutputFailure) {}
        func close() {}
    }

    private func location(_ second: Int64) -> Location {
        sampleLocation(at: UTCTime(seconds: 1_795_989_600 + second))
    }

    @Test func aFailingOutputBacksOffAndIsLoggedOnceWithWhatItLost() {
        let output = FlakyOutput()
        let guarded = OutputGuard(output)
        var entries: [LogEntry] = []
        let now = UTCTime(seconds: 1_795_989_600)
        // A location and a regime change every second for two minutes: the regime records, which this output
        // ignores without failing, must not count as "writing again".
        for second in 0..<120 {
            if second == 100 { output.broken = false }
            entries += guarded.write(.location(location(Int64(second))), now: now, t: Double(second))
            entries += guarded.write(
                .regime(.continuous, reason: "moving", t: Double(second), at: now), now: now, t: Double(second))
            entries += guarded.tick(now: now, t: Double(second))
        }
        // A failure is an error for the journal; its end a notice.
        #expect(entries.allSatisfy { $0.level == .error }, "\(entries)")
        var lines = entries.map(\.text)
        let failures = lines.filter { $0.contains("cannot write") }
        let recoveries = lines.filter { $0.contains("writing again") }
        #expect(failures.count == 1, "\(lines)")
        #expect(recoveries.isEmpty, "no retry came after the mend yet: \(lines)")
        // Tried at 0, 5, 15, 35, 75 and 155 s: the one at 155 is after the output was mended at 100 s, so
        // every location before it is lost and every one after it written.
        #expect(output.written == 0)
        #expect(guarded.lost == 120)
        #expect(guarded.failure != nil)
        let mended = guarded.write(.location(location(200)), now: now, t: 200)
        #expect(mended.map(\.level) == [.notice])
        lines += mended.map(\.text)
        #expect(output.written == 1)
        #expect(guarded.failure == nil)
        #expect(guarded.status == OutputStatus(name: "gpx /srv/track", failure: nil, lost: 120))
        let recovery = try? #require(lines.last { $0.contains("writing again") })
        #expect(recovery?.contains("120 locations lost") == true, "\(lines)")
        #expect(guarded.finish(t: 201).isEmpty, "nothing more to say: it writes")

        // Failing still at the stop: the count goes to the journal then.
        let broken = OutputGuard(FlakyOutput())
        for second in 0..<10 { _ = broken.write(.location(location(Int64(second))), now: now, t: Double(second)) }
        let last = broken.finish(t: 10).map(\.text)
        #expect(last.count == 1 && last[0].contains("closed while failing for 10 s; 10 locations lost"), "\(last)")
    }

    @Test func theSocketsNoticesReachTheLogWhenTheyHappen() throws {
        try withScratchDirectory { directory in
            let path = directory + "/locations.sock"
            var settings = DaemonConfiguration.SocketOutput()
            settings.group = "no-such-group-for-lodestar"
            let server = try LocationSocketServer(path: path, settings: settings)
            let guarded = OutputGuard(server)
            defer { guarded.close() }
            let now = UTCTime(seconds: 1_795_989_600)
            // The missing group, at the first tick after the socket opened.
            let notices = guarded.tick(now: now, t: 0)
            #expect(notices.map(\.level) == [.warning])
            let first = notices.map(\.text)
            #expect(first.count == 1 && first[0].contains("group no-such-group-for-lodestar does not exist"), "\(first)")
            #expect(guarded.tick(now: now, t: 1).isEmpty, "said once")

            // A client that stops reading is dropped, and the write that dropped it says so.
            let client = try unixStreamSocket()
            defer { close(client) }
            #expect(try withUnixSocketAddress(path) { connect(client, $0, $1) } == 0)
            _ = guarded.tick(now: now, t: 2)
            let line = JSONLine.location(location(0))
            let count = 4 * (LocationSocketServer.clientBufferLimit + 1_000_000) / line.utf8.count
            var lines: [String] = []
            for index in 0..<count { lines += guarded.write(.location(location(Int64(index))), now: now, t: 3).map(\.text) }
            #expect(lines.count == 1, "\(lines.prefix(3))")
            #expect(lines.first?.contains("client 1 dropped: it stopped reading") == true, "\(lines.prefix(3))")
            #expect(server.clientCount == 0)
        }
    }

    @Test func statusKeepsEveryLossAndSaysAFutureFixIsInTheFuture() throws {
        var status = DaemonStatus(
            pid: 42, started: UTCTime(seconds: 1_795_989_600), updated: UTCTime(seconds: 1_795_989_700),
            profile: "car", mechanism: "ubx", regime: .continuous, regimeReason: "moving")
        status.store = "/var/lib/lodestar/store.sqlite"
        status.storeDropped = 3
        status.storeLost = 624
        status.outputs = [
            OutputStatus(name: "gpx /var/lib/lodestar/track/gpx", failure: "Read-only file system", lost: 17),
            OutputStatus(name: "jsonl /var/lib/lodestar/track/locations.jsonl"),
        ]
        let decoded = try StatusFile.decode(StatusFile.encode(status), path: "status.json")
        #expect(decoded == status)
        let text = String(decoding: StatusFile.encode(status), as: UTF8.self)
        #expect(text.contains(#""storeLost":624"#) || text.contains(#""storeLost": 624"#), "\(text)")

        #expect(StatusText.ago(-540) == "9 min in the future")
        #expect(StatusText.ago(-0.4) == "just now")
        #expect(StatusText.ago(12) == "12 s ago")
    }
}
