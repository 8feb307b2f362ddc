import GPSModel
import Policy
import Testing

/// docs/contract.md §2: which fixes are never delivered, in every mode.
@Suite struct FilteringTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var configuration = UpdatesConfiguration()
        /// Fixes sent first, one per second from t = 0, all acceptable.
        var before: [Location] = [makeFix(t: 0)]
        /// The fix under test and when it arrives.
        var probe: Location
        var at: Double = 1
        var expected: DiscardReason?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "mode below 2D", probe: makeFix(t: 1, mode: .noFix), expected: .noFix),
        Case(name: "mode not seen", probe: makeFix(t: 1, mode: .notSeen), expected: .noFix),
        Case(
            name: "NaN latitude",
            probe: Location(timestamp: makeFix(t: 1).timestamp, latitude: .nan, longitude: 11, fixMode: .threeD),
            expected: .invalidCoordinate),
        Case(
            name: "infinite longitude",
            probe: Location(timestamp: makeFix(t: 1).timestamp, latitude: 48, longitude: .infinity, fixMode: .threeD),
            expected: .invalidCoordinate),
        Case(
            name: "latitude out of range",
            probe: Location(timestamp: makeFix(t: 1).timestamp, latitude: 91, longitude: 11, fixMode: .threeD),
            expected: .invalidCoordinate),
        Case(name: "duplicate timestamp", probe: makeFix(t: 0, north: 3), expected: .duplicate),
        Case(
            name: "older than maximumAge relative to the newest fix",
            before: [makeFix(t: 0), makeFix(t: 40)], probe: makeFix(t: 5), at: 41, expected: .stale(age: 36)),
        Case(
            name: "within maximumAge of the newest fix is kept",
            before: [makeFix(t: 0), makeFix(t: 20)], probe: makeFix(t: 15), at: 21, expected: nil),
        Case(
            name: "worse than the best levels' 100 m", probe: makeFix(t: 1, accuracy: 150),
            expected: .inaccurate(accuracy: 150, limit: 100)),
        Case(
            name: "exactly 100 m is acceptable", probe: makeFix(t: 1, accuracy: 100), expected: nil),
        Case(
            name: "worse than an explicit accuracyLimit", configuration: UpdatesConfiguration(accuracyLimit: 20),
            probe: makeFix(t: 1, accuracy: 30), expected: .inaccurate(accuracy: 30, limit: 20)),
        Case(
            name: "bestForNavigation accepts any valid fix up to 100 m",
            configuration: UpdatesConfiguration(desiredAccuracy: .bestForNavigation),
            probe: makeFix(t: 1, accuracy: 99), expected: nil),
        Case(
            name: "unknown accuracy is not worse than the limit", probe: makeFix(t: 1, accuracy: nil), expected: nil),
    ]

    @Test(arguments: cases)
    func filters(_ c: Case) {
        var harness = Harness()
        harness.send(.startUpdates(c.configuration), at: 0)
        for (index, location) in c.before.enumerated() {
            let at = max(Double(index), location.timestamp.interval(since: UTCTime(seconds: baseSeconds)))
            #expect(harness.fix(location, at: at).delivered.count == 1, "setup fix \(index) should be delivered")
        }
        let actions = harness.fix(c.probe, at: c.at)
        if let expected = c.expected {
            #expect(actions.delivered.isEmpty)
            switch (expected, actions.discards.first) {
            case (.stale(let expectedAge), .stale(let age)?): #expect(abs(age - expectedAge) < 0.01)
            default: #expect(actions.discards == [expected])
            }
        } else {
            #expect(actions.delivered == [c.probe])
        }
    }

    /// The classic bug: after a power-up the receiver repeats its last, cached fix. It carries an old receiver
    /// time, and must be refused although it is the first fix since the wake.
    @Test func cachedFirstFixAfterPowerUpIsStale() throws {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .kilometer)), at: 0)
        #expect(harness.fix(makeFix(t: 0), at: 0).delivered.count == 1)
        // Powered down; the next wake comes minutes later.
        let wake = try #require(harness.timers[.dutyCycleWake]).seconds
        #expect(wake >= 60)
        let woke = harness.advance(to: wake)
        #expect(woke.regimes == [.continuous])
        // The receiver's first output after the wake is its cached fix from before the power-down.
        let cached = harness.fix(makeFix(t: 0.5, east: 5), at: wake + 1)
        #expect(cached.delivered.isEmpty)
        guard case .stale = cached.discards.first else {
            Issue.record("a cached fix after a power-up must be discarded as stale, got \(cached.discards)")
            return
        }
        let fresh = harness.fix(makeFix(t: wake + 2, east: 1500), at: wake + 2)
        #expect(fresh.delivered.count == 1)
    }

    /// gpsd sends several TPVs per NMEA epoch: only one location per epoch.
    @Test func oneLocationPerEpoch() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration()), at: 0)
        var delivered = 0
        for second in 0..<10 {
            for report in 0..<3 {
                delivered +=
                    harness.fix(makeFix(t: Double(second)), at: Double(second) + Double(report) * 0.1)
                    .delivered.count
            }
        }
        #expect(delivered == 10)
    }
}
