import Policy

/// Puts the receiver in the regime the policy asks for (docs/contract.md §9): UBX, PMTK or SiRF commands through
/// gpsd, a GPIO enable line, USB port power.
///
/// Nothing implements it for hardware yet (docs/architecture.md): `NoReceiverControl`, the default, does nothing,
/// so a live receiver keeps running whatever the policy decides and only the delivered locations follow
/// the policy. Called on the runtime's thread, in order, once per regime change: it must not block for
/// long.
public protocol ReceiverControl: Sendable {
    func setRegime(_ regime: ReceiverRegime, reason: String)
}

/// Leaves the receiver as it is.
public struct NoReceiverControl: ReceiverControl {
    public init() {}
    public func setRegime(_ regime: ReceiverRegime, reason: String) {}
}
