import GPSModel
import Policy
import Testing

/// docs/contract.md §6: significant-change monitoring.
@Suite struct SignificantChangeTests {
    struct StepCase: Sendable, CustomTestStringConvertible {
        var name: String
        /// (seconds after the first event, metres east of it)
        var at: Double
        var east: Double
        var fires: Bool
        var testDescription: String { name }
    }

    static let steps: [StepCase] = [
        StepCase(name: "499 m after 10 min", at: 600, east: 499, fires: false),
        StepCase(name: "501 m after 10 min", at: 600, east: 501, fires: true),
        StepCase(name: "2 km after 4 min", at: 240, east: 2000, fires: false),
        StepCase(name: "2 km after 5 min", at: 300, east: 2000, fires: true),
    ]

    @Test(arguments: steps)
    func firesAt500MetresAndAtMostEveryFiveMinutes(_ c: StepCase) {
        var harness = Harness()
        // Updates keep the receiver running, so every fix reaches the monitor: only its own rules decide.
        harness.send(.startUpdates(UpdatesConfiguration(pausesAutomatically: false)), at: 0)
        harness.send(.startSignificantChange, at: 0)
        let first = harness.fix(makeFix(t: 1), at: 1)
        #expect(first.eventNames == ["significantChange"])
        let actions = harness.fix(makeFix(t: 1 + c.at, east: c.east, speed: 5), at: 1 + c.at)
        #expect(actions.eventNames.contains("significantChange") == c.fires)
    }

    @Test func firstEventMayBeTheLastKnownLocation() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration()), at: 0)
        let known = makeFix(t: 0)
        harness.fix(known, at: 0)
        harness.send(.stopUpdates, at: 1)
        let started = harness.send(.startSignificantChange, at: 100)
        guard case .significantChange(let location)? = started.events.first?.kind else {
            Issue.record("expected the cached location as the first event")
            return
        }
        #expect(location == known)
        #expect(started.events.first?.detail.contains(known.timestamp.iso8601) == true)
    }

    /// Lowest power between wakes, a fix per wake, and no use of distanceFilter or desiredAccuracy.
    @Test func wakesForAFixAndSleepsAtTheLowestPower() throws {
        var harness = Harness(receiver: .mt3339)
        let started = harness.send(.startSignificantChange, at: 0)
        #expect(started.regimes == [.continuous])
        let fixed = harness.fix(makeFix(t: 5, accuracy: 150, speed: 0), at: 5)
        #expect(fixed.eventNames == ["significantChange"])
        #expect(fixed.regimes == [.standby])  // MTK standby (PMTK161): PMTK has no off a command undoes
        let wake = try #require(fixed.scheduled(.significantChangeWake))
        #expect(wake == 1805)  // not moving: the longest wake interval
        #expect(harness.advance(to: 1805).regimes == [.continuous])
        let timedOut = harness.advance(to: 1865)
        #expect(timedOut.eventNames == ["acquisitionFailed"])
        #expect(timedOut.regimes == [.standby])
    }

    @Test func ignoresTheDistanceFilter() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(distanceFilter: 5000, pausesAutomatically: false)), at: 0)
        harness.send(.startSignificantChange, at: 0)
        harness.fix(makeFix(t: 1), at: 1)
        let moved = harness.fix(makeFix(t: 400, east: 800, speed: 5), at: 400)
        #expect(moved.eventNames == ["significantChange"])
        #expect(moved.delivered.isEmpty)  // the distance filter still holds for updates
    }
}

/// docs/contract.md §7: single-shot requests.
@Suite struct RequestTests {
    @Test func firstFixMeetingTheAccuracyAnswersAndPowersBackDown() {
        var harness = Harness()
        let asked = harness.send(.requestLocation(1, timeout: 15, desiredAccuracy: .hundredMeters), at: 0)
        #expect(asked.regimes == [.continuous])
        #expect(harness.timers[.request(1)] == 15)
        let coarse = harness.fix(makeFix(t: 2, accuracy: 300), at: 2)
        #expect(coarse.eventNames.isEmpty)
        let good = harness.fix(makeFix(t: 3, accuracy: 40), at: 3)
        #expect(good.eventNames == ["requestCompleted"])
        #expect(good.regimes == [.off])
        #expect(good.contains(.cancel(.request(1))))
        #expect(good.delivered.isEmpty)  // answers are events, not updates
    }

    @Test func atTheTimeoutTheBestFixSeenIsReturned() {
        var harness = Harness()
        harness.send(.requestLocation(7, timeout: 15, desiredAccuracy: .nearestTenMeters), at: 0)
        for (second, accuracy) in [(1, 80.0), (2, 25.0), (3, 60.0), (4, nil)] as [(Int, Double?)] {
            harness.fix(makeFix(t: Double(second), accuracy: accuracy), at: Double(second))
        }
        let timedOut = harness.advance(to: 15)
        guard case .requestCompleted(7, let location)? = timedOut.events.first?.kind else {
            Issue.record("expected the best fix at the timeout, got \(timedOut.eventNames)")
            return
        }
        #expect(location.horizontalAccuracy == 25)
        #expect(timedOut.regimes == [.off])
    }

    @Test func withoutAnyFixItFailsWithLocationUnknown() {
        var harness = Harness()
        harness.send(.requestLocation(3, timeout: 10, desiredAccuracy: nil), at: 0)
        harness.fix(makeFix(t: 1, mode: .noFix), at: 1)
        let failed = harness.advance(to: 10)
        #expect(failed.events.first?.kind == .requestFailed(3, .locationUnknown))
        #expect(failed.events.first?.detail == "no usable fix within 10 s")
    }

    @Test func concurrentRequestsShareOneAcquisition() {
        var harness = Harness()
        var actions = harness.send(.requestLocation(1, timeout: 15, desiredAccuracy: nil), at: 0)
        actions += harness.send(.requestLocation(2, timeout: 30, desiredAccuracy: nil), at: 1)
        #expect(actions.regimes == [.continuous])
        let answered = harness.fix(makeFix(t: 4), at: 4)
        #expect(answered.eventNames == ["requestCompleted", "requestCompleted"])
        #expect(answered.regimes == [.off])
        #expect(harness.policy.pendingRequests.isEmpty)
    }

    @Test func cancellingARequestAnswersItOnce() {
        var harness = Harness()
        harness.send(.requestLocation(5, timeout: 15, desiredAccuracy: nil), at: 0)
        let cancelled = harness.send(.cancelRequest(5), at: 1)
        #expect(cancelled.events.first?.kind == .requestFailed(5, .canceled))
        #expect(harness.advance(to: 20).isEmpty)
    }

    /// A stale timer firing (cancelled, replaced) does nothing.
    @Test func aTimerNoLongerExpectedIsIgnored() {
        var policy = Policy()
        #expect(policy.handle(.timerFired(.request(9)), now: 100).isEmpty)
        #expect(policy.handle(.timerFired(.probe), now: 100).isEmpty)
        _ = policy.handle(.requestLocation(9, timeout: 15, desiredAccuracy: nil), now: 0)
        #expect(policy.handle(.timerFired(.request(9)), now: 10).isEmpty)  // early
        #expect(!policy.handle(.timerFired(.request(9)), now: 15).isEmpty)
    }
}

/// docs/contract.md §8: every activity at once on one receiver, at the most demanding regime.
@Suite struct SharedReceiverTests {
    @Test func everyActivityAtOnceRunsAtTheMostDemandingRegime() throws {
        var harness = Harness(receiver: .mt3339)
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .kilometer)), at: 0)
        harness.send(.startSignificantChange, at: 0)
        let first = harness.fix(makeFix(t: 1, speed: 0), at: 1)
        #expect(first.delivered.count == 1)
        #expect(first.eventNames == ["significantChange"])
        // Both asleep: the receiver is down.
        #expect(try #require(harness.policy.regime) < .powerSave)

        // A request powers it up for itself only; the kilometer level stays asleep and delivers nothing.
        let asked = harness.send(.requestLocation(1, timeout: 15, desiredAccuracy: nil), at: 100)
        #expect(asked.regimes == [.continuous])
        let answer = harness.fix(makeFix(t: 102, east: 30), at: 102)
        #expect(answer.eventNames == ["requestCompleted"])
        #expect(answer.delivered.isEmpty)
        #expect(try #require(harness.policy.regime) < .powerSave)

        // Best-accuracy updates with a deferral on top: continuous, and the batch, the request and the
        // significant change each get theirs from the same fixes.
        harness.send(.startUpdates(UpdatesConfiguration(desiredAccuracy: .best, pausesAutomatically: false)), at: 200)
        #expect(harness.policy.regime == .continuous)
        harness.send(.allowDeferredUpdates(untilTraveled: 995, timeout: nil), at: 200)
        harness.send(.requestLocation(2, timeout: 15, desiredAccuracy: .best), at: 200)
        var actions: [PolicyAction] = []
        for second in 201...320 {
            actions += harness.fix(
                makeFix(t: Double(second), east: Double(second - 200) * 10, speed: 10), at: Double(second))
        }
        #expect(actions.eventNames.filter { $0 == "requestCompleted" }.count == 1)
        #expect(actions.deferredFinishes == [nil])
        #expect(actions.batches.filter { $0.count > 1 }.map(\.count) == [100])  // then one at a time again
        #expect(actions.eventNames.filter { $0 == "significantChange" }.count == 1)
        #expect(actions.regimes.isEmpty)  // continuous throughout

        // Updates stop: back down to what significant change needs.
        let stopped = harness.send(.stopUpdates, at: 400)
        #expect(try #require(stopped.regimes.first) < .powerSave)
    }

    @Test func aRequestWhilePausedDoesNotResumeUpdatesInPlace() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        harness.stationary(from: 0, to: 120)
        #expect(harness.policy.isPaused)
        let asked = harness.send(.requestLocation(1, timeout: 15, desiredAccuracy: nil), at: 125)
        #expect(asked.regimes == [.continuous])
        let answered = harness.fix(makeFix(t: 126, east: 4), at: 126)
        #expect(answered.eventNames == ["requestCompleted"])
        #expect(answered.regimes == [.off])
        #expect(harness.policy.isPaused)
    }

    @Test func aFixTakenForAnotherActivityOutsideTheRadiusResumes() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration(activityType: .fitness)), at: 0)
        harness.stationary(from: 0, to: 120)
        harness.send(.requestLocation(1, timeout: 15, desiredAccuracy: nil), at: 125)
        let moved = harness.fix(makeFix(t: 126, east: 300), at: 126)
        #expect(moved.eventNames.sorted() == ["requestCompleted", "resumed"])
        #expect(moved.delivered.count == 1)
    }

    @Test func receiverLostAndBackAreReportedAndTheRegimeIsRestored() {
        var harness = Harness()
        harness.send(.startUpdates(UpdatesConfiguration()), at: 0)
        let lost = harness.send(.receiverLost("gpsd closed the connection"), at: 5)
        #expect(lost.events.first?.kind == .receiverLost)
        #expect(lost.events.first?.detail == "gpsd closed the connection")
        let back = harness.send(.receiverBack, at: 9)
        #expect(back.eventNames == ["receiverBack"])
        #expect(back.contains(.setRegime(.continuous, reason: "receiver back: restoring continuous")))
    }
}
