import Synchronization
import SystemInterface

/// A power switch with no hardware behind it: it records every `setPowered` with the time it was asked, and
/// hands the change to `line`, the injected line, when there is one (an emulated receiver's supply, a test's
/// failure). It stands in for a GPIO line or a USB port where the machine has neither.
public final class InjectedPowerSwitch: PowerSwitch {
    /// One `setPowered` call.
    public struct Change: Sendable, Hashable {
        public var powered: Bool
        /// When it was asked, on the switch's clock (monotonic seconds unless another clock was injected).
        public var at: Double
        /// Why the injected line refused it; nil when the change was made.
        public var failure: PowerSwitchError?
    }

    private struct State {
        var changes: [Change] = []
        var powered: Bool?
    }

    public let description: String
    private let clock: @Sendable () -> Double
    private let line: (@Sendable (Bool) throws(PowerSwitchError) -> Void)?
    private let state: Mutex<State>
    // Held for a whole change, so calls reach the line in the order they are recorded; the state lock is not
    // held while the line runs, so the line may read the switch.
    private let applying = Mutex(())

    /// `powered`: the state before the first change, when it is known. `line` is called with each change; when
    /// it throws, the change is recorded as failed and the error passed on.
    public init(
        description: String = "injected power switch",
        powered: Bool? = nil,
        line: (@Sendable (Bool) throws(PowerSwitchError) -> Void)? = nil,
        clock: @escaping @Sendable () -> Double = monotonicSeconds
    ) {
        self.description = description
        self.clock = clock
        self.line = line
        self.state = Mutex(State(powered: powered))
    }

    /// Every call so far, oldest first.
    public var changes: [Change] { state.withLock { $0.changes } }

    /// What the last change that was made set; nil before any (unless the initial state was given).
    public var isPowered: Bool? { state.withLock { $0.powered } }

    public func setPowered(_ powered: Bool) throws(PowerSwitchError) {
        let failure: PowerSwitchError? = applying.withLock { _ in
            let at = clock()
            var failure: PowerSwitchError?
            do throws(PowerSwitchError) {
                try line?(powered)
            } catch {
                failure = error
            }
            state.withLock { state in
                state.changes.append(Change(powered: powered, at: at, failure: failure))
                if failure == nil { state.powered = powered }
            }
            return failure
        }
        if let failure { throw failure }
    }
}
