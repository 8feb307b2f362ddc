import GPSModel
import Policy
import Testing

/// A service restarted with its saved state: the last known location comes back, as Core Location's cached
/// location survives a relaunch, but is never delivered as if it were new.
@Suite struct RestoreTests {
    @Test func aRestoredLocationIsKnownButNotDelivered() {
        var harness = Harness()
        let saved = makeFix(t: -3600, east: 100)
        let actions = harness.send(.restoreLastKnownLocation(saved), at: 0)
        #expect(harness.policy.lastKnownLocation == saved)
        #expect(!actions.contains { if case .deliver = $0 { true } else { false } })
    }

    @Test func significantChangeStartsFromTheRestoredLocation() {
        var harness = Harness()
        harness.send(.restoreLastKnownLocation(makeFix(t: -3600)), at: 0)
        let actions = harness.send(.startSignificantChange, at: 0)
        #expect(actions.eventNames == ["significantChange"])
    }

    @Test func aFixAlreadySeenIsNotReplacedByAnOlderSavedOne() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration()), at: 0)
        let live = makeFix(t: 1)
        harness.fix(live, at: 1)
        harness.send(.restoreLastKnownLocation(makeFix(t: -3600, east: 500)), at: 2)
        #expect(harness.policy.lastKnownLocation == live)
    }
}
