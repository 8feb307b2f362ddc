@testable import GPIOLines
import Receivers
import SystemInterface
import Testing

#if canImport(Glibc)
import Glibc
#endif

// This machine has no GPIO chip (no gpio-sim or gpio-mockup): opening one must fail with a sentence naming the
// chip and line; switching itself is tested through InjectedPowerSwitch (ReceiversTests).
@Suite struct GPIOEnableLineTests {
    @Test(arguments: ["gpiochip-lodestar-missing", "/dev/gpiochip-lodestar-missing", "4093"])
    func aMissingChipIsNamedInTheError(chip: String) {
        #expect(throws: PowerSwitchError.self) { _ = try GPIOEnableLine(chip: chip, line: .offset(17)) }
        do {
            _ = try GPIOEnableLine(chip: chip, line: .offset(17), activeLow: true)
        } catch {
            let text = error.description
            #expect(text.hasPrefix("GPIO \(chip) line 17 (active low): cannot open the chip (open \(chip): "))
            #expect(text.contains("gpiodetect"), "the hint says how to list the chips: \(text)")
        }
    }

    @Test func aLineByNameIsQuotedInTheError() {
        do {
            _ = try GPIOEnableLine(chip: "gpiochip-lodestar-missing", line: .named("GPIO17"))
            Issue.record("a missing chip opened")
        } catch {
            #expect(error.description.hasPrefix("GPIO gpiochip-lodestar-missing line \"GPIO17\": cannot open the chip"))
        }
    }

    @Test func permissionHintNamesTheGroup() {
        let text = GPIOLineFailure(
            "GPIO gpiochip0 line 17", "cannot open the chip", SystemError("open", "gpiochip0", code: EACCES),
            hint: GPIOLineFailure.openHint(EACCES)
        ).description
        #expect(text.contains("Permission denied"))
        #expect(text.contains("gpio"))
        #expect(GPIOLineFailure.openHint(EIO) == nil)
    }
}
