import GPIOLines
import Testing

/// Debouncing is pure; opening a line is tested for its failure only, as this machine has no GPIO chip (the VM
/// rig would bring gpio-sim).
@Suite struct GPIOMotionLineTests {
    @Test func aBurstIsOneHintAndTheFirstActivationIsItAtOnce() {
        var debounce = MotionDebounce(interval: 1)
        let times = [100.0, 100.001, 100.02, 100.5, 100.999]
        let hints = times.map { debounce.activated(at: $0) }
        #expect(hints == [true, false, false, false, false])
    }

    @Test func motionThatGoesOnGivesAHintEveryInterval() {
        var debounce = MotionDebounce(interval: 1)
        let times = stride(from: 0.0, through: 3.0, by: 0.25).map { $0 }
        let hints = times.filter { debounce.activated(at: $0) }
        #expect(hints == [0, 1, 2, 3])
    }

    @Test func aZeroIntervalPassesEveryActivation() {
        var debounce = MotionDebounce(interval: 0)
        let hints = [5.0, 5.0, 5.1].map { debounce.activated(at: $0) }
        #expect(hints == [true, true, true])
    }

    /// A clock that stepped back (a time before the last hint) must not swallow hints until it catches up.
    @Test func aTimeBeforeTheLastHintIsANewHint() {
        var debounce = MotionDebounce(interval: 10)
        let hints = [1000.0, 5, 6].map { debounce.activated(at: $0) }
        #expect(hints == [true, true, false])
    }

    @Test func aMissingChipIsNamedInTheError() {
        do {
            _ = try GPIOMotionLine(chip: "gpiochip-lodestar-missing", line: .offset(27), activeLow: true)
            Issue.record("a missing chip opened")
        } catch {
            #expect(
                error.description.hasPrefix(
                    "motion GPIO gpiochip-lodestar-missing line 27 (active low): cannot open the chip (open gpiochip-lodestar-missing: "),
                "\(error)")
            #expect(error.description.contains("gpiodetect"))
        }
    }
}
