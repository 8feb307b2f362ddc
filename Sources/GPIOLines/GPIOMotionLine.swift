import CGPIOD
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// Why a motion source could not be opened or read; the message names the line and the reason.
public struct MotionSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Something that tells of motion by edges on a descriptor (a GPIO line, a test's stand-in), or by samples
/// taken at a pace (an accelerometer read through Linux IIO).
public protocol MotionEdgeSource: AnyObject, Sendable, CustomStringConvertible {
    /// Readable while edges wait; -1 for a sampled source.
    var descriptor: Int32 { get }
    /// Seconds between samples for a source with no descriptor: its reader calls `readActivations` at this
    /// pace. nil (the default) for a source read when its descriptor is readable.
    var sampleInterval: Double? { get }
    /// Reads the waiting edges and says how many went to the active level (a vibration, the ignition on).
    func readActivations() throws(MotionSourceError) -> Int
    /// Whether the line is at its active level now (the ignition on).
    func readLevel() throws(MotionSourceError) -> Bool
}

extension MotionEdgeSource {
    public var sampleInterval: Double? { nil }
}

/// A motion sensor's or an ignition's line: a vibration switch, an accelerometer's interrupt pin, or the ignition
/// through an opto-coupler, watched for edges through libgpiod (1.x or 2.x, Sources/CGPIOD/shim.h).
///
/// The line is requested as an input with both edges queued by the kernel, as consumer `lodestar`, and held
/// until this source is released. An edge to the active level is an activation: the line going high, or low
/// when `activeLow` (an opto-coupler pulls low when lit). Bounces are the reader's to collapse
/// (`MotionDebounce`): the kernel's own debounce exists only in libgpiod 2.x.
public final class GPIOMotionLine: MotionEdgeSource, @unchecked Sendable {
    public let chip: String
    public let line: GPIOLine
    public let activeLow: Bool
    /// `motion GPIO gpiochip0 line 17 (active low)`.
    public let description: String

    // Read by the one watching thread only; released in deinit.
    private let input: UnsafeMutablePointer<cgpiod_line_request>

    public init(chip: String, line: GPIOLine, activeLow: Bool = false) throws(MotionSourceError) {
        let description = "motion GPIO \(chip) \(line)" + (activeLow ? " (active low)" : "")
        (self.chip, self.line, self.activeLow, self.description) = (chip, line, activeLow, description)
        input = try requestLine(
            chip: chip, line: line, activeLow: activeLow, kind: Int32(CGPIOD_EDGES), value: false,
            subject: description, as: "an input watched for edges", failure: MotionSourceError.init)
    }

    deinit {
        cgpiod_release(input)
    }

    public var descriptor: Int32 { cgpiod_edge_descriptor(input) }

    public func readActivations() throws(MotionSourceError) -> Int {
        var activating: Int32 = 0
        guard cgpiod_read_edges(input, &activating) >= 0 else { throw readFailure("cannot read its edges") }
        return Int(activating)
    }

    public func readLevel() throws(MotionSourceError) -> Bool {
        let value = cgpiod_get_value(input)
        guard value >= 0 else { throw readFailure("cannot read its level") }
        return value == 1
    }

    /// A failed read, with errno's reason.
    private func readFailure(_ what: String) -> MotionSourceError {
        let code = errno == 0 ? EIO : errno
        return MotionSourceError(
            GPIOLineFailure(description, what, SystemError("read", "\(chip) \(line)", code: code), hint: nil).description)
    }
}

/// Collapses a burst of activations into one motion hint: a switch's bounce, a vibration's rattle. The first
/// activation is a hint at once (a departure is noticed soonest); the next ones are swallowed until `interval`
/// has passed since that hint. While the motion goes on, a hint follows every `interval`: the policy decides
/// what they are worth (docs/policy.md, "Motion hints").
public struct MotionDebounce: Sendable, Equatable {
    /// Seconds.
    public var interval: Double
    private var lastHint: Double?

    public init(interval: Double) { self.interval = interval }

    /// Whether activations read at `t` (monotonic seconds) make a hint.
    public mutating func activated(at t: Double) -> Bool {
        if let lastHint, t - lastHint < interval, t >= lastHint { return false }
        lastHint = t
        return true
    }
}
