import GPSModel
import Policy
import TestSupport
import Testing

/// docs/contract.md §4, "Motion hint", with a sensor (`MotionRule.sensor`): parked is down until a hint, a hint
/// wakes a probe and only the probe's fix resumes, false alarms quiet the hints, the fallback probes still find
/// a departure the sensor missed.
@Suite struct MotionSensorTests {
    static var configuration: PolicyConfiguration {
        var configuration = PolicyConfiguration()
        configuration.motion = MotionRule(sensor: true, fallbackProbeInterval: 1800, falseAlarmQuiet: 60)
        return configuration
    }

    /// Paused after fitness' 2 min window, the sensor having heralded the device's last two starts: with a
    /// sensor the first probe is the fallback's, half an hour later. `heralded: false`: the last start came
    /// without a hint (an ignition line fires for a trip's first start only).
    /// `engineRunning`: an ignition line read for its level says so first.
    static func paused(heralded: Bool = true, engineRunning: Bool? = nil) -> Harness {
        var harness = Harness(configuration: configuration)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: -90)
        if let engineRunning { harness.send(.ignition(on: engineRunning), at: -90) }
        // 40 s apart: a hint heralds a start from 30 s before its last slow fix on.
        for (index, start) in [-89.0, -49.0, -9.0].enumerated() {
            harness.fix(makeFix(t: start, speed: 0), at: start)
            if heralded || index < 2 { harness.send(.motionHint, at: start + 1) }
            harness.fix(makeFix(t: start + 2, speed: 10), at: start + 2)
        }
        harness.stationary(from: 0, to: 120)
        return harness
    }

    /// Paused 120 s after the last moving fix (t = -7): the first probe half an hour on.
    @Test func pausedWithASensorProbesOnlyAtTheFallbackInterval() {
        var harness = Self.paused()
        #expect(harness.policy.isPaused)
        #expect(harness.timers[.probe] == 1913)
        #expect(harness.advance(to: 1912).regimes.isEmpty)
        let probe = harness.advance(to: 1913)
        #expect(probe.regimes == [.continuous])
        // Still where it stood: down again, the next probe an hour on (doubled: the sensor heralded the
        // last two starts, below).
        let still = harness.fix(makeFix(t: 1915, east: 2), at: 1915)
        #expect(still.regimes.count == 1 && still.regimes[0] < .powerSave)
        #expect(harness.timers[.probe] == Instant(seconds: 1915 + 3600))
    }

    /// A pause after a start the sensor gave no hint for (an ignition line fires for a trip's first start
    /// only: a queue with the engine running) probes as without a sensor, at the stationary rule's growing
    /// cadence, for its first 10 min, and only then at the fallback interval.
    @Test func aPauseAfterAStartTheSensorMissedProbesAsWithoutItForTenMinutes() {
        var harness = Self.paused(heralded: false)
        #expect(harness.policy.isPaused)
        var probes: [Double] = []
        var t = 0.0
        while let next = harness.timers[.probe]?.seconds, next < 2000 {
            harness.advance(to: next)
            t = next + 2
            harness.fix(makeFix(t: t, east: 2), at: t)
            probes.append(next)
        }
        // fitness: 30 s growing by 1.5 to 120 s while the pause is under 10 min old (143, 190, 259.5, 362.75,
        // 484.75, 606.75, 728.75), then the 30 min fallback.
        #expect(probes.first == 143, "\(probes)")
        #expect(probes.count == 7, "\(probes)")
        #expect(probes.allSatisfy { $0 < 113 + 600 + 120 }, "\(probes)")
        #expect(harness.timers[.probe].map { $0.seconds - t } == 1800)
    }

    /// An ignition line read for its level: a pause with the engine running probes as without a sensor however
    /// long it lasts (a queue: the line will not tell when it moves on); the engine off, the next probe is the
    /// fallback's; on again in a false alarm's quiet, no probe at once but the next one as without a sensor.
    @Test func anIgnitionsLevelDecidesWhatAPauseLeavesToTheLine() throws {
        var harness = Self.paused(heralded: false, engineRunning: true)
        #expect(harness.policy.isPaused)
        var probes: [Double] = []
        while let next = harness.timers[.probe]?.seconds, next < 1500 {
            harness.advance(to: next)
            harness.fix(makeFix(t: next + 2, east: 2), at: next + 2)
            probes.append(next)
        }
        // 30 s growing by 1.5 to 120 s, as in the test above, and on past the 10 min an edge-only line is given.
        #expect(probes.count == 13 && probes.last == 1460.75, "\(probes)")
        let off = harness.send(.ignition(on: false), at: 1470)
        #expect(off.regimes.isEmpty)
        #expect(harness.timers[.probe] == Instant(seconds: 1470 + 1800))
        _ = try Self.hintsProbeGoesDown(&harness, at: 1500, east: 2)
        let quieted = harness.send(.motionHint, at: 1510)
        #expect(quieted.regimes.isEmpty, "a hint in the false alarm's quiet")
        let on = harness.send(.ignition(on: true), at: 1520)
        #expect(on.regimes.isEmpty, "in the quiet")
        #expect(harness.timers[.probe] == Instant(seconds: 1520 + 30))
        #expect(harness.advance(to: 1550).regimes == [.continuous])
        let moved = harness.fix(makeFix(t: 1552, east: 80, speed: 8), at: 1552)
        #expect(moved.eventNames == ["resumed"])
    }

    /// The key turned while parked, the engine off, and no quiet: a probe at once, whose fix decides.
    @Test func anIgnitionTurnedOnProbesAtOnce() {
        var harness = Self.paused(heralded: false, engineRunning: false)
        #expect(harness.timers[.probe] == 1913, "the engine off: the fallback's first probe")
        let on = harness.send(.ignition(on: true), at: 300)
        #expect(on.regimes == [.continuous])
        #expect(harness.timers[.probeTimeout] != nil)
        let moved = harness.fix(makeFix(t: 302, east: 80, speed: 8), at: 302)
        #expect(moved.eventNames == ["resumed"])
    }

    /// The ignition's level given twice is heard once: a line read again at start says nothing new.
    @Test func anIgnitionLevelGivenAgainDoesNothing() {
        var harness = Self.paused()
        harness.send(.ignition(on: false), at: 200)
        let probe = harness.timers[.probe]
        #expect(harness.send(.ignition(on: false), at: 300).isEmpty)
        #expect(harness.timers[.probe] == probe)
    }

    /// A sensor that heralded the device's last two starts is working: each probe that finds the device still
    /// doubles the next fallback interval, up to four times it (2 h), where one that has not (a dead sensor,
    /// above) keeps the fallback's 30 min.
    @Test func aSensorThatHeraldedTheLastStartsIsProbedLessOften() throws {
        var harness = Harness(configuration: Self.configuration)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        for start in [1.0, 5.0] {
            harness.fix(makeFix(t: start, speed: 0), at: start)
            harness.send(.motionHint, at: start + 1)
            harness.fix(makeFix(t: start + 2, speed: 10), at: start + 2)
        }
        harness.stationary(from: 8, to: 130)
        #expect(harness.policy.isPaused)
        var probe = try #require(harness.timers[.probe]).seconds
        var intervals: [Double] = []
        for _ in 0..<4 {
            harness.advance(to: probe)
            harness.fix(makeFix(t: probe + 2, east: 2), at: probe + 2)
            let next = try #require(harness.timers[.probe]).seconds
            intervals.append(next - probe - 2)
            probe = next
        }
        #expect(intervals == [3600, 7200, 7200, 7200])
    }

    /// A hint wakes a probe at once; a probe fix away from the anchor resumes (the departure seen within the
    /// probe's first fix), and the hint alone resumes nothing.
    @Test func aHintWakesAProbeAndTheProbesFixResumes() {
        var harness = Self.paused()
        let hint = harness.send(.motionHint, at: 300)
        #expect(hint.eventNames.isEmpty, "a hint is not a departure")
        #expect(hint.regimes == [.continuous])
        #expect(hint.contains(.cancel(.probe)))
        #expect(harness.timers[.probeTimeout] != nil)
        let moved = harness.fix(makeFix(t: 302, east: 60, speed: 8), at: 302)
        #expect(moved.eventNames == ["resumed"])
        #expect(moved.delivered.count == 1)
    }

    /// A hint at `t` and its probe's fix 2 s later, `east` metres from the anchor, which resumes nothing and
    /// puts the receiver down again: the reason the regime gives.
    static func hintsProbeGoesDown(_ harness: inout Harness, at t: Double, east: Double) throws -> String {
        harness.send(.motionHint, at: t)
        let probe = harness.fix(makeFix(t: t + 2, east: east), at: t + 2)
        #expect(probe.eventNames.isEmpty)
        #expect(probe.regimes.count == 1 && probe.regimes[0] < .powerSave)
        return try #require(probe.regimeReasons.first)
    }

    /// A hint whose probe finds the device still is a false alarm: down again, hints ignored for 60 s, then
    /// 120 s after the next false alarm; the fallback schedule stays.
    @Test func falseAlarmsQuietTheHintsLongerEachTime() throws {
        var harness = Self.paused()
        let reason = try Self.hintsProbeGoesDown(&harness, at: 300, east: 3)
        #expect(reason.contains("after a motion hint (false alarm 1; hints ignored for 1 min)"), "\(reason)")
        #expect(harness.timers[.probe] == Instant(seconds: 302 + 3600))
        // Within the quiet minute: ignored.
        #expect(harness.send(.motionHint, at: 350).regimes.isEmpty)
        // After it: a probe again, and a second false alarm quiets for 2 min.
        #expect(harness.send(.motionHint, at: 363).regimes == [.continuous])
        let second = harness.fix(makeFix(t: 365, east: 1), at: 365)
        #expect(try #require(second.regimeReasons.first).contains("false alarm 2; hints ignored for 2 min"))
        #expect(harness.send(.motionHint, at: 480).regimes.isEmpty)
        #expect(harness.send(.motionHint, at: 486).regimes == [.continuous])
    }

    /// A creep the radius has not yet told from wander (an aircraft taxiing at walking pace, a queue): a hint
    /// whose probe finds the device past half the radius from where it paused, and farther than any probe of
    /// the pause before, is no false alarm, so the next hint is heard; one that finds it no farther is one.
    @Test func aHintsProbeThatFindsTheDeviceCreepingAwayKeepsTheHintsHeard() throws {
        var harness = Self.paused()
        // 20 m east with 5 m accuracy: 15 m past the anchor, inside fitness' 25 m radius, past half of it.
        let reason = try Self.hintsProbeGoesDown(&harness, at: 300, east: 20)
        #expect(reason.contains("but 15 m from where it paused: hints stay heard"), "\(reason)")
        #expect(harness.send(.motionHint, at: 310).regimes == [.continuous], "heard: no quiet")
        // No farther than the last probe: wander, and a false alarm as before.
        let again = harness.fix(makeFix(t: 312, east: 19), at: 312)
        #expect(try #require(again.regimeReasons.first).contains("false alarm 1; hints ignored for 1 min"))
        #expect(harness.send(.motionHint, at: 330).regimes.isEmpty)
    }

    /// A sensor that fires every second: the false alarms double the quiet up to the fallback interval, so an
    /// hour parked costs a handful of probes, not thousands.
    @Test func aSensorThatAlwaysFiresCostsAFewProbes() {
        var harness = Self.paused()
        var probes = 0
        for second in 121...3720 {
            let t = Double(second)
            probes += harness.send(.motionHint, at: t).regimes.filter { $0 == .continuous }.count
            probes += harness.advance(to: t).regimes.filter { $0 == .continuous }.count
            if harness.timers[.probeTimeout] != nil { harness.fix(makeFix(t: t, east: 2), at: t) }
        }
        #expect(harness.policy.isPaused)
        // Quiet 1, 2, 4, 8, 16 min, then 30 min twice: eight probes in the hour.
        #expect(probes <= 9, "\(probes) probes in an hour of hints")
        #expect(probes >= 5, "\(probes) probes in an hour of hints")
    }

    /// A sensor that never fires: the fallback probe still finds the departure, at most one fallback interval
    /// after it.
    @Test func aSilentSensorsDepartureIsFoundByTheFallbackProbe() {
        var harness = Self.paused()
        harness.advance(to: 1000)
        // The car left at 1000 s and nothing said so; the probe at 1920 s sees it 9 km on.
        harness.advance(to: 1920)
        let found = harness.fix(makeFix(t: 1922, east: 9000, speed: 10), at: 1922)
        #expect(found.eventNames == ["resumed"])
    }

    /// Without a sensor a hint (the application's own, `LocationManager.motionHint()`) still resumes at once.
    @Test func withoutASensorAHintResumesAtOnce() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        harness.stationary(from: 0, to: 120)
        #expect(harness.send(.motionHint, at: 125).eventNames == ["resumed"])
    }

    /// With a sensor, a hint while tracking changes nothing: the fixes decide when the device is still, so a
    /// sensor that fires all the time (an idling engine) does not keep it from pausing.
    @Test func withASensorAHintWhileTrackingDoesNotRestartTheWindow() {
        var harness = Harness(configuration: Self.configuration)
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        harness.stationary(from: 0, to: 100)
        harness.send(.motionHint, at: 100.5)
        #expect(harness.stationary(from: 101, to: 120).eventNames == ["paused"])
    }

    /// A parked receiver's wander can take a hint's probe for a departure: when the device pauses again soon
    /// after and near where it stood, the hint counts as a false alarm and the next hints are quiet.
    @Test func aPauseRightAfterAHintsResumeMakesTheHintFalse() {
        var harness = Self.paused()
        harness.send(.motionHint, at: 300)
        // The probe's fix lands 40 m off (the wander), out of fitness' 25 m radius: resumed.
        #expect(harness.fix(makeFix(t: 302, east: 40), at: 302).eventNames == ["resumed"])
        // Still there for fitness' 2 min window: paused again, 40 m from the first anchor.
        #expect(harness.stationary(from: 303, to: 425, east: 40).eventNames == ["paused"])
        // A hint a few seconds later is ignored: the quiet minute after a false alarm.
        #expect(harness.send(.motionHint, at: 430).regimes.isEmpty)
        #expect(harness.send(.motionHint, at: 490).regimes == [.continuous])
    }
}

/// A hint while napping (docs/contract.md §4): it ends a nap that followed a failed wake where the device stood
/// (a car park without sky, where the failed wakes back off to two minutes), and the departure is watched out
/// from the wake's first fix; naps planned from a fix, and failed wakes while driving (a tunnel), are left alone.
/// While driving, a wake that finds no fix waits on as long as the sensor keeps firing.
@Suite struct MotionHintWhileNappingTests {
    /// A u-blox 8 with prediction and a sensor: napping after a still fix at 1 s, its wake at 19 s failing at
    /// 31 s (2 s expected, 10 s margin), the next attempt at 43 s.
    static func failedWhereItStood(speed: Double = 0) throws -> Harness {
        var configuration = PredictionTests.configuration()
        configuration.acquisition.wakeMargin = 10
        configuration.motion = MotionRule(sensor: true, fallbackProbeInterval: 1800, falseAlarmQuiet: 60)
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(PredictionTests.car), at: 0)
        harness.fix(makeFix(t: 1, accuracy: 5, speed: speed), at: 1)
        let wake = try #require(harness.timers[.predictionWake])
        harness.advance(to: wake.seconds)
        let timeout = try #require(harness.timers[.acquisitionTimeout])
        let failed = harness.advance(to: timeout.seconds)
        #expect(failed.events.map(\.kind) == [.acquisitionFailed])
        #expect(harness.policy.isNapping)
        return harness
    }

    @Test func aHintEndsTheNapAfterAFailedWakeWhereTheDeviceStood() throws {
        var harness = try Self.failedWhereItStood()
        #expect(harness.timers[.predictionWake] == 43)
        let hint = harness.send(.motionHint, at: 35)
        #expect(hint.regimes == [.continuous])
        #expect(hint.regimeReasons == ["motion hint: waking from a nap where no fix was found"])
        #expect(hint.contains(.cancel(.predictionWake)))
        #expect(harness.timers[.acquisitionTimeout] != nil)
        // Driving off at 8 m/s: each fix is delivered and the receiver stays up until the track is the bound
        // (100 m) from the wake's first fix, then naps again.
        var t = 37.0
        var east = 0.0
        while east <= 100 {
            let moving = harness.fix(makeFix(t: t, east: east, accuracy: 5, speed: 8), at: t)
            #expect(moving.delivered.count == 1)
            #expect(moving.scheduled(.predictionWake) == nil, "napped \(east) m from the first fix")
            t += 1
            east += 8
        }
        let away = harness.fix(makeFix(t: t, east: east, accuracy: 5, speed: 8), at: t)
        #expect(away.scheduled(.predictionWake) != nil)
    }

    @Test func aHintLeavesANapPlannedFromAFixAlone() throws {
        var configuration = PredictionTests.configuration()
        configuration.motion = MotionRule(sensor: true, fallbackProbeInterval: 1800, falseAlarmQuiet: 60)
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(PredictionTests.car), at: 0)
        #expect(harness.fix(makeFix(t: 1, accuracy: 5, speed: 0), at: 1).scheduled(.predictionWake) == 19)
        #expect(harness.send(.motionHint, at: 5).regimes.isEmpty)
        #expect(harness.timers[.predictionWake] == 19)
    }

    /// In a tunnel the car was driving when the fixes stopped: a hint says nothing new there.
    @Test func aHintLeavesTheNapAfterAFailedWakeWhileDrivingAlone() throws {
        var harness = try Self.failedWhereItStood(speed: 10)
        let wake = harness.timers[.predictionWake]
        #expect(wake != nil)
        let failedAt = try #require(harness.log.last?.at.seconds)
        #expect(harness.send(.motionHint, at: failedAt + 1).regimes.isEmpty)
        #expect(harness.timers[.predictionWake] == wake)
    }

    /// Driving with no fix (a tunnel, a gap in the recording) while the sensor keeps firing: the nap's wake
    /// waits on for the sky as a tracking receiver would, instead of backing off while the car drives on; once
    /// the sensor has been quiet a minute, it fails and backs off as without one. Only the first wake of a
    /// series waits on.
    @Test func aWakeWithoutAFixWaitsOnWhileTheSensorSaysTheDeviceMoves() throws {
        var configuration = PredictionTests.configuration()
        configuration.acquisition.wakeMargin = 10
        configuration.motion = MotionRule(sensor: true, fallbackProbeInterval: 1800, falseAlarmQuiet: 60)
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(.startUpdates(PredictionTests.car), at: 0)
        harness.send(.motionHint, at: 0.5)
        harness.fix(makeFix(t: 1, accuracy: 5, speed: 10), at: 1)
        let wake = try #require(harness.timers[.predictionWake])
        harness.advance(to: wake.seconds)
        // Hints every 30 s up to 90 s: each wait that runs out within a minute of one sets the next, the
        // receiver up throughout; the first after that fails, and the receiver goes down.
        let window = MotionHintWhileNappingTests.sensorMotionWindow
        var hint = 30.0
        var timeout = try #require(harness.timers[.acquisitionTimeout]).seconds
        while !harness.policy.isNapping, timeout < 400 {
            while hint <= 90, hint < timeout {
                harness.send(.motionHint, at: hint)
                hint += 30
            }
            let due = harness.advance(to: timeout)
            if timeout <= 90 + window {
                #expect(due.events.isEmpty, "at \(timeout): \(due.events)")
                #expect(due.regimes.isEmpty)
                #expect(!harness.policy.isNapping)
            } else {
                #expect(due.events.map(\.kind) == [.acquisitionFailed])
                #expect(harness.policy.isNapping)
            }
            timeout = try #require(harness.timers[.acquisitionTimeout] ?? harness.timers[.predictionWake]).seconds
        }
        let failed = try #require(harness.log.last?.at.seconds)
        #expect(failed > 90 + window && failed <= 90 + window + 12, "failed at \(failed)")

        // A sensor that never stops firing (an idling engine where there is no sky) keeps only that first wake
        // up: the next fails after its own wait and the series backs off.
        let next = try #require(harness.timers[.predictionWake]).seconds
        harness.send(.motionHint, at: next - 1)
        harness.advance(to: next)
        let wait = try #require(harness.timers[.acquisitionTimeout]).seconds
        harness.send(.motionHint, at: wait - 1)
        #expect(harness.advance(to: wait).events.map(\.kind) == [.acquisitionFailed])
        #expect(harness.policy.isNapping)
    }

    /// The policy's own window, repeated: a hint counts as the sensor saying the device moves for a minute.
    static let sensorMotionWindow = 60.0

    /// A hint's wake that finds the device still, or no fix at all, is a false alarm: hints are ignored for the
    /// quiet minute after it.
    @Test(arguments: [true, false])
    func aHintsWakeThatShowsNoDepartureQuietsTheHints(withAFix: Bool) throws {
        var harness = try Self.failedWhereItStood()
        harness.send(.motionHint, at: 35)
        if withAFix {
            // Still where it stood: a nap planned from the fix, then a failed wake, a nap after it.
            let still = harness.fix(makeFix(t: 37, east: 2, accuracy: 5, speed: 0), at: 37)
            let wake = try #require(still.scheduled(.predictionWake))
            harness.advance(to: wake.seconds)
        }
        let timeout = try #require(harness.timers[.acquisitionTimeout]).seconds
        #expect(harness.advance(to: timeout).events.map(\.kind) == [.acquisitionFailed])
        #expect(harness.policy.isNapping)
        // Within a minute of the false alarm: the hint is ignored.
        #expect(timeout + 1 < 35 + 60)
        let quiet = harness.send(.motionHint, at: timeout + 1)
        #expect(quiet.regimes.isEmpty)
        // Once the quiet has ended (at 107 s at the latest), the failed wakes go on and a hint ends a nap again.
        var now = timeout
        while now < 110 || !harness.policy.isNapping {
            now = try #require(harness.timers[.predictionWake] ?? harness.timers[.acquisitionTimeout]).seconds
            harness.advance(to: now)
        }
        #expect(harness.send(.motionHint, at: now + 0.5).regimes == [.continuous])
    }
}

/// A stop napped out on the sensor's word (docs/policy.md, "Motion hints"): standing, with a sensor that fired
/// for the device's last start, the nap is sized for a start the sensor misses to be seen within three bounds,
/// and a hint brings its wake forward to the one the naps without the sensor would have had.
@Suite struct StopOnTheSensorsWordTests {
    /// A u-blox 8 car with prediction (0.5 m/s², 100 m) and a sensor, started at -60 s: two starts, from
    /// standing at -50 s to moving at -48 s and from standing at 1 s to moving at 3 s, each heralded by a hint
    /// (at -49 s and 2 s) as `heralded` says; standing again at 4 s. Returns the actions of the last fix.
    static func stopped(heralded: [Bool], pausing: Bool = true) -> (Harness, [PolicyAction]) {
        var configuration = PredictionTests.configuration()
        configuration.motion = MotionRule(sensor: true, fallbackProbeInterval: 1800, falseAlarmQuiet: 60)
        var harness = Harness(configuration: configuration, receiver: .ublox8)
        harness.send(
            .startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation, pausesAutomatically: pausing)),
            at: -60)
        for (start, fired) in zip([(-50.0, -49.0, -48.0), (1.0, 2.0, 3.0)], heralded) {
            harness.fix(makeFix(t: start.0, accuracy: 5, speed: 0), at: start.0)
            if fired { harness.send(.motionHint, at: start.1) }
            harness.fix(makeFix(t: start.2, accuracy: 5, speed: 10), at: start.2)
        }
        let stop = harness.fix(makeFix(t: 4, accuracy: 5, speed: 0), at: 4)
        return (harness, stop)
    }

    static func stopped(heralded: Bool, pausing: Bool = true) -> (Harness, [PolicyAction]) {
        stopped(heralded: [heralded, heralded], pausing: pausing)
    }

    /// Without the sensor's word the stop naps 18 s (√(2·100/0.5) = 20 s to reach the bound, less a hot
    /// start); on it, √(2·300/0.5) = 34.64 s less the hot start. The word needs both starts heralded: one the
    /// sensor missed is not trusted, nor one sensor firing (an ignition line, which fires for a trip's first
    /// start and for none of its stops).
    @Test(arguments: [[true, true], [false, true], [true, false], [false, false]])
    func aStopIsNappedOutOnlyAfterTwoStartsTheSensorHeralded(heralded: [Bool]) throws {
        let (_, stop) = Self.stopped(heralded: heralded)
        let wake = try #require(stop.scheduled(.predictionWake)).seconds
        if heralded == [true, true] {
            let onTheWord = 1200.0.squareRoot() + 2.0  // at 4 s, for 34.64 s less the 2 s start
            #expect(abs(wake - onTheWord) < 0.001, "wake at \(wake)")
        } else {
            #expect(wake == 22)
        }
    }

    /// A hint at 10 s: the naps without the sensor would have woken at 22 s, so the wake moves there and the
    /// receiver stays down. At 23 s that wake's fix (24 s) is still to come: up at once.
    @Test(arguments: [10.0, 23.0])
    func aHintBringsTheWakeToTheNapsWithoutTheSensor(at hint: Double) throws {
        var (harness, _) = Self.stopped(heralded: true)
        let actions = harness.send(.motionHint, at: hint)
        if hint < 22 {
            #expect(actions.regimes.isEmpty)
            #expect(harness.timers[.predictionWake] == 22)
            #expect(actions.regimeReasons.isEmpty)
        } else {
            #expect(actions.regimes == [.continuous])
            #expect(actions.contains(.cancel(.predictionWake)))
        }
        // Without the sensor's word the hint leaves the nap alone.
        var (plain, _) = Self.stopped(heralded: false)
        #expect(plain.send(.motionHint, at: hint).regimes.isEmpty)
    }

    /// A hint at the standstill ends the sensor's word for this stop: a sensor that fires standing (an idling
    /// engine) is not trusted to report the start, and the next stop nap is the plain one.
    @Test func aHintWhileStandingEndsTheSensorsWordForTheStop() throws {
        var (harness, _) = Self.stopped(heralded: true)
        harness.send(.motionHint, at: 10)
        harness.advance(to: 22)
        let still = harness.fix(makeFix(t: 24, accuracy: 5, speed: 0), at: 24)
        #expect(still.scheduled(.predictionWake) == 42)
        // With no hint the sensor's word holds at the next wake: the stop is napped out again.
        var (quiet, _) = Self.stopped(heralded: true)
        let wake = try #require(quiet.timers[.predictionWake]).seconds
        quiet.advance(to: wake)
        let next = try #require(quiet.fix(makeFix(t: wake + 2, accuracy: 5, speed: 0), at: wake + 2).scheduled(.predictionWake))
        #expect(abs(next.seconds - (wake + 2 + 1200.0.squareRoot() - 2)) < 0.001, "wake at \(next)")
    }

    /// A stop as long as a pause's window (300 s for this activity) that did not pause (here pauses are off;
    /// on the road, a stop whose wakes found no sky): a hint wakes the receiver at once and the departure is
    /// watched out, the receiver up until the track has left the stop by the bound.
    @Test func aHintAfterALongStopWakesAtOnceAndWatchesTheDepartureOut() throws {
        var (harness, _) = Self.stopped(heralded: true, pausing: false)
        var now = 4.0
        while now < 310 {
            let wake = try #require(harness.timers[.predictionWake]).seconds
            harness.advance(to: wake)
            now = wake + 2
            harness.fix(makeFix(t: now, accuracy: 5, speed: 0), at: now)
        }
        let hint = harness.send(.motionHint, at: now + 1)
        #expect(hint.regimes == [.continuous])
        var east = 0.0
        var t = now + 3
        while east <= 100 {
            #expect(harness.fix(makeFix(t: t, east: east, accuracy: 5, speed: 8), at: t).scheduled(.predictionWake) == nil)
            t += 1
            east += 8
        }
        #expect(harness.fix(makeFix(t: t, east: east, accuracy: 5, speed: 8), at: t).scheduled(.predictionWake) != nil)
    }

    /// A stop with no sky (a car park) under a sensor that has its word: the wake that finds no fix sleeps as a
    /// pause with a sensor does, until a hint or the fallback probe (30 min), not the 60 s the series would
    /// start from; without the word the series backs off as before. A hint ends either nap.
    @Test(arguments: [true, false])
    func aStopWithoutSkyWaitsForTheSensorOnItsWord(heralded: Bool) throws {
        var (harness, _) = Self.stopped(heralded: heralded)
        let wake = try #require(harness.timers[.predictionWake]).seconds
        harness.advance(to: wake)
        let timeout = try #require(harness.timers[.acquisitionTimeout]).seconds
        let failed = harness.advance(to: timeout)
        #expect(failed.events.map(\.kind) == [.acquisitionFailed])
        let next = try #require(failed.scheduled(.predictionWake)).seconds
        #expect(next - timeout == (heralded ? 1800 : 60), "next attempt \(next - timeout) s on")
        #expect(harness.send(.motionHint, at: timeout + 5).regimes == [.continuous])
    }
}
