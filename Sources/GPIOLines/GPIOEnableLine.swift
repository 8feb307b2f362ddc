import CGPIOD
import Receivers
import Synchronization
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// A receiver's enable pin (or the enable of a load switch in its supply) on a GPIO line, through libgpiod's
/// character-device API (1.x or 2.x, behind Sources/CGPIOD/shim.h).
///
/// The line is requested as an output, as consumer `lodestar`, when the switch is made, and held until the
/// switch is released: the kernel keeps a line's value only while a process holds it. When Lodestar exits or
/// crashes, libgpiod's request ends and the line is left to the chip's driver, which may keep the last value
/// or return the pin to its default (an input with its pull): the receiver's power then follows that default
/// and pull, not what Lodestar last set. Wire the enable pin's pull so that the receiver is in the state wanted
/// without Lodestar (usually on).
public final class GPIOEnableLine: PowerSwitch, @unchecked Sendable {
    public typealias Line = GPIOLine

    /// The consumer name the kernel shows for the held line (`gpioinfo`).
    public static let consumer = gpioConsumer

    /// The chip as given: a name (`gpiochip0`), a path (`/dev/gpiochip0`), a number (`0`) or a label.
    public let chip: String
    public let line: Line
    /// The receiver is powered while the line is low (the line is requested active-low).
    public let activeLow: Bool
    /// `GPIO gpiochip0 line 17 (active low)`.
    public let description: String

    // Used under `powered`'s lock only, and released in deinit.
    private let output: UnsafeMutablePointer<cgpiod_line_request>
    private let powered: Mutex<Bool>

    /// Opens `chip` (a name, path, number or label), requests `line` as an output with `powered` as its first
    /// value, and holds it until this switch is released.
    public init(chip: String, line: Line, activeLow: Bool = false, powered: Bool = true) throws(PowerSwitchError) {
        let description = "GPIO \(chip) \(line)" + (activeLow ? " (active low)" : "")
        (self.chip, self.line, self.activeLow, self.description) = (chip, line, activeLow, description)
        output = try requestLine(
            chip: chip, line: line, activeLow: activeLow, kind: Int32(CGPIOD_OUTPUT), value: powered,
            subject: description, as: "an output", failure: PowerSwitchError.init)
        self.powered = Mutex(powered)
    }

    deinit {
        cgpiod_release(output)
    }

    /// What the line was last set to: the receiver is powered.
    public var isPowered: Bool { powered.withLock { $0 } }

    public func setPowered(_ powered: Bool) throws(PowerSwitchError) {
        // Logical values: with the active-low flag, libgpiod drives the line low for 1.
        let result: Int32 = self.powered.withLock { state in
            guard cgpiod_set_value(output, powered ? 1 : 0) == 0 else { return errno == 0 ? EIO : errno }
            state = powered
            return 0
        }
        if result != 0 {
            throw PowerSwitchError(
                GPIOLineFailure(
                    description, "cannot set the line \(powered ? "on" : "off")",
                    SystemError("set", "\(chip) \(line)", code: result), hint: nil
                ).description)
        }
    }
}
