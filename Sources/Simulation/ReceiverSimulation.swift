import Capture
import GPSD
import GPSModel
import Policy

/// What a power profile asks of the policy during a simulated replay.
public struct SimulationSetup: Sendable {
    /// Standard updates, or nil for none (significant-change only).
    public var updates: UpdatesConfiguration?
    /// `allowDeferredUpdates(untilTraveled:timeout:)` right after starting, when set.
    public var deferral: Deferral?
    public var significantChange: Bool
    public var policy: PolicyConfiguration
    public var receiver: ReceiverModel

    public struct Deferral: Sendable, Equatable {
        public var untilTraveled: Double?
        public var timeout: Double?

        public init(untilTraveled: Double?, timeout: Double?) {
            self.untilTraveled = untilTraveled
            self.timeout = timeout
        }
    }

    public init(
        updates: UpdatesConfiguration?, deferral: Deferral? = nil, significantChange: Bool = false,
        policy: PolicyConfiguration = PolicyConfiguration(), receiver: ReceiverModel = .genericNMEA
    ) {
        self.updates = updates
        self.deferral = deferral
        self.significantChange = significantChange
        self.policy = policy
        self.receiver = receiver
    }
}

/// What a simulated replay produces, in time order (`t`: the capture's clock).
public enum SimulationOutput: Sendable, Equatable {
    /// Locations handed to the application: one, or a deferred batch.
    case locations(t: Double, [Location])
    /// The receiver regime the policy chose (only changes are reported).
    case regime(t: Double, ReceiverRegime, reason: String)
    case event(t: Double, PolicyEventKind, detail: String)
}

/// One stretch of the receiver's timeline: what it was doing from `start` to `end`.
public struct ReceiverInterval: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        /// Powered up, no fix yet (time to first fix): acquisition current.
        case acquiring
        case tracking
        case powerSave
        case standby
        case off

        /// Standby or off: no fixes, and a wake ahead.
        public var isDown: Bool { self == .standby || self == .off }
    }

    public var start: Double
    public var end: Double
    public var state: State

    public init(start: Double, end: Double, state: State) {
        self.start = start
        self.end = end
        self.state = state
    }
}

extension Array where Element == ReceiverInterval {
    /// Seconds down (standby or off).
    public var downSeconds: Double {
        reduce(0) { $0 + ($1.state.isDown ? $1.end - $1.start : 0) }
    }

    /// Wakes: a down stretch followed by an up one (each pays a time to first fix).
    public var wakes: Int {
        zip(self, dropFirst()).count { $0.state.isDown && !$1.state.isDown }
    }
}

/// The outcome of a simulated replay.
public struct SimulationSummary: Sendable, Equatable {
    /// Fixes with a position in the whole capture (the truth).
    public var trueFixes = 0
    /// Fixes the simulated receiver produced (it was up and past its time to first fix).
    public var producedFixes = 0
    public var deliveredLocations = 0
    public var firstT = 0.0
    public var lastT = 0.0
    public var timeline: [ReceiverInterval] = []

    public var duration: Double { lastT - firstT }

    /// Seconds the receiver was down (standby or off).
    public var downSeconds: Double { timeline.downSeconds }

    public var downShare: Double { duration > 0 ? downSeconds / duration : 0 }
}

/// A receiver as the policy sees it in a replay (docs/contract.md §9): it makes fixes only in a regime that
/// produces them and only after its time to first fix from the moment it powered up (hot within the model's
/// hot window if the way down kept ephemeris, else warm). Keeps its timeline for energy figures. Pure.
public struct SimulatedReceiver: Sendable {
    public let model: ReceiverModel
    /// The regime in force (the model's effective one) and since when.
    public private(set) var regime: ReceiverRegime = .continuous
    private var regimeSince: Double
    /// When the receiver last went down, and how (for the time to first fix when it comes back).
    private var downSince: Double?
    private var downRegime: ReceiverRegime = .off
    /// The first instant the receiver has a fix after powering up.
    public private(set) var fixAvailableFrom: Double
    private var intervals: [ReceiverInterval] = []

    /// Running and tracking at `start`: a capture starts with the receiver that recorded it working.
    public init(model: ReceiverModel, start: Double) {
        self.model = model
        regimeSince = start
        fixAvailableFrom = start
    }

    public func producesFix(at t: Double) -> Bool {
        regime.producesFixes && t >= fixAvailableFrom
    }

    /// The policy asked for `requested` at `t`; the regime the receiver now runs, or nil if nothing changed.
    public mutating func setRegime(_ requested: ReceiverRegime, at t: Double) -> ReceiverRegime? {
        let next = model.effectiveRegime(requested)
        guard next != regime else { return nil }
        closeInterval(at: t)
        if next.producesFixes, !regime.producesFixes {
            let downFor = downSince.map { t - $0 } ?? 0
            fixAvailableFrom = t + model.timeToFirstFix(afterDown: downFor, in: downRegime)
            downSince = nil
        } else if !next.producesFixes, regime.producesFixes {
            downSince = t
            downRegime = next
        } else if !next.producesFixes {
            // Standby to off (or back): the way down that counts for the next start is the last one.
            downRegime = next
        }
        regime = next
        regimeSince = t
        return next
    }

    /// The timeline up to `t`: acquisition and tracking while up, standby or off while down.
    public mutating func timeline(until t: Double) -> [ReceiverInterval] {
        closeInterval(at: t)
        regimeSince = max(regimeSince, t)
        return intervals
    }

    private mutating func closeInterval(at t: Double) {
        guard t > regimeSince else { return }
        switch regime {
        case .continuous, .powerSave:
            let acquiredAt = min(max(fixAvailableFrom, regimeSince), t)
            if acquiredAt > regimeSince {
                intervals.append(ReceiverInterval(start: regimeSince, end: acquiredAt, state: .acquiring))
            }
            if t > acquiredAt {
                intervals.append(
                    ReceiverInterval(start: acquiredAt, end: t, state: regime == .continuous ? .tracking : .powerSave))
            }
        case .standby:
            intervals.append(ReceiverInterval(start: regimeSince, end: t, state: .standby))
        case .off:
            intervals.append(ReceiverInterval(start: regimeSince, end: t, state: .off))
        }
    }
}

/// Replays a capture into the power policy with the receiver simulated (docs/architecture.md): while the policy has
/// the receiver down, the capture's fixes do not exist; after a wake, the first fix comes only after the
/// receiver model's time to first fix (hot within its hot window if the way down kept ephemeris, else
/// warm). Timers fire on the capture's clock. Pure and deterministic: the same capture and setup give the
/// same outputs.
public struct ReceiverSimulation: Sendable {
    private enum Input {
        case fix(Location)
        case lost(String)
        case back
    }

    public let setup: SimulationSetup

    public init(setup: SimulationSetup) {
        self.setup = setup
    }

    public func run(_ contents: CaptureContents, onOutput: (SimulationOutput) -> Void) -> SimulationSummary {
        run(TrueTrack(contents), onOutput: onOutput)
    }

    /// Runs on an already decoded capture (the evaluation decodes it once for the run and the judging).
    public func run(_ truth: TrueTrack, onOutput: (SimulationOutput) -> Void) -> SimulationSummary {
        // The fixes and the receiver's losses and returns, back in the order the stream had them.
        var inputs: [(t: Double, input: Input)] = []
        inputs.reserveCapacity(truth.points.count + truth.receiverChanges.count)
        var changes = truth.receiverChanges[...]
        for (index, point) in truth.points.enumerated() {
            while let change = changes.first, change.afterPoints <= index {
                inputs.append((change.t, change.lostReason.map(Input.lost) ?? .back))
                changes = changes.dropFirst()
            }
            inputs.append((point.t, .fix(point.location)))
        }
        for change in changes { inputs.append((change.t, change.lostReason.map(Input.lost) ?? .back)) }

        var summary = SimulationSummary()
        summary.trueFixes = truth.points.count
        guard let first = inputs.first, let last = inputs.last else { return summary }
        summary.firstT = first.t
        summary.lastT = last.t

        // The policy on the capture's clock; the simulated receiver follows the regimes it asks for.
        var driver = PolicyDriver(configuration: setup.policy, receiver: setup.receiver)
        var receiver = SimulatedReceiver(model: setup.receiver, start: first.t)
        var delivered = 0
        func perform(_ step: PolicyDriver.Step, _: Policy) {
            let t = step.at.seconds
            for action in step.actions {
                switch action {
                case .setRegime(let requested, let reason):
                    guard let regime = receiver.setRegime(requested, at: t) else { continue }
                    onOutput(.regime(t: t, regime, reason: reason))
                case .deliver(let locations):
                    delivered += locations.count
                    onOutput(.locations(t: t, locations))
                case .emit(let kind, let detail):
                    onOutput(.event(t: t, kind, detail: detail))
                case .schedule, .cancel, .discard:
                    break
                }
            }
        }

        let start = Instant(seconds: first.t)
        if let updates = setup.updates { driver.handle(.startUpdates(updates), at: start, perform: perform) }
        if let deferral = setup.deferral {
            driver.handle(
                .allowDeferredUpdates(untilTraveled: deferral.untilTraveled, timeout: deferral.timeout), at: start,
                perform: perform)
        }
        if setup.significantChange { driver.handle(.startSignificantChange, at: start, perform: perform) }
        for (t, input) in inputs {
            let now = Instant(seconds: t)
            // Timers first: a wake due by now may bring the receiver up for this fix.
            driver.advance(to: now, perform: perform)
            switch input {
            case .fix(let location):
                if receiver.producesFix(at: t) {
                    summary.producedFixes += 1
                    driver.handle(.fix(location), at: now, perform: perform)
                }
            case .lost(let reason):
                driver.handle(.receiverLost(reason), at: now, perform: perform)
            case .back:
                driver.handle(.receiverBack, at: now, perform: perform)
            }
        }
        driver.handle(.shutdown, at: Instant(seconds: last.t), perform: perform)
        summary.deliveredLocations = delivered
        summary.timeline = receiver.timeline(until: last.t)
        return summary
    }
}
