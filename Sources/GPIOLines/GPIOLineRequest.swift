import CGPIOD
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// Why a GPIO line could not be requested or used: `GPIO gpiochip9 line 17: cannot open the chip (open gpiochip9:
/// No such file or directory); hint`.
package struct GPIOLineFailure: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ subject: String, _ what: String, _ error: SystemError, hint: String?) {
        description = "\(subject): \(what) (\(error))" + (hint.map { "; \($0)" } ?? "")
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

/// A line by its offset on the chip (`17`) or by its name (`GPIO17`, as `gpioinfo` lists it).
public enum GPIOLine: Sendable, Hashable, CustomStringConvertible {
    case offset(UInt32)
    case named(String)

    public var description: String {
        switch self {
        case .offset(let offset): "line \(offset)"
        case .named(let name): "line \"\(name)\""
        }
    }
}

/// The consumer name the kernel shows for a line Lodestar holds (`gpioinfo`).
let gpioConsumer = "lodestar"

/// Opens `chip` (a name, path, number or label) and requests `line` as `kind` (CGPIOD_OUTPUT with `value` first,
/// or CGPIOD_EDGES); each failure names its step, the errno, and a hint where one helps, and is thrown as the
/// caller's error (`failure` makes it from the sentence). `role`: "an output".
func requestLine<Failure: Error>(
    chip: String, line: GPIOLine, activeLow: Bool, kind: Int32, value: Bool, subject: String, as role: String,
    failure makeError: (String) -> Failure
) throws(Failure) -> UnsafeMutablePointer<cgpiod_line_request> {
    do throws(GPIOLineFailure) {
        return try requestLine(chip: chip, line: line, activeLow: activeLow, kind: kind, value: value, subject: subject, as: role)
    } catch {
        throw makeError(error.description)
    }
}

private func requestLine(
    chip: String, line: GPIOLine, activeLow: Bool, kind: Int32, value: Bool, subject: String, as role: String
) throws(GPIOLineFailure) -> UnsafeMutablePointer<cgpiod_line_request> {
    var failure = cgpiod_failure()
    let (offset, name): (UInt32, String?) =
        switch line {
        case .offset(let number): (number, nil)
        case .named(let text): (0, text)
        }
    let requested = withOptionalCString(name) { name in
        cgpiod_request_line(chip, offset, name, gpioConsumer, activeLow ? 1 : 0, kind, value ? 1 : 0, &failure)
    }
    let code = errno
    if let requested { return requested }
    switch Int(failure.step) {
    case Int(CGPIOD_FAILED_OPENING_CHIP):
        throw GPIOLineFailure(
            subject, "cannot open the chip", SystemError("open", chip, code: code), hint: GPIOLineFailure.openHint(code))
    case Int(CGPIOD_FAILED_FINDING_LINE):
        throw GPIOLineFailure(
            subject, "no such line", SystemError("find", "\(chip) \(line)", code: code),
            hint: "the chip has \(failure.lineCount) lines; `gpioinfo \(chip)` lists them")
    default:
        let holder = withUnsafeBytes(of: failure.holder) { bytes in
            String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        let hint =
            code == EBUSY
            ? "the line is held by \(holder.isEmpty ? "another program" : "\"\(holder)\""); `gpioinfo \(chip)` shows who"
            : nil
        throw GPIOLineFailure(
            subject, "cannot request the line as \(role)", SystemError("request", "\(chip) \(line)", code: code), hint: hint)
    }
}

/// `body` with a C string for `text`, or NULL for nil.
private func withOptionalCString<Result>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
