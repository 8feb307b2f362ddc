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
    /// A motion sensor modelled from the true track, which sends the policy `motionHint`s; nil for none. The
    /// policy treats hints as a sensor's only with `policy.motion.sensor`.
    public var motionSensor: MotionSensorModel?

    /// `allowDeferredUpdates(untilTraveled:timeout:)`'s arguments (a profile's `deferred`); nil is Core
    /// Location's "unlimited".
    public struct Deferral: Sendable, Hashable {
        /// Metres travelled before the batch is delivered.
        public var untilTraveled: Double?
        /// Seconds before the batch is delivered.
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
        (self.updates, self.deferral, self.significantChange, self.policy, self.receiver)
            = (updates, deferral, significantChange, policy, receiver)
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

    /// Appends `interval`, joined to the last stretch when it continues it in the same state: a timeline kept
    /// over a long run holds a stretch per state change, not per step.
    mutating func append(joining interval: ReceiverInterval) {
        if let last, last.state == interval.state, last.end == interval.start {
            self[count - 1].end = interval.end
        } else {
            append(interval)
        }
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
    /// In a hole of the capture (`SimulationRun.holeThreshold`): charged as off, deaf to the policy.
    public private(set) var isUnplugged = false

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
        guard !isUnplugged else { return nil }
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

    /// The timeline from the last call (or the start) up to `t`, forgotten once returned: a day-long
    /// evaluation keeps no timeline of its own.
    public mutating func takeTimeline(until t: Double) -> [ReceiverInterval] {
        closeInterval(at: t)
        regimeSince = max(regimeSince, t)
        defer { intervals.removeAll(keepingCapacity: true) }
        return intervals
    }

    /// Nothing is known of the receiver from `t` (a hole in the capture): it counts as off, unpowered, until
    /// `plugBack`, and the regimes the policy asks for meanwhile are not applied.
    public mutating func unplug(at t: Double) {
        guard !isUnplugged else { return }
        closeInterval(at: t)
        if regime.producesFixes { downSince = t }
        downRegime = .off
        // Off even for a model that cannot reach it: the capture does not say it drew anything.
        regime = .off
        regimeSince = t
        isUnplugged = true
    }

    /// Back after a hole, still off: the policy's next regime powers it up from a long time down.
    public mutating func plugBack(at t: Double) {
        guard isUnplugged else { return }
        closeInterval(at: t)
        regimeSince = t
        isUnplugged = false
        downSince = downSince ?? t
        downRegime = .off
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

/// One input of a simulated replay, in the stream's order: a true fix, or the receiver going away and
/// coming back (a device closed, gpsd gone).
public enum TruthInput: Sendable {
    case fix(Location)
    case lost(String)
    case back
}

/// Replays a capture into the power policy with the receiver simulated (docs/architecture.md): while the policy has
/// the receiver down, the capture's fixes do not exist; after a wake, the first fix comes only after the
/// receiver model's time to first fix (hot within its hot window if the way down kept ephemeris, else
/// warm). Timers fire on the capture's clock. Pure and deterministic: the same capture and setup give the
/// same outputs.
public struct ReceiverSimulation: Sendable {
    public let setup: SimulationSetup

    public init(setup: SimulationSetup) {
        self.setup = setup
    }

    public func run(_ contents: CaptureContents, onOutput: (SimulationOutput) -> Void) -> SimulationSummary {
        let run = SimulationRun(setup: setup)
        CaptureReplayer(contents).run(onEvent: { t, event in
            for input in TruthInput.inputs(for: event, assembler: &run.assembler) { run.feed(t: t, input, onOutput: onOutput) }
        })
        return run.finish(onOutput: onOutput)
    }

    /// Runs on an already decoded capture (tests, and the report, which keeps the truth).
    public func run(_ truth: TrueTrack, onOutput: (SimulationOutput) -> Void) -> SimulationSummary {
        let run = SimulationRun(setup: setup)
        truth.forEachInput { t, input in run.feed(t: t, input, onOutput: onOutput) }
        return run.finish(onOutput: onOutput)
    }
}

/// A simulated replay one input at a time (`feed`, then `finish`), so a capture of any length is simulated in
/// the memory of its state. A class so the policy's steps can update the receiver while its driver runs.
public final class SimulationRun {
    /// A stretch this long with no input is a hole in the capture: the recorder saw nothing, so nothing is
    /// known of the receiver. The policy runs as it would for the first hour (its failed wakes cost what they
    /// cost), then the receiver counts as unplugged and the policy's timers sleep until the next input, where
    /// each fires once (docs/contract.md §9): the cost of a hole is a few steps, however long it is.
    public static let holeThreshold = 3600.0

    public let setup: SimulationSetup
    /// Decodes the capture's events into inputs, for callers that feed live events.
    public var assembler = LocationAssembler(origin: .replay)
    private var driver: PolicyDriver
    private var receiver: SimulatedReceiver?
    private var motionSensor: MotionSensor?
    private var summary = SimulationSummary()
    private var lastInputT: Double?
    private var lastSensorT: Double?
    private var timelineTaken = false
    private var output: (SimulationOutput) -> Void = { _ in }

    public init(setup: SimulationSetup) {
        self.setup = setup
        driver = PolicyDriver(configuration: setup.policy, receiver: setup.receiver)
        motionSensor = setup.motionSensor.map(MotionSensor.init)
    }

    /// Fixes handed to the policy so far (the simulated receiver was up and past its time to first fix).
    public var producedFixes: Int { summary.producedFixes }

    public func feed(t: Double, _ input: TruthInput, onOutput: (SimulationOutput) -> Void) {
        withoutActuallyEscaping(onOutput) { onOutput in
            output = onOutput
            step(t: t, input)
            output = { _ in }
        }
    }

    private func step(t: Double, _ input: TruthInput) {
        let now = Instant(seconds: t)
        guard receiver != nil else {
            start(at: t)
            step(t: t, input)
            return
        }
        if let last = lastInputT, t - last > Self.holeThreshold {
            let holeStart = Instant(seconds: last + Self.holeThreshold)
            driver.advance(to: holeStart, perform: perform)
            driver.handle(
                .receiverLost("the capture has no line for \(Int(t - last)) s: nothing is known of the receiver"),
                at: holeStart, perform: perform)
            receiver?.unplug(at: holeStart.seconds)
            driver.resume(at: now, perform: perform)
            receiver?.plugBack(at: t)
            driver.handle(.receiverBack, at: now, perform: perform)
        }
        if case .fix = input { summary.trueFixes += 1 }
        lastInputT = t
        summary.lastT = t
        // The sensor's hints (or the ignition's levels) due by now, each at its instant, with the timers due
        // before it.
        for signal in motionSensor?.take(until: t) ?? [] {
            let at = Instant(seconds: max(signal.t, lastSensorT ?? signal.t))
            driver.advance(to: at, perform: perform)
            driver.handle(signal.event, at: at, perform: perform)
            lastSensorT = at.seconds
        }
        // Timers first: a wake due by now may bring the receiver up for this fix.
        driver.advance(to: now, perform: perform)
        switch input {
        case .fix(let location):
            motionSensor?.observe(t, location)
            if receiver?.producesFix(at: t) ?? false {
                summary.producedFixes += 1
                driver.handle(.fix(location), at: now, perform: perform)
            }
        case .lost(let reason):
            driver.handle(.receiverLost(reason), at: now, perform: perform)
        case .back:
            driver.handle(.receiverBack, at: now, perform: perform)
        }
    }

    private func start(at t: Double) {
        receiver = SimulatedReceiver(model: setup.receiver, start: t)
        summary.firstT = t
        summary.lastT = t
        lastInputT = t
        let start = Instant(seconds: t)
        if let updates = setup.updates { driver.handle(.startUpdates(updates), at: start, perform: perform) }
        if let deferral = setup.deferral {
            driver.handle(
                .allowDeferredUpdates(untilTraveled: deferral.untilTraveled, timeout: deferral.timeout), at: start,
                perform: perform)
        }
        if setup.significantChange { driver.handle(.startSignificantChange, at: start, perform: perform) }
    }

    private func perform(_ step: PolicyDriver.Step, _: Policy) {
        let t = step.at.seconds
        for action in step.actions {
            switch action {
            case .setRegime(let requested, let reason):
                guard let regime = receiver?.setRegime(requested, at: t) else { continue }
                output(.regime(t: t, regime, reason: reason))
            case .deliver(let locations):
                summary.deliveredLocations += locations.count
                output(.locations(t: t, locations))
            case .emit(let kind, let detail):
                output(.event(t: t, kind, detail: detail))
            case .schedule, .cancel, .discard:
                break
            }
        }
    }

    /// The receiver's timeline since the last call, up to `t` (no later than the last input): for an owner
    /// that charges it as it goes. After a call, `finish`'s summary has no timeline.
    public func takeTimeline(until t: Double) -> [ReceiverInterval] {
        timelineTaken = true
        return receiver?.takeTimeline(until: t) ?? []
    }

    /// The end of the capture: the policy shuts down at the last input.
    public func finish(onOutput: (SimulationOutput) -> Void) -> SimulationSummary {
        guard receiver != nil else { return summary }
        withoutActuallyEscaping(onOutput) { onOutput in
            output = onOutput
            driver.handle(.shutdown, at: Instant(seconds: summary.lastT), perform: perform)
            output = { _ in }
        }
        if !timelineTaken { summary.timeline = receiver?.timeline(until: summary.lastT) ?? [] }
        return summary
    }
}

extension TruthInput {
    /// The inputs one event of the live path (or a replay) makes: its location, and the receiver going or
    /// coming back.
    public static func inputs(for event: LiveEvent, assembler: inout LocationAssembler) -> [TruthInput] {
        var inputs: [TruthInput] = []
        if let location = assembler.location(after: event) { inputs.append(.fix(location)) }
        switch event {
        case .receiverLost(let reason): inputs.append(.lost(reason))
        case .receiverBack: inputs.append(.back)
        default: break
        }
        return inputs
    }
}
