import Policy

/// Puts the receiver in the regime the policy asks for (docs/contract.md §9): UBX, PMTK or SiRF frames through
/// gpsd (`ReceiverContext.writeToReceiver`), a GPIO enable line, USB port power.
///
/// Nothing implements it for hardware yet: `NoReceiverControl`, the default, does nothing, so a live
/// receiver keeps running whatever the policy decides and only the delivered locations follow the policy.
/// Called on the runtime's thread, in order: `receiverChanged` before the first regime and whenever the
/// device or what gpsd identified on it changes, `setRegime` once per regime change. Neither may block for
/// long.
public protocol ReceiverControl: Sendable {
    /// The device, the identified receiver, the model and the channel to gpsd the next regimes apply to.
    func receiverChanged(_ context: ReceiverContext)
    func setRegime(_ regime: ReceiverRegime, reason: String)
}

extension ReceiverControl {
    /// A control that needs no context (a GPIO line, say) ignores it.
    public func receiverChanged(_ context: ReceiverContext) {}
}

/// Leaves the receiver as it is.
public struct NoReceiverControl: ReceiverControl {
    public init() {}
    public func setRegime(_ regime: ReceiverRegime, reason: String) {}
}
