import Policy

/// What receiver power control did and saw, in the order it happened: the runtime hands these to the
/// application, prints them and records them in a capture as `event` lines (docs/capture-format.md).
/// Only what was observed is reported: a regime counts as reached once the receiver went quiet (down) or
/// gave its first fix (up), never because a command was sent.
public struct PowerEvent: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// gpsd identified the receiver; `detail` names the model, the mechanism and the regimes reachable.
        case receiverIdentified
        /// gpsd's driver is one Lodestar has no commands for; `detail` says what Lodestar will and won't do.
        case receiverUnknown
        /// Commands for `regime` were sent (or the power switched); not yet confirmed.
        case regimeCommanded
        /// The receiver went quiet `seconds` after a down command: `regime` is reached.
        case quiet
        /// The first fix `seconds` after a wake from `regime` (the time to first fix really seen).
        case firstFixAfterWake
        /// A down command changed nothing (the receiver kept talking); `detail` gives the likely cause.
        /// Lodestar stops using `regime` and counts the receiver as running.
        case noEffect
        /// The policy asked for `regime`, which this receiver and connection cannot reach; `detail` says why.
        case regimeUnreachable
        /// No output `seconds` after a wake: the receiver did not wake. `detail` says when the next try is.
        case wakeFailed
        /// gpsd reopened the device (and probed it, which wakes a sleeping receiver): the regime is applied again.
        case reapplied
        /// A command could not be sent or a switch could not be set; `detail` says why.
        case commandFailed
    }

    public var kind: Kind
    /// The regime the event is about, where there is one.
    public var regime: ReceiverRegime?
    /// A duration the event measured (seconds to quiet, to the first fix, to the next try).
    public var seconds: Double?
    /// A sentence for people.
    public var detail: String
    /// The mechanism power control chose, on `receiverIdentified` and `receiverUnknown` (nil: none), so no
    /// reader has to find it in `detail`.
    public var mechanism: PowerControl?

    public init(
        _ kind: Kind, regime: ReceiverRegime? = nil, seconds: Double? = nil, detail: String,
        mechanism: PowerControl? = nil
    ) {
        (self.kind, self.regime, self.seconds, self.detail, self.mechanism) = (kind, regime, seconds, detail, mechanism)
    }

    public var description: String { "\(kind.rawValue): \(detail)" }
}
