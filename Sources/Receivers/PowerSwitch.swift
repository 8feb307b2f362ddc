/// A switch in the receiver's supply: a GPIO line on its enable pin or a load switch, or a USB port's power.
/// Off means the receiver loses power; it restarts hot only if it keeps a backup supply.
public protocol PowerSwitch: AnyObject, Sendable {
    /// What the switch is, for messages: `GPIO gpiochip0 line 17 (active low)`, `USB port 1-1 port 3`.
    var description: String { get }
    /// Powers the receiver on or off. Blocks only briefly (a write to a line or a sysfs file).
    func setPowered(_ powered: Bool) throws(PowerSwitchError)
}

/// A switch that could not be set, with what was tried and why it failed.
public struct PowerSwitchError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
