import GPSModel
import Policy
import Testing

/// docs/contract.md §5: deferred updates with Core Location's errors and exactly one finish per request.
@Suite struct DeferredTests {
    struct RefusalCase: Sendable, CustomTestStringConvertible {
        var name: String
        var configuration: UpdatesConfiguration?
        var error: DeferredError
        var testDescription: String { name }
    }

    static let refusals: [RefusalCase] = [
        RefusalCase(name: "updates not running", configuration: nil, error: .notUpdatingLocation),
        RefusalCase(
            name: "hundredMeters", configuration: UpdatesConfiguration(desiredAccuracy: .hundredMeters),
            error: .accuracyTooLow),
        RefusalCase(
            name: "nearestTenMeters", configuration: UpdatesConfiguration(desiredAccuracy: .nearestTenMeters),
            error: .accuracyTooLow),
        RefusalCase(
            name: "distance filter", configuration: UpdatesConfiguration(distanceFilter: 10), error: .distanceFiltered),
        RefusalCase(
            name: "bestForNavigation driving",
            configuration: UpdatesConfiguration(
                desiredAccuracy: .bestForNavigation, activityType: .automotiveNavigation),
            error: .failed),
        RefusalCase(
            name: "bestForNavigation flying",
            configuration: UpdatesConfiguration(desiredAccuracy: .bestForNavigation, activityType: .airborne),
            error: .failed),
    ]

    @Test(arguments: refusals)
    func refusesAsCoreLocationDoes(_ c: RefusalCase) {
        var harness = Harness()
        if let configuration = c.configuration { harness.send(.startUpdates(configuration), at: 0) }
        let actions = harness.send(.allowDeferredUpdates(untilTraveled: 100, timeout: 60), at: 1)
        #expect(actions.deferredFinishes == [c.error])
        #expect(!harness.policy.isDeferring)
        if let configuration = c.configuration { #expect(configuration.deferralRefusal?.error == c.error) }
    }

    @Test func bestForNavigationOnFootMayBatch() {
        var harness = Harness()
        harness.send(
            .startUpdates(UpdatesConfiguration(desiredAccuracy: .bestForNavigation, activityType: .fitness)), at: 0)
        #expect(harness.send(.allowDeferredUpdates(untilTraveled: 100, timeout: nil), at: 1).deferredFinishes.isEmpty)
        #expect(harness.policy.isDeferring)
    }

    /// Held until the distance is travelled, then one finish and the whole batch, once.
    @Test func holdsUntilTheDistanceIsTravelled() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .automotiveNavigation)), at: 0)
        #expect(harness.fix(makeFix(t: 0, speed: 10), at: 0).delivered.count == 1)
        harness.send(.allowDeferredUpdates(untilTraveled: 95, timeout: nil), at: 0.5)
        var actions: [PolicyAction] = []
        for second in 1...9 {
            actions += harness.fix(makeFix(t: Double(second), east: Double(second) * 10, speed: 10), at: Double(second))
        }
        #expect(actions.delivered.isEmpty)
        #expect(harness.policy.heldLocations.count == 9)
        let last = harness.fix(makeFix(t: 10, east: 100, speed: 10), at: 10)
        #expect(last.deferredFinishes == [nil])
        #expect(last.batches.count == 1)
        #expect(last.batches.first?.count == 10)
        #expect(last.eventNames == ["deferredFinished"])
        // Core Location's order: the finish, then the batch.
        let finish = last.firstIndex { if case .emit = $0 { true } else { false } }
        let batch = last.firstIndex { if case .deliver = $0 { true } else { false } }
        #expect((finish ?? 99) < (batch ?? -1))
        // Afterwards, back to one at a time, and no second finish.
        let after = harness.moving(from: 11, to: 20, speed: 10, east0: 110)
        #expect(after.batches.allSatisfy { $0.count == 1 })
        #expect(after.deferredFinishes.isEmpty)
    }

    @Test func timeoutDeliversTheBatch() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration()), at: 0)
        harness.send(.allowDeferredUpdates(untilTraveled: nil, timeout: 30), at: 0)
        var actions = harness.moving(from: 1, to: 29, speed: 1)
        #expect(actions.delivered.isEmpty)
        actions = harness.advance(to: 30)
        #expect(actions.deferredFinishes == [nil])
        #expect(actions.batches.map(\.count) == [29])
        #expect(actions.events.first?.detail == "deferral timeout of 30 s elapsed")
    }

    @Test func aNewRequestCancelsTheOldOneWhichStillDeliversWhatItHeld() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration()), at: 0)
        harness.send(.allowDeferredUpdates(untilTraveled: 1000, timeout: 600), at: 0)
        harness.moving(from: 1, to: 5, speed: 1)
        let replaced = harness.send(.allowDeferredUpdates(untilTraveled: 1000, timeout: 600), at: 6)
        #expect(replaced.deferredFinishes == [.canceled])
        #expect(replaced.batches.map(\.count) == [5])
        #expect(harness.policy.isDeferring)
        let stopped = harness.send(.stopUpdates, at: 7)
        #expect(stopped.deferredFinishes == [.notUpdatingLocation])
        #expect(harness.allActions.deferredFinishes.count == 2)  // one per request
    }

    /// A harness whose updates (`updates`) started at 0 s and were deferred then, with no distance and no timeout.
    static func deferring(
        _ updates: UpdatesConfiguration = UpdatesConfiguration(), configuration: PolicyConfiguration = PolicyConfiguration()
    ) -> Harness {
        var harness = Harness(configuration: configuration)
        harness.send(.startUpdates(updates), at: 0)
        harness.send(.allowDeferredUpdates(untilTraveled: nil, timeout: nil), at: 0)
        return harness
    }

    @Test func flushDeliversWhatIsHeldAndTheDeferralGoesOn() {
        var harness = Self.deferring()
        harness.moving(from: 1, to: 4, speed: 1)
        let flushed = harness.send(.flush, at: 5)
        #expect(flushed.batches.map(\.count) == [4])
        #expect(flushed.deferredFinishes.isEmpty)
        #expect(harness.policy.isDeferring)
        #expect(harness.send(.flush, at: 6).isEmpty)  // nothing held, nothing delivered
    }

    @Test func aFullBufferFlushesEarly() {
        var configuration = PolicyConfiguration()
        configuration.deferredBufferCapacity = 5
        var harness = Self.deferring(configuration: configuration)
        let actions = harness.moving(from: 1, to: 12, speed: 1)
        #expect(actions.batches.map(\.count) == [5, 5])
        #expect(actions.deferredFinishes.isEmpty)
        #expect(harness.policy.heldLocations.count == 2)
    }

    @Test func disallowFinishesWithCanceledAndDelivers() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration()), at: 0)
        harness.send(.allowDeferredUpdates(untilTraveled: nil, timeout: 100), at: 0)
        harness.moving(from: 1, to: 3, speed: 1)
        let actions = harness.send(.disallowDeferredUpdates, at: 4)
        #expect(actions.deferredFinishes == [.canceled])
        #expect(actions.batches.map(\.count) == [3])
        #expect(actions.contains(.cancel(.deferredTimeout)))
        #expect(harness.send(.disallowDeferredUpdates, at: 5).isEmpty)
    }

    /// On shutdown nothing held is lost.
    @Test func shutdownDeliversEverythingHeld() {
        var harness = Self.deferring()
        harness.moving(from: 1, to: 7, speed: 1)
        let actions = harness.send(.shutdown, at: 8)
        #expect(actions.delivered.count == 7)
        #expect(actions.deferredFinishes == [.canceled])
        #expect(actions.regimes == [.off])
        #expect(harness.timers.isEmpty)
    }

    /// A reconfiguration that deferral does not allow ends it with the matching error.
    @Test func reconfiguringToACoarseLevelEndsTheDeferral() {
        var harness = Self.deferring()
        let actions = harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .kilometer)), at: 1)
        #expect(actions.deferredFinishes == [.accuracyTooLow])
    }

    /// A pause does not sit on held fixes.
    @Test func pauseFlushesTheBatch() {
        var harness = Self.deferring(UpdatesConfiguration(activityType: .fitness))
        let actions = harness.stationary(from: 0, to: 120)
        #expect(actions.eventNames == ["paused"])
        #expect(actions.batches.map(\.count) == [121])
        #expect(harness.policy.isDeferring)
    }
}
