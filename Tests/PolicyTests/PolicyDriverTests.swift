import GPSModel
import Policy
import Testing

@Suite struct PolicyDriverTests {
    /// Two requests whose timeouts fall at 11 and 15.
    private func driverWithTwoRequests(instantsNeverGoBack: Bool = false) -> PolicyDriver {
        var driver = PolicyDriver(Policy(), instantsNeverGoBack: instantsNeverGoBack)
        driver.handle(.requestLocation(1, timeout: 15, desiredAccuracy: nil), at: 0)
        driver.handle(.requestLocation(2, timeout: 10, desiredAccuracy: nil), at: 1)
        return driver
    }

    @Test func dueTimersFireFirstInDeadlineOrderEachAtItsDeadline() {
        var driver = driverWithTwoRequests()
        #expect(driver.nextDeadline == 11)
        let steps = driver.handle(.flush, at: 20)
        #expect(steps.map(\.event) == [.timerFired(.request(2)), .timerFired(.request(1)), .flush])
        #expect(steps.map(\.at) == [11, 15, 20])
        #expect(driver.nextDeadline == nil)
        #expect(driver.policy.pendingRequests.isEmpty)
    }

    @Test func advanceFiresOnlyWhatIsDue() {
        var driver = driverWithTwoRequests()
        #expect(driver.advance(to: 10.9).isEmpty)
        let steps = driver.advance(to: 11)
        #expect(steps.map(\.event) == [.timerFired(.request(2))])
        #expect(driver.timers[.request(1)] == 15)
        #expect(driver.nextDeadline == 15)
        #expect(driver.policy.pendingRequests == [1])
    }

    @Test func timerActionsKeepTheTimers() {
        var driver = PolicyDriver(Policy())
        let steps = driver.handle(.requestLocation(7, timeout: 30, desiredAccuracy: nil), at: 5)
        #expect(steps.flatMap(\.actions).contains(.schedule(.request(7), at: 35)))
        #expect(driver.timers[.request(7)] == 35)
        driver.handle(.cancelRequest(7), at: 6)
        #expect(driver.timers.isEmpty)
        #expect(driver.nextDeadline == nil)
    }

    @Test func instantsGoBackOnlyWhenAllowed() {
        var scripted = driverWithTwoRequests()
        #expect(scripted.handle(.flush, at: 0.5).last?.at == 0.5)
        var guarded = driverWithTwoRequests(instantsNeverGoBack: true)
        #expect(guarded.handle(.flush, at: 0.5).last?.at == 1)
        #expect(guarded.lastInstant == 1)
    }

    @Test func performSeesThePolicyRightAfterEachStep() {
        var driver = PolicyDriver(Policy())
        let fix = makeFix(t: 3)
        var known: [Location?] = []
        driver.handle(.requestLocation(1, timeout: 2, desiredAccuracy: nil), at: 0) { _, policy in
            known.append(policy.lastKnownLocation)
        }
        driver.handle(.fix(fix), at: 3) { step, policy in
            known.append(policy.lastKnownLocation)
            if case .timerFired = step.event { #expect(policy.pendingRequests.isEmpty) }
        }
        #expect(known == [nil, nil, fix])
    }

    @Test func noTimerFiresAfterShutdown() {
        var driver = driverWithTwoRequests()
        driver.handle(.shutdown, at: 2)
        #expect(driver.isShutDown)
        #expect(driver.advance(to: 100).isEmpty)
    }
}
