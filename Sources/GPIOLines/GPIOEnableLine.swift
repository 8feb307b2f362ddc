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
    /// A line by its offset on the chip (`17`) or by its name (`GPIO17`, as `gpioinfo` lists it).
    public enum Line: Sendable, Hashable, CustomStringConvertible {
        case offset(UInt32)
        case named(String)

        public var description: String {
            switch self {
            case .offset(let offset): "line \(offset)"
            case .named(let name): "line \"\(name)\""
            }
        }
    }

    /// The consumer name the kernel shows for the held line (`gpioinfo`).
    public static let consumer = "lodestar"

    /// The chip as given: a name (`gpiochip0`), a path (`/dev/gpiochip0`), a number (`0`) or a label.
    public let chip: String
    public let line: Line
    /// The receiver is powered while the line is low (the line is requested active-low).
    public let activeLow: Bool
    /// `GPIO gpiochip0 line 17 (active low)`.
    public let description: String

    // Used under `powered`'s lock only, and released in deinit.
    private let output: UnsafeMutablePointer<cgpiod_output>
    private let powered: Mutex<Bool>

    /// Opens `chip` (a name, path, number or label), requests `line` as an output with `powered` as its first
    /// value, and holds it until this switch is released.
    public init(chip: String, line: Line, activeLow: Bool = false, powered: Bool = true) throws(PowerSwitchError) {
        let description = "GPIO \(chip) \(line)" + (activeLow ? " (active low)" : "")
        self.chip = chip
        self.line = line
        self.activeLow = activeLow
        self.description = description

        var failure = cgpiod_failure()
        let offset: UInt32
        let name: String?
        switch line {
        case .offset(let number): (offset, name) = (number, nil)
        case .named(let text): (offset, name) = (0, text)
        }
        let requested = withOptionalCString(name) { name in
            cgpiod_request_output(chip, offset, name, Self.consumer, activeLow ? 1 : 0, powered ? 1 : 0, &failure)
        }
        let code = errno
        guard let requested else {
            switch Int(failure.step) {
            case Int(CGPIOD_FAILED_OPENING_CHIP):
                throw Self.failure(description, "cannot open the chip", SystemError("open", chip, code: code),
                    hint: Self.openHint(code))
            case Int(CGPIOD_FAILED_FINDING_LINE):
                throw Self.failure(description, "no such line", SystemError("find", "\(chip) \(line)", code: code),
                    hint: "the chip has \(failure.lineCount) lines; `gpioinfo \(chip)` lists them")
            default:
                let holder = withUnsafeBytes(of: failure.holder) { bytes in
                    String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                let hint =
                    code == EBUSY
                    ? "the line is held by \(holder.isEmpty ? "another program" : "\"\(holder)\""); `gpioinfo \(chip)` shows who"
                    : nil
                throw Self.failure(description, "cannot request the line as an output",
                    SystemError("request", "\(chip) \(line)", code: code), hint: hint)
            }
        }
        self.output = requested
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
            throw Self.failure(description, "cannot set the line \(powered ? "on" : "off")",
                SystemError("set", "\(chip) \(line)", code: result), hint: nil)
        }
    }

    /// `GPIO gpiochip9 line 17: cannot open the chip (open gpiochip9: No such file or directory); hint`.
    package static func failure(_ subject: String, _ what: String, _ error: SystemError, hint: String?)
        -> PowerSwitchError
    {
        PowerSwitchError("\(subject): \(what) (\(error))" + (hint.map { "; \($0)" } ?? ""))
    }

    package static func openHint(_ code: Int32) -> String? {
        switch code {
        case ENOENT, ENODEV:
            "no such GPIO chip; `gpiodetect` lists them (give a name such as gpiochip0, a /dev path, a number or a label)"
        case EACCES, EPERM:
            "no permission on the chip's /dev/gpiochip* device: add the user to the group that owns it (gpio on Raspberry Pi OS) or add a udev rule"
        default:
            nil
        }
    }
}

/// `body` with a C string for `text`, or NULL for nil.
private func withOptionalCString<Result>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
