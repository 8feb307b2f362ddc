import Capture
import Foundation
import GPSModel
import Policy
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

/// Time as receivers really give it, through the binary against a private gpsd: the emulated u-blox plays a
/// real drive whose fixes carry a date gpsd would have given (a year ahead for one epoch, as gpsd's GPS-week
/// rollover correction dates some receivers; nine minutes back from some epoch on, as after a gpsd restart).
@Suite(.tags(.gpsd)) struct DaemonTimeJumpTests {
    /// The munich drive's first `count` epochs, with `change` applied to the fix times of `indices`.
    static func epochs(count: Int, shifting indices: Range<Int>, by seconds: Double) throws -> [EmulatedReceiver.Epoch] {
        var epochs: [EmulatedReceiver.Epoch] = []
        CaptureReplayer(try importedCapture("munich-urban-stopgo-31m.nmea")).run(onEvent: { t, event in
            if case .fix(let fix) = event, fix.time != nil, epochs.count < count {
                epochs.append(EmulatedReceiver.Epoch(t: max(t, epochs.last?.t ?? t), fix: fix))
            }
        })
        for index in indices where index < epochs.count {
            epochs[index].fix.time = epochs[index].fix.time?.adding(seconds: seconds)
        }
        return epochs
    }

    /// Runs always-on over `epochs` at 10x and returns the delivered location times and the service's log.
    /// The times are ISO 8601 text, which sorts as time does.
    static func run(_ epochs: [EmulatedReceiver.Epoch]) async throws -> (times: [String], log: String) {
        let run = try DaemonUnderTest(epochs: epochs, model: DaemonRunTests.car, speed: 10)
        var config = run.baseConfig(profile: "always-on")
        config["receiver"] = ["powerControl": false]
        try run.writeConfig(config)
        try run.start()
        try await run.waitUntil("the receiver's last epoch", timeout: 90) { run.receiver.isFinished }
        try await Task.sleep(for: .milliseconds(1500))
        let (code, _) = try await run.terminate()
        #expect(code == 0)
        return (run.locationTimestamps(), run.stderr)
    }

    /// One epoch a year ahead: held as suspect; every later epoch is delivered, in time order.
    @Test func oneFixAYearAheadDoesNotSilenceTheTrack() async throws {
        let epochs = try Self.epochs(count: 90, shifting: 40..<41, by: 365 * 86400)
        let (times, log) = try await Self.run(epochs)
        let future = try #require(epochs[40].fix.time?.iso8601)
        #expect(!times.contains(future), "the year-ahead fix was delivered")
        let last = try #require(epochs.last?.fix.time?.iso8601)
        #expect(times.last == last, "the track stopped at \(String(describing: times.last)):\n\(log.suffix(1500))")
        let later = Set(epochs[41...].compactMap { $0.fix.time?.iso8601 })
        #expect(later.intersection(times).count >= 44, "\(later.intersection(times).count) of 49 later epochs delivered")
        #expect(times == times.sorted())
        #expect(!log.contains("receiverTimeChanged"))
    }

    /// From an epoch on, the receiver's time is nine minutes earlier: after three agreeing fixes the service
    /// takes it as the receiver's time, says so, and delivers again.
    @Test func aReceiverClockNineMinutesBackIsTakenAfterThreeFixes() async throws {
        let epochs = try Self.epochs(count: 90, shifting: 45..<90, by: -540)
        let (times, log) = try await Self.run(epochs)
        let last = try #require(epochs.last?.fix.time?.iso8601)
        #expect(times.last == last, "the track stopped at \(String(describing: times.last)):\n\(log.suffix(1500))")
        #expect(log.contains("receiverTimeChanged: the receiver's time moved 9 min back"), "\(log.suffix(1500))")
        let jump = try #require(epochs[45].fix.time?.iso8601)
        let after = times.filter { $0 <= last && $0 >= jump }
        #expect(after.count >= 38, "\(after.count) of 45 delivered after the change")
    }
}
