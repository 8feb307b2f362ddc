/// Runs a `Policy` with its timers: the one loop that feeds the policy. Each event is stamped with the
/// instant its owner says it is; timers the policy scheduled fire, in deadline order and each at its own
/// deadline, before anything later. The owner (the runtime, the simulation, the tests) supplies the
/// instants and executes the actions. Pure: no clock, no threads.
public struct PolicyDriver: Sendable {
    public private(set) var policy: Policy
    /// The timers the policy holds.
    public private(set) var timers = PolicyTimers()
    /// Instants handed to the policy never go back: an earlier one is taken as the latest so far. A live
    /// clock and a capture may both jitter; a scripted test sends what it means.
    public let instantsNeverGoBack: Bool
    /// The latest instant handed to the policy, if any.
    public private(set) var lastInstant: Instant?
    /// The policy has handled `shutdown`: no timer fires any more.
    public private(set) var isShutDown = false

    /// One event the policy handled, the instant it was handed with, and the actions it returned.
    public struct Step: Sendable {
        public let event: PolicyEvent
        public let at: Instant
        public let actions: [PolicyAction]
    }

    public init(_ policy: Policy, instantsNeverGoBack: Bool = false) {
        self.policy = policy
        self.instantsNeverGoBack = instantsNeverGoBack
    }

    public init(
        configuration: PolicyConfiguration, receiver: ReceiverModel, instantsNeverGoBack: Bool = false
    ) {
        self.init(Policy(configuration: configuration, receiver: receiver), instantsNeverGoBack: instantsNeverGoBack)
    }

    /// The earliest timer deadline, if any: when the owner must call again at the latest.
    public var nextDeadline: Instant? { timers.next?.at }

    /// Fires every timer due at or before `now`, then hands the policy `event` at `now`. `perform` gets each
    /// step as it happens, with the policy as it stands right after it; the event's step comes last.
    public mutating func handle(
        _ event: PolicyEvent, at now: Instant, perform: (_ step: Step, _ policy: Policy) -> Void
    ) {
        advance(to: now, perform: perform)
        step(event, at: now, perform: perform)
    }

    /// Fires, in deadline order (ties in a fixed order), every timer due at or before `now`, each at its own
    /// deadline.
    public mutating func advance(to now: Instant, perform: (_ step: Step, _ policy: Policy) -> Void) {
        while !isShutDown, let due = timers.popDue(through: now) {
            step(.timerFired(due.id), at: due.at, perform: perform)
        }
    }

    /// Fires every timer due at or before `now` once, at `now`, as a machine that was suspended does on
    /// resuming: what the policy schedules in reply fires later, so the cost is one step per timer, however
    /// long the suspension (a simulation jumping over a hole in a capture, docs/contract.md §9).
    public mutating func resume(at now: Instant, perform: (_ step: Step, _ policy: Policy) -> Void) {
        var fired: Set<TimerID> = []
        while !isShutDown, let next = timers.next, next.at <= now, !fired.contains(next.id) {
            _ = timers.popDue(through: now)
            fired.insert(next.id)
            step(.timerFired(next.id), at: now, perform: perform)
        }
    }

    /// `handle(_:at:perform:)` for an owner that looks at the steps afterwards.
    @discardableResult
    public mutating func handle(_ event: PolicyEvent, at now: Instant) -> [Step] {
        var steps: [Step] = []
        handle(event, at: now) { step, _ in steps.append(step) }
        return steps
    }

    /// `advance(to:perform:)` for an owner that looks at the steps afterwards.
    @discardableResult
    public mutating func advance(to now: Instant) -> [Step] {
        var steps: [Step] = []
        advance(to: now) { step, _ in steps.append(step) }
        return steps
    }

    private mutating func step(
        _ event: PolicyEvent, at instant: Instant, perform: (_ step: Step, _ policy: Policy) -> Void
    ) {
        var now = instant
        if instantsNeverGoBack, let lastInstant { now = max(now, lastInstant) }
        lastInstant = now
        let actions = policy.handle(event, now: now)
        for action in actions { timers.apply(action) }
        if case .shutdown = event { isShutDown = true }
        perform(Step(event: event, at: now, actions: actions), policy)
    }
}

/// The timers a policy holds, as a runtime keeps them: one deadline per id (scheduling again replaces it),
/// fired earliest first, ties in a fixed order so replays are deterministic.
public struct PolicyTimers: Sendable {
    private var deadlines: [TimerID: Instant] = [:]

    public init() {}

    /// Applies a `schedule` or `cancel` action; other actions are not about timers.
    public mutating func apply(_ action: PolicyAction) {
        switch action {
        case .schedule(let id, let at): deadlines[id] = at
        case .cancel(let id): deadlines[id] = nil
        default: break
        }
    }

    /// The deadline of timer `id`, if it is scheduled.
    public subscript(id: TimerID) -> Instant? { deadlines[id] }

    public var isEmpty: Bool { deadlines.isEmpty }

    /// The earliest deadline, if any.
    public var next: (id: TimerID, at: Instant)? {
        deadlines.min { ($0.value, $0.key.description) < ($1.value, $1.key.description) }.map { ($0.key, $0.value) }
    }

    /// Removes and returns the earliest timer due at or before `instant`.
    public mutating func popDue(through instant: Instant) -> (id: TimerID, at: Instant)? {
        guard let next, next.at <= instant else { return nil }
        deadlines[next.id] = nil
        return next
    }
}
