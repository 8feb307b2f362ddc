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
            name: "older than the newest fix, even within maximumAge: deliveries stay in time order",
            before: [makeFix(t: 0), makeFix(t: 20)], probe: makeFix(t: 15), at: 21, expected: .outOfOrder(behind: 5)),
        Case(
            name: "a year ahead of what the receiver's fixes predict is suspect",
            probe: makeFix(t: 1 + 365 * 86400), expected: .suspectTime(offset: 365 * 86400)),
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

    // MARK: - Time as receivers give it

    /// Fixes one a second from `from` (receiver time `from + shift`), sent at monotonic `from…`; returns the
    /// actions of each.
    private static func play(
        _ harness: inout Harness, from: Int, count: Int, shift: Double = 0, north: Double = 0
    ) -> [[PolicyAction]] {
        (0..<count).map { index in
            let t = Double(from + index)
            return harness.fix(makeFix(t: t + shift, north: north), at: t)
        }
    }

    private static func timeChanges(_ actions: [PolicyAction]) -> [Double] {
        actions.compactMap { action in
            if case .emit(.receiverTimeChanged(let offset), _) = action { return offset }
            return nil
        }
    }

    /// One fix a year ahead (a GPS-week rollover or a bad date) is held as suspect and does not silence the
    /// track: the fixes after it are delivered as before.
    @Test func oneFutureDatedFixDoesNotSilenceTheTrack() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .bestForNavigation)), at: 0)
        _ = Self.play(&harness, from: 0, count: 10)
        let ahead = harness.fix(makeFix(t: 10 + 365 * 86400), at: 10)
        #expect(ahead.delivered.isEmpty)
        #expect(ahead.discards.count == 1)
        let after = Self.play(&harness, from: 11, count: 20).flatMap { $0 }
        #expect(after.delivered.count == 20)
        #expect(Self.timeChanges(after).isEmpty)
    }

    /// Rollover dates that agree with each other (1024 weeks back, as an old receiver dates itself) are the
    /// receiver's time once three of them over two seconds agree: the time change is said, and the track goes
    /// on in the new time. Either direction.
    @Test(arguments: [-1024.0 * 7 * 86400, 9.0 * 60, -9.0 * 60, 365.0 * 86400])
    func aConsistentJumpIsTakenAsTheNewTime(shift: Double) {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .bestForNavigation)), at: 0)
        _ = Self.play(&harness, from: 0, count: 10)
        let jumped = Self.play(&harness, from: 10, count: 10, shift: shift)
        let all = jumped.flatMap { $0 }
        #expect(Self.timeChanges(all).count == 1)
        #expect(abs((Self.timeChanges(all).first ?? 0) - shift) < 1.5)
        // The first fixes are held until three agree over two seconds, then every one is delivered.
        #expect(jumped.prefix(2).allSatisfy { $0.delivered.isEmpty })
        #expect(jumped.suffix(7).allSatisfy { $0.delivered.count == 1 })
        let times = all.delivered.map(\.timestamp)
        #expect(times == times.sorted())
    }

    /// A burst of buffered old fixes (a backlog gpsd hands on at once) is not a new time: it does not span two
    /// seconds of the monotonic clock.
    @Test func aBurstOfOldFixesIsNotANewTime() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .bestForNavigation)), at: 0)
        _ = Self.play(&harness, from: 0, count: 100)
        let burst = (0..<5).flatMap { index in harness.fix(makeFix(t: Double(10 + index)), at: 100 + Double(index) * 0.01) }
        #expect(burst.delivered.isEmpty)
        #expect(Self.timeChanges(burst).isEmpty)
        #expect(Self.play(&harness, from: 101, count: 3).flatMap { $0 }.delivered.count == 3)
    }

    /// After a restart, a fix no newer than the last location the previous run delivered is not delivered
    /// (the restored floor); newer fixes are.
    @Test func aRestartNeverDeliversBeforeTheLastDelivered() {
        var harness = Harness()
        harness.send(.restoreLastKnownLocation(makeFix(t: 50)), at: 0)
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .bestForNavigation)), at: 0)
        let cached = harness.fix(makeFix(t: 45), at: 0)
        #expect(cached.delivered.isEmpty)
        let fresh = Self.play(&harness, from: 1, count: 3, shift: 50)
        #expect(fresh.flatMap { $0 }.delivered.count == 3)
    }
}
