import GPSModel
import Policy
import Testing

/// docs/contract.md §3: the seven levels, their acceptance, their receiver regime and the duty cycle; the
/// distance filter.
@Suite struct AccuracyTests {
    static let thresholds: [(DesiredAccuracy, Double)] = [
        (.bestForNavigation, 100), (.best, 100), (.nearestTenMeters, 10), (.hundredMeters, 100),
        (.kilometer, 1000), (.threeKilometers, 3000),
    ]

    @Test(arguments: thresholds)
    func acceptsWithinTheLevelsThresholdOnly(level: DesiredAccuracy, threshold: Double) {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: level)), at: 0)
        let worse = harness.fix(makeFix(t: 1, accuracy: threshold * 1.2), at: 1)
        #expect(worse.delivered.isEmpty)
        if level != .nearestTenMeters {  // which holds it as a warm-up candidate instead
            #expect(worse.discards.contains(.inaccurate(accuracy: threshold * 1.2, limit: threshold)))
        }
        let within = harness.fix(makeFix(t: 2, accuracy: threshold * 0.9), at: 2)
        #expect(within.delivered.count == 1)
    }

    @Test func reducedAcceptsAnyAccuracyAndCoarsensToAFixedGrid() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .reduced)), at: 0)
        let first = harness.fix(makeFix(t: 1, north: 10, east: 10, accuracy: 5000), at: 1).delivered
        #expect(first.count == 1)
        let snapped = first[0]
        #expect(snapped.horizontalAccuracy == 2000)
        #expect(snapped.speed == nil && snapped.altitude == nil)
        // A point 300 m away lands on the same grid node: nothing finer than the grid leaks.
        var other = Harness()
        other.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .reduced)), at: 0)
        let second = other.fix(makeFix(t: 1, north: 210, east: -190, accuracy: 5), at: 1).delivered
        #expect(second.first?.latitude == snapped.latitude)
        #expect(second.first?.longitude == snapped.longitude)
        #expect(snapped.latitude != makeFix(t: 1, north: 10).latitude)
    }

    @Test func reducedDeliversAtMostFourAnHour() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .reduced)), at: 0)
        var delivered = 0
        // A receiver that would give a fix every second for an hour, moving fast.
        for second in 0...3600 {
            harness.advance(to: Double(second))
            delivered +=
                harness.fix(makeFix(t: Double(second), east: Double(second) * 30, speed: 30), at: Double(second))
                .delivered.count
        }
        #expect(delivered >= 1 && delivered <= 5)  // the first at t = 0, then at most one per 15 min
    }

    struct RegimeCase: Sendable, CustomTestStringConvertible {
        var level: DesiredAccuracy
        var receiver: ReceiverModel
        var first: ReceiverRegime
        var afterFix: ReceiverRegime
        var testDescription: String { "\(level) on \(receiver.name)" }
    }

    static let regimeCases: [RegimeCase] = [
        RegimeCase(level: .bestForNavigation, receiver: .ublox8, first: .continuous, afterFix: .continuous),
        RegimeCase(level: .best, receiver: .ublox8, first: .continuous, afterFix: .continuous),
        RegimeCase(level: .nearestTenMeters, receiver: .ublox8, first: .powerSave, afterFix: .powerSave),
        RegimeCase(level: .nearestTenMeters, receiver: .genericNMEA, first: .continuous, afterFix: .continuous),
        // With a backup cell, off keeps a hot start and costs nothing: cheaper than the board's standby.
        RegimeCase(level: .hundredMeters, receiver: .ublox8, first: .continuous, afterFix: .off),
        // MediaTek: standby (PMTK161); PMTK has no off a command can undo.
        RegimeCase(level: .kilometer, receiver: .mt3339, first: .continuous, afterFix: .standby),
        RegimeCase(level: .threeKilometers, receiver: .switchedNMEA, first: .continuous, afterFix: .off),
        RegimeCase(level: .reduced, receiver: .switchedNMEA, first: .continuous, afterFix: .off),
        // Without a switch nothing takes it down: the duty-cycled levels only filter what it delivers.
        RegimeCase(level: .reduced, receiver: .genericNMEA, first: .continuous, afterFix: .continuous),
    ]

    @Test(arguments: regimeCases)
    func levelsRunTheReceiverAsTheTableSays(_ c: RegimeCase) {
        var harness = Harness(receiver: c.receiver)
        let started = harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: c.level)), at: 0)
        #expect(started.regimes == [c.first])
        let afterFix = harness.fix(makeFix(t: 1, accuracy: 5, speed: 1), at: 1)
        #expect(afterFix.delivered.count == 1)
        #expect(harness.policy.regime == c.afterFix)
    }

    struct IntervalCase: Sendable, CustomTestStringConvertible {
        var level: DesiredAccuracy
        var speed: Double?
        var distanceFilter: Double? = nil
        var interval: Double
        var testDescription: String { "\(level) at \(speed.map { "\($0) m/s" } ?? "unknown speed")" }
    }

    static let intervalCases: [IntervalCase] = [
        IntervalCase(level: .hundredMeters, speed: 2, interval: 50),  // 100 m at 2 m/s
        IntervalCase(level: .hundredMeters, speed: 0, interval: 120),  // not moving: the level's maximum
        IntervalCase(level: .hundredMeters, speed: 40, interval: 15),  // fast: the level's minimum
        IntervalCase(level: .hundredMeters, speed: nil, interval: 15),  // unknown: learn quickly
        IntervalCase(level: .kilometer, speed: 5, interval: 200),
        IntervalCase(level: .kilometer, speed: 5, distanceFilter: 2500, interval: 500),  // max(filter, accuracy)
        IntervalCase(level: .threeKilometers, speed: 1, interval: 1200),
        IntervalCase(level: .reduced, speed: 30, interval: 900),  // at most 4 an hour
    ]

    @Test(arguments: intervalCases)
    func dutyCycleWakesWhenThePositionCouldHaveMoved(_ c: IntervalCase) throws {
        var harness = Harness()
        harness.send(
            .startUpdates(UpdatesConfiguration(desiredAccuracy: c.level, distanceFilter: c.distanceFilter)), at: 0)
        let actions = harness.fix(makeFix(t: 3, speed: c.speed), at: 3)
        #expect(actions.delivered.count == 1)
        let wake = try #require(actions.scheduled(.dutyCycleWake))
        #expect(abs(wake.seconds - 3 - c.interval) < 1e-6)
        #expect(actions.contains(.cancel(.acquisitionTimeout)))
    }

    @Test func duplicateWakesDeliverOnlyOnTheirOwnWake() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .hundredMeters)), at: 0)
        #expect(harness.fix(makeFix(t: 1, speed: 0), at: 1).delivered.count == 1)
        // Fixes that still arrive while the level sleeps (another activity keeps the receiver up) are not its.
        #expect(harness.fix(makeFix(t: 2, east: 500, speed: 0), at: 2).delivered.isEmpty)
    }

    @Test func acquisitionTimeoutBacksOffAndSaysSo() throws {
        var harness = Harness(receiver: .ublox8)
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .hundredMeters)), at: 0)
        #expect(harness.timers[.acquisitionTimeout] == 60)
        let first = harness.advance(to: 60)
        #expect(first.delivered.isEmpty)
        #expect(first.eventNames == ["acquisitionFailed"])
        #expect(first.events.first?.detail.contains("next attempt in 30 s") == true)
        #expect(first.regimes.count == 1 && first.regimes[0] < .powerSave)  // powered down
        #expect(harness.timers[.dutyCycleWake] == 90)  // 15 s × 2
        let second = harness.advance(to: 150)  // wakes at 90, times out at 150
        #expect(second.eventNames == ["acquisitionFailed"])
        #expect(second.events.first?.detail.contains("2nd failure") == true)
        #expect(harness.timers[.dutyCycleWake] == 210)  // 15 s × 4
        // A fix resets the backoff.
        harness.advance(to: 210)
        let fix = harness.fix(makeFix(t: 211, speed: 40), at: 211)
        #expect(fix.delivered.count == 1)
        #expect(try #require(fix.scheduled(.dutyCycleWake)) == 226)
    }

    /// While gpsd is down (or the receiver unplugged) a wake that finds no fix says nothing about the sky: the
    /// backoff does not grow, and the detail says why; once the receiver is back, failures count again.
    @Test func aWakeWhileTheReceiverIsUnreachableIsNotAFailure() throws {
        var harness = Harness(receiver: .ublox8)
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .hundredMeters)), at: 0)
        harness.send(.receiverLost("gpsd went away"), at: 10)
        let first = harness.advance(to: 60)
        #expect(first.events.first?.detail.contains("not counted: gpsd or the receiver is unreachable") == true)
        #expect(harness.timers[.dutyCycleWake] == 75)  // 15 s, not doubled
        let second = harness.advance(to: 135)  // wakes at 75, times out at 135
        #expect(second.eventNames == ["acquisitionFailed"])
        #expect(harness.timers[.dutyCycleWake] == 150)  // still 15 s
        harness.send(.receiverBack, at: 140)
        let third = harness.advance(to: 210)  // wakes at 150, times out at 210: counted now
        #expect(third.events.first?.detail.contains("1st failure in a row") == true)
        #expect(harness.timers[.dutyCycleWake] == 240)  // 15 s × 2
    }

    @Test func nearestTenMetersDeliversTheBestOfTheWarmUpWhenNothingReachesTenMeters() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .nearestTenMeters)), at: 0)
        var delivered: [Location] = []
        let accuracies: [Double] = [40, 25, 18, 30, 22, 35]
        for second in 0...31 {
            let accuracy = accuracies[second % accuracies.count]
            delivered += harness.fix(makeFix(t: Double(second), accuracy: accuracy), at: Double(second)).delivered
        }
        #expect(delivered.count == 1)
        #expect(delivered.first?.horizontalAccuracy == 18)
        // A fix that reaches 10 m is delivered at once.
        #expect(harness.fix(makeFix(t: 32, accuracy: 8), at: 32).delivered.count == 1)
    }

    /// A duty-cycle wake whose fix the distance filter holds back says so (docs/contract.md §10); a wake that
    /// delivers, and a continuous level's held fix, say nothing.
    @Test func aWakeHeldByTheDistanceFilterSaysItDeliveredNothing() throws {
        var harness = Harness()
        harness.send(
            .startUpdates(UpdatesConfiguration(desiredAccuracy: .hundredMeters, distanceFilter: 500)), at: 0)
        let first = harness.fix(makeFix(t: 1, speed: 0), at: 1)
        #expect(first.delivered.count == 1)
        #expect(!first.eventNames.contains("wakeDeliveredNothing"))
        let wake = try #require(first.scheduled(.dutyCycleWake))
        harness.advance(to: wake.seconds)
        let held = harness.fix(makeFix(t: wake.seconds + 1, east: 120, speed: 0), at: wake.seconds + 1)
        #expect(held.delivered.isEmpty)
        let event = try #require(held.events.first { $0.kind == .wakeDeliveredNothing })
        #expect(event.detail == "wake delivered nothing: held by the distance filter (120 m < 500 m)")
        // It went back to sleep all the same.
        #expect(held.scheduled(.dutyCycleWake) != nil)

        var continuous = Harness()
        continuous.send(.startUpdates(UpdatesConfiguration(distanceFilter: 50)), at: 0)
        continuous.fix(makeFix(t: 0, speed: 10), at: 0)
        #expect(!continuous.fix(makeFix(t: 1, east: 10, speed: 10), at: 1).eventNames.contains("wakeDeliveredNothing"))
    }

    @Test func distanceFilterMeasuresFromTheLastDeliveredLocation() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(distanceFilter: 50)), at: 0)
        let positions: [(Double, Bool)] = [(0, true), (20, false), (40, false), (60, true), (100, false), (111, true)]
        for (index, (east, expected)) in positions.enumerated() {
            let actions = harness.fix(makeFix(t: Double(index), east: east, speed: 10), at: Double(index))
            #expect((actions.delivered.count == 1) == expected, "fix at \(east) m")
            if !expected {
                guard case .distanceFiltered = actions.discards.first else {
                    Issue.record("expected a distance-filter discard at \(east) m")
                    continue
                }
            }
        }
    }
}

@Suite struct OfferedRegimesTests {
    /// Power control narrows the regimes: a u-blox found on its own USB port cannot reach backup, so a policy
    /// that had it off moves it to standby at once, and never asks for off again.
    @Test func aRegimeNoLongerOfferedIsLeftAtOnce() {
        var harness = Harness(receiver: .ublox8)
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .hundredMeters)), at: 0)
        harness.fix(makeFix(t: 1, accuracy: 5, speed: 1), at: 1)
        #expect(harness.policy.regime == .off)
        let offered = harness.send(.regimesOffered([.continuous, .powerSave, .standby]), at: 2)
        #expect(offered.regimes == [.standby])
        #expect(offered.regimeReasons.first?.contains("power control offers continuous, powerSave, standby") == true)
        #expect(harness.policy.receiver.effectiveRegime(.off) == .standby)
        #expect(harness.policy.configuredReceiver.effectiveRegime(.off) == .off)
        // Regimes the receiver never supported stay out even when offered.
        var generic = Harness(receiver: .switchedNMEA)
        generic.send(.regimesOffered(Set(ReceiverRegime.allCases)), at: 0)
        #expect(generic.policy.receiver.reachableRegimes == [.continuous, .off])
    }
}
