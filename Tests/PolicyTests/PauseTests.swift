import GPSModel
import Policy
import TestSupport
import Testing

/// docs/contract.md §4: activity type, automatic pause, probes, resume.
@Suite struct PauseTests {
    static let windows: [(ActivityType, Double, Int)] = [
        (.automotiveNavigation, 50, 300), (.fitness, 25, 120), (.otherNavigation, 50, 600), (.other, 30, 180),
    ]

    /// A receiver that stands still but reports noise: a few metres of scatter and speeds up to 2 m/s.
    static func noise(seed: UInt64, scatter: Double) -> (Int) -> (Double, Double, Double) {
        { second in
            var random = SplitMix64(seed: seed &+ UInt64(second))
            return ((random.unit() - 0.5) * 2 * scatter, (random.unit() - 0.5) * 2 * scatter, random.unit() * 2)
        }
    }

    @Test(arguments: windows)
    func pausesAfterTheActivitysWindowWithinItsRadius(activity: ActivityType, radius: Double, window: Int) throws {
        var harness = Harness(receiver: .mt3339)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: activity)), at: 0)
        let before = harness.stationary(from: 0, to: window - 1, jitter: Self.noise(seed: 7, scatter: radius / 3))
        #expect(before.eventNames.isEmpty)
        #expect(before.delivered.count == window)
        let at = harness.stationary(from: window, to: window, jitter: Self.noise(seed: 7, scatter: radius / 3))
        #expect(at.eventNames == ["paused"])
        let detail = try #require(at.events.first?.detail)
        #expect(detail == "stationary \(window / 60) min within \(Int(radius)) m")
        #expect(at.regimeReasons == [detail])
        #expect(try #require(at.regimes.first) < .powerSave)
        #expect(harness.policy.isPaused)
        // Paused: no more locations from the same spot.
        #expect(harness.stationary(from: window + 1, to: window + 10).delivered.isEmpty)
    }

    @Test func airborneNeverPauses() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .airborne)), at: 0)
        let actions = harness.stationary(from: 0, to: 3600)
        #expect(!actions.eventNames.contains("paused"))
        #expect(actions.delivered.count == 3601)
    }

    @Test func pausesAutomaticallyFalseNeverPauses() {
        var harness = Harness()
        harness.send(
            .startUpdates(UpdatesConfiguration(activityType: .fitness, pausesAutomatically: false)), at: 0)
        #expect(!harness.stationary(from: 0, to: 1000).eventNames.contains("paused"))
    }

    /// Noise of up to ~2 m/s and scatter of a third of the radius must not keep restarting the window.
    @Test func noisyStationaryReceiverStillPauses() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        let actions = harness.stationary(from: 0, to: 330, accuracy: 15, jitter: Self.noise(seed: 42, scatter: 25))
        #expect(actions.eventNames == ["paused"])
    }

    /// A car standing still for 150 s, then one fix 250 m away at 4 m/s.
    private static func stationaryThenOneMovingFix() -> (Harness, [PolicyAction]) {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        var actions = harness.stationary(from: 0, to: 150)
        actions += harness.fix(makeFix(t: 151, north: 250, accuracy: 10, speed: 4), at: 151)
        return (harness, actions)
    }

    /// A fix that moves contradicts stillness, whatever came before it: the window starts again from it. Back
    /// where it stood, the car needs a whole window of stillness again (a multipath jump costs a window; a
    /// departure taken for one once paused a car as it drove off).
    @Test func aSingleMovingFixRestartsTheWindow() {
        var (harness, actions) = Self.stationaryThenOneMovingFix()
        actions += harness.stationary(from: 152, to: 451)
        #expect(actions.eventNames.isEmpty)
        #expect(harness.stationary(from: 452, to: 452).eventNames == ["paused"])
    }

    /// A car (90 s window) seen still, then a fix that contradicts stillness: too fast near the anchor, or
    /// too far at walking noise. It comes when the window is due (right after a second of it left, or after
    /// a fix-less nap that, counted, would have filled it): no pause with it, and a whole window after it.
    @Test(arguments: [(4.0, 0.0, 0), (0.5, 120.0, 0), (4.0, 0.0, 40), (0.5, 120.0, 40)])
    func aFastOrFarFixRestartsTheWindowWhateverCameBefore(speed: Double, north: Double, gap: Int) {
        var configuration = PolicyConfiguration()
        configuration.stationary.automotiveNavigation.window = 90
        // Naps on: a gap of 40 s without fixes does not restart the window by itself (docs/policy.md).
        configuration.prediction.enabled = true
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        var actions = harness.stationary(from: 0, to: 89 - gap)
        let at = 90.0
        actions += harness.fix(makeFix(t: at, north: north, accuracy: 10, speed: speed), at: at)
        #expect(actions.eventNames.isEmpty, "paused on a fix at \(speed) m/s, \(Int(north)) m out")
        #expect(harness.policy.isPaused == false)
        // Standing where the contradicting fix was: stillness counts from it.
        actions = harness.stationary(from: 91, to: 179, north: north)
        #expect(actions.eventNames.isEmpty)
        #expect(harness.stationary(from: 180, to: 180, north: north).eventNames == ["paused"])
    }

    /// A nap (or a failed wake's sleep) in which no fix came is not stillness: seen still for 40 s, then
    /// 60 s unseen, of which the last still fix vouches for `maximumAge` (30 s), the 90 s window needs 20 s
    /// more of fixes, though the device is still within the radius.
    @Test func theWindowIsNotCountedAcrossAFixlessNap() throws {
        var configuration = PolicyConfiguration()
        configuration.stationary.automotiveNavigation.window = 90
        configuration.prediction.enabled = true
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        var actions = harness.stationary(from: 0, to: 40)
        actions += harness.stationary(from: 100, to: 119)
        #expect(actions.eventNames.filter { $0 == "paused" }.isEmpty)
        let pause = harness.stationary(from: 120, to: 120)
        #expect(pause.eventNames == ["paused"])
        #expect(try #require(pause.events.first).detail == "stationary 90 s within 50 m")
    }

    /// A walker's nap (250 m bound at 0.25 m/s²: 44.7 s to reach, a 42.7 s nap before a hot 2 s start) is
    /// longer than `maximumAge`, but the policy chose it and the fixes on both sides are still: it counts
    /// whole. A wake that then finds no fix (10 s past its expected start) is not observed: of the 68.7 s
    /// from the first fix to the next, the nap with its start (44.7 s) and the sleep after the failure with
    /// its start (14 s) count, the 10 s awake without a fix do not.
    @Test func aNapThePolicyChoseCountsAndAFailedWakesWaitDoesNot() throws {
        var configuration = PolicyConfiguration()
        configuration.prediction = PredictionRule(
            enabled: true, bound: 250, maximumAcceleration: 0.25, minimumSleep: 1, maximumSleep: 60)
        configuration.acquisition.wakeMargin = 10
        configuration.stationary.fitness.window = 55
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        harness.fix(makeFix(t: 0), at: 0)
        let wake = try #require(harness.timers[.predictionWake])
        #expect(abs(wake.seconds - ((2 * 250 / 0.25).squareRoot() - 2)) < 0.01)
        // The wake waits 12 s and fails; 12 s down, then a wake whose fix comes after the hot start.
        let failed = harness.advance(to: wake.seconds + 12)
        #expect(failed.eventNames == ["acquisitionFailed"])
        let retry = try #require(harness.timers[.predictionWake])
        harness.advance(to: retry.seconds)
        let at = retry.seconds + 2
        let pause = harness.fix(makeFix(t: at), at: at)
        #expect(pause.eventNames == ["paused"])
        // 44.7 + 14 = 58.7 s: neither the whole 68.7 s gap nor only the 30 s the first fix vouches for.
        #expect(try #require(pause.events.first).detail == "stationary 59 s within 25 m")
    }

    /// A fix out of the radius by less than twice its own error, at noise speed (a multipath jump, an HDOP
    /// spike), neither counts nor pauses, even when the window is due; the next fix decides: back within, the
    /// window goes on; out again, it starts from there.
    @Test(arguments: [false, true])
    func aStrayFixWaitsForTheNextFix(confirmed: Bool) {
        var configuration = PolicyConfiguration()
        configuration.stationary.automotiveNavigation.window = 90
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        #expect(harness.stationary(from: 0, to: 89).eventNames.isEmpty)
        // 80 m out with ±20 m: beyond the radius plus its allowance (50 + 20), within the radius plus twice it.
        let stray = harness.fix(makeFix(t: 90, north: 80, accuracy: 20, speed: 0.5), at: 90)
        #expect(stray.eventNames.isEmpty, "paused on a fix out of the radius")
        #expect(harness.policy.isPaused == false)
        if confirmed {
            let again = harness.fix(makeFix(t: 91, north: 85, accuracy: 20, speed: 0.5), at: 91)
            #expect(again.eventNames.isEmpty)
            #expect(harness.stationary(from: 92, to: 180, north: 85).eventNames.isEmpty)
            #expect(harness.stationary(from: 181, to: 181, north: 85).eventNames == ["paused"])
        } else {
            #expect(harness.stationary(from: 91, to: 91).eventNames == ["paused"])
        }
    }

    /// Two moving fixes in a row are a departure: the window starts again.
    @Test func twoMovingFixesInARowRestartTheWindow() {
        var (harness, actions) = Self.stationaryThenOneMovingFix()
        actions += harness.fix(makeFix(t: 152, north: 260, accuracy: 10, speed: 4), at: 152)
        actions += harness.stationary(from: 153, to: 451, north: 260)
        #expect(actions.eventNames.isEmpty)
        #expect(harness.stationary(from: 452, to: 452, north: 260).eventNames == ["paused"])
    }

    /// Time without fixes (no sky view, receiver lost) is not observed stillness.
    @Test func aGapWithoutFixesRestartsTheWindow() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        var actions = harness.stationary(from: 0, to: 60)
        actions += harness.stationary(from: 700, to: 819)
        #expect(actions.eventNames.isEmpty)
        #expect(harness.stationary(from: 820, to: 820).eventNames == ["paused"])
    }

    /// A queue crawling at walking pace is not a stop, however long it lasts.
    @Test(arguments: [0.3, 0.5, 1.0, 2.0])
    func slowCrawlIsNotAStop(speed: Double) {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        let actions = harness.moving(from: 0, to: 1200, speed: speed)
        #expect(!actions.eventNames.contains("paused"))
    }

    /// Two minutes at a traffic light are no pause for a car.
    @Test func trafficLightIsNotAStop() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        var actions = harness.moving(from: 0, to: 60, speed: 14)
        actions += harness.stationary(from: 61, to: 240, east: 14 * 61)
        actions += harness.moving(from: 241, to: 600, speed: 14, east0: 14 * 61)
        #expect(!actions.eventNames.contains("paused"))
    }

    /// Pause, probes at growing intervals (capped), a probe inside the radius keeps the pause, one outside resumes.
    @Test func probesGrowAndResumeOnDeparture() throws {
        var harness = Harness(receiver: .mt3339)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        harness.stationary(from: 0, to: 300)
        #expect(harness.policy.isPaused)
        #expect(harness.timers[.probe] == 330)  // first probe after 30 s

        var probeTimes: [Double] = []
        var t = 330.0
        for _ in 0..<6 {
            let woke = harness.advance(to: t)
            #expect(woke.regimes == [.continuous], "a probe powers the receiver up")
            probeTimes.append(t)
            let probe = harness.fix(makeFix(t: t + 2, east: 8, accuracy: 5), at: t + 2)
            #expect(probe.delivered.isEmpty)
            #expect(probe.regimeReasons.first?.contains("still stationary") == true)
            t = try #require(harness.timers[.probe]).seconds
        }
        // 30 s × 1.5 each time, capped at 3 min: 30, 45, 67.5, 101.25, 151.875, 180.
        let gaps = zip(probeTimes.dropFirst(), probeTimes).map { $0 - $1 - 2 }
        #expect(gaps.map { ($0 * 1000).rounded() / 1000 } == [45, 67.5, 101.25, 151.875, 180])

        harness.advance(to: t)
        let departure = harness.fix(makeFix(t: t + 1, east: 212, accuracy: 5, speed: 10), at: t + 1)
        #expect(departure.eventNames == ["resumed"])
        #expect(departure.events.first?.detail == "probe fix 212 m from anchor")
        #expect(departure.delivered.count == 1)
        #expect(!harness.policy.isPaused)
        #expect(harness.moving(from: Int(t) + 2, to: Int(t) + 10, speed: 10, east0: 222).delivered.count == 9)
    }

    /// "Outside the radius, allowing for its accuracy": 70 m ± 30 m could still be within 50 m; 90 m ± 30 m not.
    @Test(arguments: [(70.0, 30.0, false), (90.0, 30.0, true), (55.0, 3.0, true), (45.0, 3.0, false)])
    func resumeAllowsForTheProbesAccuracy(distance: Double, accuracy: Double, resumes: Bool) {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        harness.stationary(from: 0, to: 300)
        harness.advance(to: 330)
        let probe = harness.fix(makeFix(t: 331, east: distance, accuracy: accuracy), at: 331)
        #expect(probe.eventNames.contains("resumed") == resumes)
    }

    /// A probe near the anchor that reports driving speed resumes (a car turning round in a car park); one
    /// at a still receiver's noise speed does not.
    @Test(arguments: [(8.3, true), (4.0, false), (1.9, false)])
    func aProbeAtDrivingSpeedResumesEvenNearTheAnchor(speed: Double, resumes: Bool) {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        harness.stationary(from: 0, to: 300)
        harness.advance(to: 330)
        let probe = harness.fix(makeFix(t: 331, east: 23, accuracy: 5, speed: speed), at: 331)
        #expect(probe.eventNames.contains("resumed") == resumes)
        if resumes { #expect(probe.events.first?.detail == "probe fix moving at 8.3 m/s, 23 m from anchor") }
    }

    /// A probe over the moving speed but under driving speed (4 m/s: the first seconds of a departure, or
    /// noise) keeps the receiver up for one more fix: a second over the moving speed resumes, one at noise
    /// speed sends it back down until the next probe.
    @Test(arguments: [(5.5, true), (1.2, false)])
    func aProbeOverTheMovingSpeedIsConfirmedByTheNextFix(next: Double, resumes: Bool) throws {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        harness.stationary(from: 0, to: 300)
        harness.advance(to: 330)
        let first = harness.fix(makeFix(t: 331, east: 3, accuracy: 5, speed: 4), at: 331)
        #expect(first.eventNames.isEmpty)
        #expect(first.regimes.isEmpty, "the receiver stays up for the next fix")
        #expect(first.scheduled(.probe) == nil)
        let second = harness.fix(makeFix(t: 332, east: 7, accuracy: 5, speed: next), at: 332)
        #expect(second.eventNames.contains("resumed") == resumes)
        if resumes {
            #expect(second.events.first?.detail == "probe fix moving at 5.5 m/s, 7 m from anchor")
            #expect(second.delivered.count == 1)
        } else {
            #expect(harness.policy.isPaused)
            #expect(try #require(second.regimes.first) < .powerSave)
            #expect(second.scheduled(.probe) != nil)
        }
    }

    /// Probes without a fix back off like a duty cycle (30 s doubled per failure), never sooner than the probe
    /// interval's growth (30 → 45 → 68 …); the first probe that finds a fix brings the interval back under
    /// `maximumProbeInterval` (180 s).
    @Test func probesWithoutAFixTimeOutAndBackOff() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        harness.stationary(from: 0, to: 300)
        harness.advance(to: 330)
        let timedOut = harness.advance(to: 390)
        #expect(timedOut.eventNames == ["acquisitionFailed"])
        #expect(timedOut.events.first?.detail == "probe found no fix within 1 min (1st failure in a row); next probe in 1 min")
        #expect(timedOut.regimes == [.off])
        // max(45, 30·2)
        #expect(harness.timers[.probe] == 450)
        harness.advance(to: 510)
        // max(min(60·1.5, 180), 30·4)
        #expect(harness.timers[.probe] == 630)
        harness.advance(to: 690)
        // max(min(120·1.5, 180), 30·8)
        #expect(harness.timers[.probe] == 930)
        harness.advance(to: 930)
        let found = harness.fix(makeFix(t: 932, east: 3), at: 932)
        #expect(found.eventNames.isEmpty)
        #expect(harness.timers[.probe] == 1112)
    }

    /// With `acquisition.wakeMargin`, a probe waits the receiver's expected time to first fix plus the margin,
    /// not the whole timeout: a u-blox 8 kept hot by its backup cell expects 2 s.
    @Test func aProbeWaitsTheExpectedTimeToFirstFixPlusTheMargin() {
        var configuration = PolicyConfiguration()
        configuration.acquisition.wakeMargin = 10
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        harness.stationary(from: 0, to: 300)
        harness.advance(to: 330)
        #expect(harness.timers[.probeTimeout] == 342)
        let timedOut = harness.advance(to: 342)
        #expect(timedOut.events.first?.detail == "probe found no fix within 12 s (1st failure in a row); next probe in 1 min")
    }

    @Test func motionHintResumesAtOnce() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        harness.stationary(from: 0, to: 120)
        #expect(harness.policy.isPaused)
        let hint = harness.send(.motionHint, at: 125)
        #expect(hint.eventNames == ["resumed"])
        #expect(hint.regimes == [.continuous])
        #expect(hint.contains(.cancel(.probe)))
        #expect(harness.fix(makeFix(t: 126, east: 3), at: 126).delivered.count == 1)
    }

    /// A motion hint while moving restarts the window: a sensor that feels movement prevents a false stop.
    @Test func motionHintWhileTrackingRestartsTheWindow() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        harness.stationary(from: 0, to: 100)
        harness.send(.motionHint, at: 100.5)
        #expect(!harness.stationary(from: 101, to: 200).eventNames.contains("paused"))
        #expect(harness.stationary(from: 201, to: 221).eventNames.contains("paused"))
    }

    /// `autoResume: false` is Core Location exactly: after the pause nothing, not even a departure or a motion
    /// hint, until updates are started again.
    @Test func withoutAutoResumeNothingUntilUpdatesStartAgain() {
        var harness = Harness()
        let configuration = UpdatesConfiguration(activityType: .fitness, autoResume: false)
        harness.send(.startUpdates(configuration), at: 0)
        let paused = harness.stationary(from: 0, to: 120)
        #expect(paused.eventNames == ["paused"])
        #expect(harness.timers[.probe] == nil)
        var after = harness.advance(to: 3600)
        after += harness.fix(makeFix(t: 3601, east: 5000, speed: 10), at: 3601)
        after += harness.send(.motionHint, at: 3602)
        #expect(after.delivered.isEmpty)
        #expect(after.eventNames.isEmpty)
        let restarted = harness.send(.startUpdates(configuration), at: 3700)
        #expect(restarted.eventNames == ["resumed"])
        #expect(restarted.regimes == [.continuous])
        #expect(harness.fix(makeFix(t: 3701, east: 5100), at: 3701).delivered.count == 1)
    }
}
