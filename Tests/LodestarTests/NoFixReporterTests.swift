import GPSModel
import Testing

/// The no-fix tracker on a clock the test gives: when its lines come, what they say, and what ends them.
@Suite struct NoFixReporterTests {
    static let fixTime = UTCTime(seconds: 1_796_072_591)  // 2026-11-30T21:03:11Z
    static let located = Fix(mode: .threeD, time: fixTime, latitude: 48.1, longitude: 11.5)
    static let acquiring = Fix(mode: .noFix, time: fixTime)

    @Test func aReceiverThatSaysNothingIsReportedAfterTheIntervalAndEveryIntervalAfter() {
        var reporter = NoFixReporter(interval: 30, now: 100)
        #expect(reporter.nextDeadline == 130)
        #expect(reporter.check(at: 129.9) == nil)
        let first = reporter.check(at: 130)
        #expect(first?.sentence == "no fix since start 30 s ago: gpsd reports no data from the receiver")
        #expect(reporter.check(at: 150) == nil)
        #expect(reporter.nextDeadline == 160)
        guard case .noFix(let status) = reporter.check(at: 220) else {
            Issue.record("no line at 220")
            return
        }
        #expect(status.sentence == "no fix since start 2 min ago: gpsd reports no data from the receiver")
        #expect(status.secondsSinceLastFix == nil && status.lastFixTime == nil && status.satellitesSeen == nil)
    }

    @Test func aLostFixIsReportedWithTheSatellitesAndTheFixIsAgainOnce() {
        var reporter = NoFixReporter(interval: 30, now: 0)
        #expect(reporter.observe(Self.located, at: 10) == nil, "a fix before any no-fix line says nothing")
        #expect(reporter.nextDeadline == 40)
        #expect(reporter.observe(Self.acquiring, at: 11) == nil)
        #expect(reporter.check(at: 39) == nil)
        reporter.observe(SkyView(satellitesUsed: 0, satellitesVisible: 9), at: 95)
        guard case .noFix(let status) = reporter.check(at: 100) else {
            Issue.record("no line at 100")
            return
        }
        #expect(status.sentence == "no fix for 1 min 30 s (since 2026-11-30T21:03:11Z): 9 satellites seen, 0 used")
        #expect(status.satellitesSeen == 9 && status.satellitesUsed == 0 && status.secondsSinceLastFix == 90)
        #expect(status.lastFixTime == Self.fixTime)
        // Data stopped: the line says so rather than repeating old satellites.
        guard case .noFix(let silent) = reporter.check(at: 130) else {
            Issue.record("no line at 130")
            return
        }
        #expect(silent.sentence == "no fix for 2 min (since 2026-11-30T21:03:11Z): no data from the receiver for 35 s")
        reporter.observe(SkyView(satellitesUsed: 0, satellitesVisible: 0), at: 150)
        #expect(reporter.check(at: 160)?.sentence.hasSuffix(": no satellites seen (antenna?)") == true)
        #expect(reporter.observe(Self.located, at: 200) == .fixAgain(afterSeconds: 190, sentence: "fix again after 3 min 10 s"))
        #expect(reporter.observe(Self.located, at: 201) == nil, "said once")
        #expect(reporter.nextDeadline == 231)
    }

    /// Positions without a time (GGA with no RMC or ZDA) make no location: they are no fix, and the line
    /// says what is missing.
    @Test func positionsWithoutATimeAreReportedAsSuch() {
        var reporter = NoFixReporter(interval: 30, now: 0)
        let untimed = Fix(mode: .threeD, latitude: 48.1, longitude: 11.5)
        for t in stride(from: 1.0, through: 40, by: 1) { #expect(reporter.observe(untimed, at: t) == nil) }
        let line = reporter.check(at: 40)
        #expect(
            line?.sentence
                == "no fix since start 40 s ago: gpsd reports positions without a time (an NMEA receiver sending GGA but no RMC or ZDA)")
        #expect(reporter.observe(Self.located, at: 41) == .fixAgain(afterSeconds: 41, sentence: "fix again after 41 s"))
    }

    @Test func aReceiverDownOnPurposeIsNotReportedAndAWakeGetsItsTimeToFirstFix() {
        var reporter = NoFixReporter(interval: 30, now: 0)
        _ = reporter.observe(Self.located, at: 5)
        reporter.suspend()
        #expect(reporter.nextDeadline == nil)
        #expect(reporter.check(at: 1000) == nil)
        reporter.resume(at: 1000, grace: 25)
        #expect(reporter.nextDeadline == 1055)
        #expect(reporter.check(at: 1054) == nil)
        _ = reporter.observe(Self.acquiring, at: 1050)
        let line = reporter.check(at: 1055)
        #expect(line?.sentence == "no fix 55 s after waking (last fix 17 min 30 s ago, at 2026-11-30T21:03:11Z): no satellite report")
        #expect(reporter.observe(Self.located, at: 1060)?.sentence == "fix again after 1 min")
    }

    @Test func durationsReadAsAPersonSaysThem() {
        #expect(NoFixReporter.duration(0.4) == "0 s")
        #expect(NoFixReporter.duration(45) == "45 s")
        #expect(NoFixReporter.duration(90) == "1 min 30 s")
        #expect(NoFixReporter.duration(3900) == "1 h 5 min")
        #expect(NoFixReporter.duration(2 * 86_400 + 7200) == "2 d 2 h")
    }
}
