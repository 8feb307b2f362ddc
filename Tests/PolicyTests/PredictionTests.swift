import GPSModel
import Policy
import Testing

/// `PolicyConfiguration.prediction` (docs/contract.md §11): naps between fixes while tracking, until the position could
/// have moved the bound.
@Suite struct PredictionTests {
    /// Prediction on with the given acceleration and minimum sleep; a u-blox 8 (hot 2 s, kept hot through
    /// off by its backup cell, so off is the way down).
    static func configuration(
        acceleration: Double = 0.5, minimumSleep: Double = 1, bound: Double? = 100, enabled: Bool = true
    ) -> PolicyConfiguration {
        var configuration = PolicyConfiguration()
        configuration.prediction = PredictionRule(
            enabled: enabled, bound: bound, maximumAcceleration: acceleration, minimumSleep: minimumSleep,
            maximumSleep: 60)
        return configuration
    }

    static let car = UpdatesConfiguration(activityType: .automotiveNavigation)

    /// v·T + a·T²/2 = bound, solved by hand for each row (the fix's own accuracy does not come off it); the
    /// nap is T − hot TTFF (2 s), nil when no nap is expected.
    static let cases: [(name: String, speed: Double, acceleration: Double, minimumSleep: Double, sleep: Double?)] = [
        // 35 m/s: (√(35² + 2·0.5·100) − 35)/0.5 = 2.80 s to reach 100 m; a 0.80 s nap is under the minimum.
        ("fast car, car profile's rule", 35, 0.5, 1, nil),
        // 30 m/s with the default rule (1 m/s², 3 s minimum): 3.2 s to reach, a 1.2 s nap: not taken.
        ("fast car, default rule", 30, 1, 3, nil),
        // 2 m/s: (√(4 + 100) − 2)/0.5 = 16.396 s; nap 14.396 s.
        ("car at 2 m/s", 2, 0.5, 1, 14.396),
        // Stopped at a light: √(2·100/0.5) = 20 s; nap 18 s.
        ("stopped at a light", 0, 0.5, 1, 18),
        // 10 m/s at 1 m/s²: √(100 + 200) − 10 = 7.321 s; nap 5.321 s.
        ("town speed", 10, 1, 3, 5.321),
    ]

    @Test(arguments: cases)
    func napsWhenTheBoundCannotBeReachedBeforeAWake(
        name: String, speed: Double, acceleration: Double, minimumSleep: Double, sleep: Double?
    ) throws {
        var harness = Harness(
            configuration: Self.configuration(acceleration: acceleration, minimumSleep: minimumSleep),
            receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        let actions = harness.fix(makeFix(t: 1, accuracy: 5, speed: speed), at: 1)
        #expect(actions.delivered.count == 1, "\(name): the fix is delivered before the nap")
        let wake = actions.scheduled(.predictionWake)
        guard let sleep else {
            #expect(wake == nil, "\(name): napped")
            #expect(!harness.policy.isNapping)
            #expect(actions.regimes.isEmpty, "\(name): the receiver stays continuous")
            return
        }
        let at = try #require(wake, "\(name): no nap")
        #expect(abs(at.seconds - (1 + sleep)) < 0.01, "\(name): wake at \(at), expected \(1 + sleep)")
        #expect(actions.regimes == [.off], "\(name): a backed-up u-blox 8 goes off (hot start kept)")
        #expect(harness.policy.isNapping)
    }

    @Test func theWakeComesOneHotStartBeforeTheBoundCanBeReached() throws {
        var harness = Harness(configuration: Self.configuration(), receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        let nap = harness.fix(makeFix(t: 1, accuracy: 5, speed: 2), at: 1)
        let wake = try #require(nap.scheduled(.predictionWake))
        let reach = PredictionRule(enabled: true, maximumAcceleration: 0.5).secondsToReach(100, speed: 2)
        #expect(abs(wake.seconds + ReceiverModel.ublox8.timeToFirstFix.hot - (1 + reach)) < 0.001)
        let woken = harness.advance(to: wake.seconds)
        #expect(woken.regimes == [.continuous])
        #expect(woken.regimeReasons == ["waking after a 14 s nap for the next fix"])
        #expect(!harness.policy.isNapping)
        // The first acceptable fix after the wake is delivered, and the decision is taken again.
        let next = harness.fix(makeFix(t: wake.seconds + 2, east: 30, accuracy: 5, speed: 2), at: wake.seconds + 2)
        #expect(next.delivered.count == 1)
        #expect(next.scheduled(.predictionWake) != nil)
    }

    @Test func theReasonSaysHowFastHowFarAndHowLong() throws {
        var harness = Harness(configuration: Self.configuration(), receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        let moving = harness.fix(makeFix(t: 1, accuracy: 5, speed: 2.1), at: 1)
        #expect(moving.regimeReasons == ["moving 2.1 m/s: 100 m bound not reachable for 16 s; sleeping 14 s"])
        var stopped = Harness(configuration: Self.configuration(), receiver: .ublox8)
        stopped.send(.startUpdates(Self.car), at: 0)
        let light = stopped.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1)
        #expect(light.regimeReasons == ["stopped: 100 m bound not reachable for 20 s; sleeping 18 s"])
    }

    @Test func aNapThatCostsMoreThanStayingUpIsNotTaken() {
        // A receiver with no backup and no standby pays a warm start (32 s) after off: no nap fits 16 s.
        var generic = Harness(configuration: Self.configuration(), receiver: .switchedNMEA)
        generic.send(.startUpdates(Self.car), at: 0)
        #expect(generic.fix(makeFix(t: 1, accuracy: 5, speed: 2), at: 1).scheduled(.predictionWake) == nil)
        // Off drawing as much as tracking (a receiver behind a closed device that keeps running): never pays.
        var receiver = ReceiverModel.ublox8
        receiver.powerControl = .closeDevice
        receiver.supportedRegimes = [.continuous, .off]
        var closed = Harness(configuration: Self.configuration(), receiver: receiver)
        closed.send(.startUpdates(Self.car), at: 0)
        #expect(closed.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1).scheduled(.predictionWake) == nil)
    }

    @Test func whatTheDistanceFilterHeldBackComesOffTheBoundButNotTheAccuracy() throws {
        // The fix's own error is the same asleep or awake: 45 m accuracy naps as long as 5 m, √(2·100/0.5) − 2.
        var coarse = Harness(configuration: Self.configuration(), receiver: .ublox8)
        coarse.send(.startUpdates(Self.car), at: 0)
        let wake = try #require(coarse.fix(makeFix(t: 1, accuracy: 45, speed: 0), at: 1).scheduled(.predictionWake))
        #expect(abs(wake.seconds - (1 + 18)) < 0.01)
        // A fix 8 m from the last delivered one, held back by a 10 m filter: 100 − 8 = 92 m.
        var filtered = Harness(configuration: Self.configuration(), receiver: .ublox8)
        var updates = Self.car
        updates.distanceFilter = 10
        filtered.send(.startUpdates(updates), at: 0)
        let first = try #require(filtered.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1).scheduled(.predictionWake))
        let second = filtered.fix(makeFix(t: first.seconds + 2, east: 8, accuracy: 5, speed: 0), at: first.seconds + 2)
        #expect(second.delivered.isEmpty)
        let again = try #require(second.scheduled(.predictionWake))
        let expected = (2 * 92 / 0.5).squareRoot() - 2
        #expect(abs(again.seconds - (first.seconds + 2 + expected)) < 0.01)
    }

    /// A u-blox 8 napping after a still fix at 1 s, until its wake at 19 s; a wake allows
    /// `acquisition.wakeMargin` 10 s more than the expected time to first fix.
    static func nappingAfterAStillFix() -> Harness {
        var configuration = Self.configuration()
        configuration.acquisition.wakeMargin = 10
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        let nap = harness.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1)
        #expect(nap.scheduled(.predictionWake) == 19)
        return harness
    }

    /// A nap's wake that brings no acceptable fix (a car park, a tunnel) waits the expected time to first
    /// fix plus `acquisition.wakeMargin`, then sleeps as long as it waited, doubling per failure in a row; the
    /// first fix ends it.
    @Test func aWakeWithoutAFixBacksOffAndAFixEndsIt() throws {
        var harness = Self.nappingAfterAStillFix()
        let woken = harness.advance(to: 19)
        // Down 18 s in off, kept hot by the backup cell: 2 s expected, 12 s allowed.
        #expect(woken.scheduled(.acquisitionTimeout) == 31)
        let failed = harness.advance(to: 31)
        #expect(failed.events.map(\.detail) == ["no fix after a nap's wake (1st failure in a row); next attempt in 12 s"])
        #expect(failed.regimes == [.off])
        #expect(harness.policy.isNapping)
        #expect(harness.timers[.predictionWake] == 43)
        let second = harness.advance(to: 55)
        #expect(second.events.map(\.detail) == ["no fix after a nap's wake (2nd failure in a row); next attempt in 24 s"])
        #expect(harness.timers[.predictionWake] == 79)
        harness.advance(to: 79)
        let found = harness.fix(makeFix(t: 80, accuracy: 5, speed: 0), at: 80)
        #expect(found.delivered.count == 1)
        #expect(found.contains(.cancel(.acquisitionTimeout)))
        // Failures start again from one: the next wake without a fix sleeps 12 s, not 48 s.
        let next = try #require(found.scheduled(.predictionWake))
        harness.advance(to: next.seconds + 12)
        #expect(harness.timers[.predictionWake] == next + 24)
    }

    /// A nap's wake under a bad sky: its fixes are too inaccurate to deliver, and their speed shows the device
    /// moving (a car leaving a light among tall buildings). The wake waits on for an accurate fix, instead of
    /// backing off as from a tunnel while the track goes stale; the first accurate fix ends the wait.
    @Test func aWakeWhoseInaccurateFixesShowMotionWaitsOnForAnAccurateOne() throws {
        var harness = Self.nappingAfterAStillFix()
        harness.advance(to: 19)
        let blurred = harness.fix(makeFix(t: 25, east: 40, accuracy: 300, speed: 8), at: 25)
        #expect(blurred.delivered.isEmpty)
        let waiting = harness.advance(to: 31)
        #expect(waiting.events.isEmpty, "\(waiting.events.map(\.detail))")
        #expect(waiting.regimes.isEmpty)
        #expect(!harness.policy.isNapping)
        #expect(harness.timers[.acquisitionTimeout] == 43)
        let found = harness.fix(makeFix(t: 33, east: 100, accuracy: 10, speed: 9), at: 33)
        #expect(found.delivered.count == 1)
        #expect(found.contains(.cancel(.acquisitionTimeout)))
    }

    /// The same wait ends with the profile's `acquisition.timeout` (60 s by default) from the wake, and then
    /// fails as any wake without a fix.
    @Test func waitingOnForAnAccurateFixEndsAtTheAcquisitionTimeout() throws {
        var harness = Self.nappingAfterAStillFix()
        harness.advance(to: 19)
        var failures: [String] = []
        for second in 20...80 {
            failures += harness.advance(to: Double(second)).events.map(\.detail)
            let fix = makeFix(t: Double(second), east: Double(second) * 8, accuracy: 300, speed: 8)
            failures += harness.fix(fix, at: Double(second)).events.map(\.detail)
        }
        // Waits set at 19 (to 31), then 31, 43, 55 and 67: 60 s from the wake at 79, where it fails.
        #expect(failures == ["no fix after a nap's wake (1st failure in a row); next attempt in 12 s"])
        #expect(harness.timers[.predictionWake] == 91)
    }

    /// Inaccurate fixes that stand still say nothing of a departure: the wake fails as before.
    @Test func aWakeWhoseInaccurateFixesStandStillFailsAsBefore() throws {
        var harness = Self.nappingAfterAStillFix()
        harness.advance(to: 19)
        harness.fix(makeFix(t: 25, accuracy: 300, speed: 0.1), at: 25)
        let failed = harness.advance(to: 31)
        #expect(failed.events.map(\.detail) == ["no fix after a nap's wake (1st failure in a row); next attempt in 12 s"])
    }

    /// A receiver kept up between fixes (too fast for a nap) that loses the sky: it used to stay up at tracking
    /// current until a fix came, for ever in an underground car park. Moving when it lost the sky (a tunnel),
    /// it stays up `tunnelWait` (it reacquires at once when the sky comes back), then fails as a nap's wake
    /// and backs off; the first fix ends the series.
    @Test func aTrackingReceiverThatLostTheSkyMovingStaysUpForATunnelThenBacksOff() throws {
        var configuration = Self.configuration()
        configuration.acquisition.wakeMargin = 10
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        for second in 1...30 {
            let kept = harness.fix(makeFix(t: Double(second), east: Double(second) * 35, speed: 35), at: Double(second))
            #expect(kept.scheduled(.predictionWake) == nil, "35 m/s: no nap")
        }
        // One timer for the whole stretch, set at the first fix.
        let scheduled = harness.log.filter { if case .schedule(.acquisitionTimeout, _) = $0.action { true } else { false } }
        #expect(scheduled.count == 1)
        let tunnel = harness.advance(to: 30 + 1799)
        #expect(tunnel.events.isEmpty && tunnel.regimes.isEmpty, "down inside a tunnel's time: \(tunnel.events.map(\.detail))")
        let lost = harness.advance(to: 30 + 1800)
        #expect(lost.events.map(\.detail) == ["no fix for 30 min while tracking (1st failure in a row); next attempt in 12 s"])
        #expect(lost.regimes == [.off])
        #expect(harness.timers[.predictionWake] == 1842)
        // The next wake waits a hot start plus the margin, and its failure doubles the sleep.
        harness.advance(to: 1842)
        let second = harness.advance(to: 1854)
        #expect(second.events.map(\.detail) == ["no fix after a nap's wake (2nd failure in a row); next attempt in 24 s"])
        harness.advance(to: 1878)
        let found = harness.fix(makeFix(t: 1880, east: 70_000, speed: 20), at: 1880)
        #expect(found.delivered.count == 1)
    }

    /// Standing when it lost the sky (kept up because naps do not pay here), the receiver waits one wake's
    /// `acquisition.timeout`, not a tunnel's; fixes that keep coming, even far apart (a receiver's own slow
    /// cadence), never trip it.
    @Test func aTrackingReceiverThatLostTheSkyStandingBacksOffAfterAWakesTimeout() throws {
        var configuration = Self.configuration(minimumSleep: 600)  // no nap is ever long enough
        configuration.acquisition.wakeMargin = 10
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        var events: [String] = []
        for second in stride(from: 1.0, through: 241, by: 40) {  // a fix each 40 s: over the 60 s timeout twice
            events += harness.advance(to: second).events.map(\.detail)
            events += harness.fix(makeFix(t: second, speed: 0), at: second).events.map(\.detail)
        }
        #expect(events.isEmpty, "\(events)")
        #expect(!harness.policy.isNapping)
        // Silence from 241: 2 × 40 s (the receiver's cadence) is longer than the 60 s timeout.
        #expect(harness.advance(to: 320).events.isEmpty)
        let lost = harness.advance(to: 321)
        #expect(lost.events.map(\.detail) == ["no fix for 80 s while tracking (1st failure in a row); next attempt in 12 s"])
        #expect(harness.policy.isNapping)
    }

    /// A nap's wake while gpsd is down is not a failure: the sleep after it stays the first one's, however many
    /// such wakes come (a series that counts from zero once crashed on its negative backoff).
    @Test func aNapWakeWhileTheReceiverIsUnreachableDoesNotBackOff() throws {
        var harness = Self.nappingAfterAStillFix()
        harness.send(.receiverLost("gpsd went away"), at: 5)
        harness.advance(to: 19)
        let failed = harness.advance(to: 31)
        #expect(failed.events.map(\.detail) == ["no fix after a nap's wake (not counted: gpsd or the receiver is unreachable); next attempt in 12 s"])
        #expect(harness.timers[.predictionWake] == 43)
        let second = harness.advance(to: 55)
        #expect(second.events.map(\.detail).first?.hasSuffix("next attempt in 12 s") == true)
        #expect(harness.timers[.predictionWake] == 67)
    }

    /// A receiver that comes back from a long outage cold (unplugged, its backup domain gone; or down longer
    /// than the model foresaw) needs its cold start, 29 s on a u-blox 8 or 90 s on a slow receiver: longer
    /// than the 12 s a wake after a short nap allows, and for the slow one longer than the whole 60 s timeout.
    /// The first wakes of a failure series stay short (a bridge costs no more), but once the series has backed
    /// off to `maximumBackoff` one wake in four waits for a cold start plus the margin, so the receiver gets its
    /// fix instead of failing every 2 min for ever.
    @Test(arguments: [29.0, 90.0])
    func afterALongOutageAWakeWaitsLongEnoughForAColdStart(cold: Double) throws {
        var configuration = Self.configuration()
        configuration.acquisition.wakeMargin = 10
        configuration.acquisition.maximumBackoff = 120
        var receiver = ReceiverModel.ublox8
        receiver.timeToFirstFix.cold = cold
        var harness = Harness(configuration: configuration, receiver: receiver)
        harness.send(.startUpdates(Self.car), at: 0)
        harness.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1)
        var waits: [Double] = []
        var fixed: Double?
        // The receiver lost its ephemeris: at every wake its first fix comes `cold` seconds after power-up.
        for _ in 0..<20 {
            let wake = try #require(harness.timers[.predictionWake]).seconds
            harness.advance(to: wake)
            let timeout = try #require(harness.timers[.acquisitionTimeout]).seconds
            waits.append(timeout - wake)
            if wake + cold < timeout {
                let found = harness.fix(makeFix(t: wake + cold, accuracy: 5, speed: 0), at: wake + cold)
                #expect(found.delivered.count == 1)
                #expect(found.contains(.cancel(.acquisitionTimeout)))
                fixed = wake + cold
                break
            }
            #expect(harness.advance(to: timeout).eventNames == ["acquisitionFailed"])
        }
        // Sleeps of 12, 24, 48, 96, then 120 s (the maximum): of the wakes after those, one in four waits
        // for a cold start (the 8th failure's), so a receiver in a car park does not pay it at every wake.
        #expect(waits == [12, 12, 12, 12, 12, 12, 12, 12, cold + 10])
        #expect(try #require(fixed) < 1000)
        // The series is over: the next nap's wake expects a hot start again.
        let next = try #require(harness.timers[.predictionWake]).seconds
        #expect(harness.advance(to: next).scheduled(.acquisitionTimeout) == Instant(seconds: next + 12))
    }

    /// Failed wakes refresh no ephemeris: the start a wake expects counts from the last fix, not from its own
    /// short sleep. With a 5 min hot window, the wake 378 s after the last fix (after a 2 min sleep) expects
    /// a warm start (25 s) and waits 35 s, where each sleep alone would have said hot (12 s).
    @Test func theExpectedStartCountsFromTheLastFix() throws {
        var configuration = Self.configuration()
        configuration.acquisition.wakeMargin = 10
        configuration.acquisition.maximumBackoff = 120
        var receiver = ReceiverModel.ublox8
        receiver.timeToFirstFix.hotWindow = 300
        var harness = Harness(configuration: configuration, receiver: receiver)
        harness.send(.startUpdates(Self.car), at: 0)
        harness.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1)
        var waits: [Double] = []
        for _ in 0..<6 {
            let wake = try #require(harness.timers[.predictionWake]).seconds
            harness.advance(to: wake)
            let timeout = try #require(harness.timers[.acquisitionTimeout]).seconds
            waits.append(timeout - wake)
            harness.advance(to: timeout)
        }
        #expect(waits == [12, 12, 12, 12, 12, 35])
    }

    /// Without a margin a nap's wake waits the whole acquisition timeout (60 s by default).
    @Test func withoutAMarginAWakeWaitsTheWholeTimeout() {
        var harness = Harness(configuration: Self.configuration(), receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        harness.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1)
        #expect(harness.advance(to: 19).scheduled(.acquisitionTimeout) == 79)
    }

    @Test func disabledIsTheOldBehaviour() {
        var plain = Harness(receiver: .ublox8)
        var disabled = Harness(configuration: Self.configuration(enabled: false), receiver: .ublox8)
        for harness in [0, 1] {
            var h = harness == 0 ? plain : disabled
            h.send(.startUpdates(Self.car), at: 0)
            h.moving(from: 1, to: 60, speed: 2)
            h.stationary(from: 61, to: 500, east: 120)
            if harness == 0 { plain = h } else { disabled = h }
        }
        #expect(plain.log.count == disabled.log.count)
        #expect("\(plain.allActions)" == "\(disabled.allActions)")
        #expect(!disabled.allActions.contains { if case .schedule(.predictionWake, _) = $0 { true } else { false } })
    }

    @Test func aStoppedCarStillPausesThroughItsNaps() throws {
        var configuration = Self.configuration()
        configuration.stationary.automotiveNavigation.window = 90
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        var t = 1.0
        var paused: Double?
        // The receiver gives a fix only 2 s (its hot start) after each wake.
        for _ in 0..<20 {
            let actions = harness.fix(makeFix(t: t, north: (t * 7).truncatingRemainder(dividingBy: 5), speed: 0.3), at: t)
            if actions.eventNames.contains("paused") {
                paused = t
                break
            }
            let wake = try #require(actions.scheduled(.predictionWake), "no nap at \(t)")
            t = wake.seconds + 2
        }
        let at = try #require(paused, "never paused")
        #expect(at >= 90 && at <= 90 + 20, "paused at \(at)")
        #expect(harness.policy.isPaused && !harness.policy.isNapping)
        #expect(harness.timers[.predictionWake] == nil)
    }

    /// Resumed from a pause, the receiver stays up until a fix lies the bound (100 m) from the anchor, so the
    /// application learns of the departure from the first fix out; then it naps as before. A resume that goes
    /// nowhere (circling a car park) naps again after a minute, and one whose next fix is slower than the car's
    /// moving speed (a parked receiver's wander) at once.
    @Test(arguments: [(true, 3.0), (false, 3.0), (false, 0.0)])
    func afterAResumeNoNapUntilTheTrackHasLeftTheAnchorByTheBound(leaves: Bool, speed: Double) throws {
        var harness = Harness(configuration: Self.configuration(), receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        harness.stationary(from: 0, to: 400)
        #expect(harness.policy.isPaused)
        let probe = try #require(harness.timers[.probe]).seconds
        harness.advance(to: probe)
        let resume = harness.fix(makeFix(t: probe + 2, east: 20, speed: 9), at: probe + 2)
        #expect(resume.eventNames == ["resumed"])
        #expect(resume.scheduled(.predictionWake) == nil)
        var t = probe + 3
        var napped: Double?
        while t < probe + 200, napped == nil {
            let east = leaves ? 20 + (t - probe - 2) * 3 : 40 + (t.truncatingRemainder(dividingBy: 2)) * 20
            let actions = harness.fix(makeFix(t: t, east: east, speed: speed), at: t)
            if actions.scheduled(.predictionWake) != nil {
                napped = t
                #expect(east > 100 || !leaves, "napped \(east) m from the anchor")
            }
            t += 1
        }
        let at = try #require(napped, "never napped")
        if leaves {
            #expect(at - probe - 2 <= 30, "napped \(at - probe - 2) s after the resume")
        } else if speed == 0 {
            #expect(at == probe + 3, "napped \(at - probe - 2) s after the resume")
        } else {
            #expect(at - probe - 2 >= 60 && at - probe - 2 <= 61, "napped \(at - probe - 2) s after the resume")
        }
    }

    @Test func aRequestDuringANapPowersUpAndItsFixEndsTheNap() throws {
        var harness = Harness(configuration: Self.configuration(), receiver: .ublox8)
        harness.send(.startUpdates(Self.car), at: 0)
        let nap = harness.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1)
        #expect(nap.scheduled(.predictionWake) != nil)
        // The most demanding activity wins: the request needs the receiver now.
        let request = harness.send(.requestLocation(7, timeout: 15, desiredAccuracy: nil), at: 3)
        #expect(request.regimes == [.continuous])
        // Its fix answers the request and, the receiver being up anyway, ends the nap and is delivered.
        let answer = harness.fix(makeFix(t: 5, east: 3, accuracy: 5, speed: 0), at: 5)
        #expect(answer.eventNames == ["requestCompleted"])
        #expect(answer.delivered.count == 1)
        #expect(answer.actions(cancelling: .predictionWake))
        // Then a new nap from this fix: down again.
        #expect(answer.scheduled(.predictionWake) != nil)
        #expect(answer.regimes == [.off])
    }

    @Test func theRuleIsValidatedWithKeyPaths() {
        var configuration = PolicyConfiguration()
        configuration.prediction = PredictionRule(
            enabled: true, bound: 0, maximumAcceleration: 0, minimumSleep: 10, maximumSleep: 5)
        let fields = configuration.validate().map(\.field)
        #expect(
            fields == [
                "prediction.bound", "prediction.maximumAcceleration", "prediction.maximumSleep",
            ])
    }
}

extension Array where Element == PolicyAction {
    func actions(cancelling id: TimerID) -> Bool {
        contains { if case .cancel(id) = $0 { true } else { false } }
    }
}
