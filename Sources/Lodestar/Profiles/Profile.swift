import Simulation
import Capture
import Policy

/// A profile: every knob of the policy and of the receiver model, named, as one JSON file
/// (`lodestar profiles show car` prints one; docs/profiles.md lists every key). What a profile starts is
/// `startEvents`; the rest is the configuration the policy and the receiver simulation run with.
public struct Profile: Sendable, Hashable {
    /// What `--profile` and `lodestar profiles show` call it.
    public var name: String
    /// One line for `lodestar profiles list`.
    public var description: String
    /// Whether the profile runs standard updates (`startUpdates`). False for significant-change-only
    /// profiles (`asset`); the `updates` settings are then kept but unused.
    public var updatesEnabled: Bool
    /// Core Location's per-manager properties for standard updates.
    public var updates: UpdatesConfiguration
    /// Deferred updates (batching) allowed while updating, nil for none.
    public var deferred: DeferredUpdates?
    /// Whether significant-change monitoring runs (docs/contract.md §6).
    public var significantChange: Bool
    /// Every tuning number of the policy.
    public var policy: PolicyConfiguration
    /// The receiver: a built-in model with the profile's overrides applied.
    public var receiver: ReceiverModel
    /// Metres: the staleness a user of this profile accepts (the distance from the true position to the
    /// last delivered location; the evaluation measures it at p95, docs/contract.md §11).
    public var stalenessBound: Double
    /// The regime a `LocationManager` made from this profile asks its receiver control for when it finishes:
    /// running by default.
    public var exitRegime: ReceiverRegime

    public init(
        name: String, description: String = "", updatesEnabled: Bool = true,
        updates: UpdatesConfiguration = UpdatesConfiguration(), deferred: DeferredUpdates? = nil,
        significantChange: Bool = false, policy: PolicyConfiguration = PolicyConfiguration(),
        receiver: ReceiverModel = .genericNMEA, stalenessBound: Double = 100, exitRegime: ReceiverRegime = .continuous
    ) {
        self.name = name
        self.description = description
        self.updatesEnabled = updatesEnabled
        self.updates = updates
        self.deferred = deferred
        self.significantChange = significantChange
        self.policy = policy
        self.receiver = receiver
        self.stalenessBound = stalenessBound
        self.exitRegime = exitRegime
    }

    /// `allowDeferredUpdates(untilTraveled:timeout:)`'s arguments: the same value a simulated replay of the
    /// profile asks for (`simulationSetup`).
    public typealias DeferredUpdates = SimulationSetup.Deferral

    /// What the runtime sends the policy when the profile starts, in this order: updates, then deferral
    /// (which needs updates running), then significant change.
    public var startEvents: [PolicyEvent] {
        var events: [PolicyEvent] = []
        if updatesEnabled {
            events.append(.startUpdates(updates))
            if let deferred {
                events.append(.allowDeferredUpdates(untilTraveled: deferred.untilTraveled, timeout: deferred.timeout))
            }
        }
        if significantChange { events.append(.startSignificantChange) }
        return events
    }

    /// The regime the manager leaves the receiver in when it finishes (a regime the receiver lacks falls
    /// back, as `ReceiverModel.effectiveRegime` says).
    public var effectiveExitRegime: ReceiverRegime { receiver.effectiveRegime(exitRegime) }

    /// The policy's configuration as the profile runs it: a prediction bound left null is the profile's
    /// staleness bound.
    public var effectivePolicy: PolicyConfiguration {
        var configuration = policy
        if configuration.prediction.bound == nil { configuration.prediction.bound = stalenessBound }
        return configuration
    }

    /// What this profile asks of the policy in a simulated replay (`lodestar replay --profile`).
    public var simulationSetup: SimulationSetup {
        SimulationSetup(
            updates: updatesEnabled ? updates : nil,
            deferral: deferred,
            significantChange: significantChange, policy: effectivePolicy, receiver: receiver)
    }
}

/// A profile that cannot be used. `invalid` lists every problem, each naming the key path and what is
/// allowed; the CLI exits 78 for it and 66 for the other two.
public enum ProfileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A name that is neither built in nor a file in the profile directory.
    case notFound(name: String, searched: String)
    /// A file that cannot be read (missing, a directory, no permission).
    case unreadable(file: String, reason: String)
    /// A file (or built-in) that was read but is not a valid profile.
    case invalid(file: String, problems: [ProfileProblem])

    /// One line per problem: `FILE: key.path: what is wrong (allowed: …)`.
    public var lines: [String] {
        switch self {
        case .notFound(let name, let searched):
            let builtIns = ProfileStore.builtInNames.joined(separator: ", ")
            return [
                "no profile named '\(name)': not built in (\(builtIns)) and no \(searched); "
                    + "give a file path to use a file elsewhere"
            ]
        case .unreadable(let file, let reason):
            return ["cannot read \(file): \(reason)"]
        case .invalid(let file, let problems):
            return problems.map { "\(file): \($0)" }
        }
    }

    public var description: String { lines.joined(separator: "\n") }

    /// The problems of an invalid profile, empty for the other cases.
    public var problems: [ProfileProblem] {
        if case .invalid(_, let problems) = self { return problems }
        return []
    }
}

/// One thing wrong in a profile.
public struct ProfileProblem: Sendable, Hashable, CustomStringConvertible {
    /// Dotted key path from the top of the file (`policy.stationary.fitness.window`); empty for the file as a
    /// whole (a JSON syntax error).
    public var keyPath: String
    /// What is wrong: "is 5, out of range", "unknown key", "is a string, not a number".
    public var problem: String
    /// What would be accepted, nil when the problem says it all.
    public var allowed: String?

    public var description: String {
        let head = keyPath.isEmpty ? problem : "\(keyPath): \(problem)"
        guard let allowed else { return head }
        return "\(head) (allowed: \(allowed))"
    }
}
