import Capture
import Testing

/// A wall clock the test moves: sleeping advances it.
private final class FakeClock {
    var now: Double
    var sleeps: [Double] = []
    init(_ now: Double) { self.now = now }

    func pacer(speed: Double?, origin: Double) -> Pacer {
        Pacer(speed: speed, origin: origin, clock: { self.now }, sleep: { self.sleeps.append($0); self.now += $0 })
    }
}

@Suite struct PacerTests {
    @Test func captureTimeIsDueAtItsOffsetDividedBySpeed() {
        let clock = FakeClock(50)
        let pacer = clock.pacer(speed: 10, origin: 100)
        #expect(pacer.secondsUntil(110) == 1)
        #expect(pacer.secondsUntil(100) == 0)
        clock.now = 50.5
        #expect(pacer.reached == 105)
        #expect(pacer.secondsUntil(110) == 0.5)
    }

    @Test func waitSleepsInSlicesUntilDue() {
        let clock = FakeClock(0)
        let pacer = clock.pacer(speed: 2, origin: 10)
        #expect(pacer.wait(until: 12, slice: 0.25, shouldStop: { false }))
        #expect(clock.now == 1)
        #expect(clock.sleeps == [0.25, 0.25, 0.25, 0.25])
        // Already due: no sleep.
        #expect(pacer.wait(until: 11.5, shouldStop: { false }))
        #expect(clock.sleeps.count == 4)
        // The default slice is short enough for a stop request to be heard soon.
        #expect(pacer.wait(until: 12.3, shouldStop: { false }))
        #expect(clock.now >= 1.15)
        #expect(clock.sleeps.dropFirst(4).allSatisfy { $0 <= 0.05 })
    }

    @Test func waitStopsWhenAsked() {
        let clock = FakeClock(0)
        let pacer = clock.pacer(speed: 1, origin: 0)
        var checks = 0
        let waited = pacer.wait(until: 100) {
            checks += 1
            return checks > 2
        }
        #expect(!waited)
        #expect(clock.sleeps.count == 2)
    }

    @Test(arguments: [nil, 0, -1, Double.infinity, Double.nan] as [Double?])
    func withoutASpeedNothingWaits(speed: Double?) {
        let clock = FakeClock(0)
        let pacer = clock.pacer(speed: speed, origin: 0)
        #expect(pacer.speed == nil)
        #expect(pacer.secondsUntil(1e9) == 0)
        #expect(pacer.reached == .infinity)
        #expect(pacer.wait(until: 1e9, shouldStop: { true }))
        #expect(clock.sleeps.isEmpty)
    }
}
