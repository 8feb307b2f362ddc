import GPSD
import GPSModel
import Policy

/// The runtime of DESIGN.md §1: the one place that owns the clock and the timers. It runs on a thread of its
/// own, feeds the policy the application's calls, the source's fixes and the timer firings, each stamped
/// with the source's clock, and executes the actions the policy returns. Used only on that thread.
final class LocationRuntime {
    private let core: ManagerCore
    private let source: any RuntimeSource
    private var policy: Policy
    private var assembler: LocationAssembler
    /// The timers the policy holds.
    private var timers = PolicyTimers()
    /// The latest instant handed to the policy: instants never go back, whatever the source says.
    private var last = Instant(seconds: 0)
    /// A loss was passed on and the receiver has not come back since.
    private var receiverLost = false
    /// The newest location the application was handed (what `reduced` accuracy may reveal).
    private var lastHanded: Location?
    private var done = false

    init(core: ManagerCore) {
        self.core = core
        switch core.source {
        case .gpsd(let host, let port, let device):
            source = LiveSource(host: host, port: port, device: device)
            assembler = LocationAssembler(origin: .live)
        case .replay(let contents, let speed):
            source = ReplaySource(contents, speed: speed, receiver: core.receiver)
            assembler = LocationAssembler(origin: .replay)
        }
        policy = Policy(configuration: core.configuration, receiver: core.receiver)
    }

    func run() {
        source.start(inbox: core.inbox)
        last = source.now
        while !done {
            fireTimers(through: source.now)
            for message in core.inbox.take() where !done {
                let now = source.now
                fireTimers(through: now)
                switch message {
                case .command(let event): handle(event, at: now)
                case .event(let event): receive(event, at: now)
                }
            }
            if done { break }
            switch source.next(before: timers.next?.at, inbox: core.inbox) {
            case .event(let event, let instant):
                fireTimers(through: instant)
                receive(event, at: instant)
            case .idle:
                continue
            case .ended(let instant):
                fireTimers(through: instant)
                handle(.shutdown, at: instant)
            }
        }
        if let exitRegime = core.exitRegime { core.control.setRegime(exitRegime, reason: "exiting: the exit regime") }
        source.stop()
        core.finish()
    }

    // MARK: Inputs

    private func receive(_ event: LiveEvent, at instant: Instant) {
        if let location = assembler.location(after: event) {
            handle(.fix(location), at: instant)
            return
        }
        switch event {
        case .fix, .report, .deviceActivated, .deviceClosed:
            break
        case .receiverLost(let reason):
            guard !receiverLost else { return }
            receiverLost = true
            handle(.receiverLost(reason), at: instant)
        case .watching, .receiverBack:
            // gpsd absent at the start and then reached is announced as `watching`, not `receiverBack`.
            guard receiverLost else { return }
            receiverLost = false
            handle(.receiverBack, at: instant)
        }
    }

    private func handle(_ event: PolicyEvent, at instant: Instant) {
        let now = max(instant, last)
        last = now
        execute(policy.handle(event, now: now), at: now)
        let known = policy.updatesConfiguration?.desiredAccuracy == .reduced ? lastHanded : policy.lastKnownLocation
        core.setLastKnownLocation(known)
        if case .shutdown = event { done = true }
    }

    // MARK: Timers

    /// Fires, in deadline order, every timer due at or before `instant`, each at its own deadline.
    private func fireTimers(through instant: Instant) {
        while !done, let due = timers.popDue(through: instant) {
            handle(.timerFired(due.id), at: due.at)
        }
    }

    // MARK: Actions

    private func execute(_ actions: [PolicyAction], at now: Instant) {
        for action in actions {
            switch action {
            case .setRegime(let regime, let reason):
                source.regimeChanged(to: regime, at: now)
                core.control.setRegime(regime, reason: reason)
                core.broadcast(.regime(regime, reason: reason))
            case .deliver(let locations):
                if let newest = locations.last { lastHanded = newest }
                core.broadcast(.locations(locations))
            case .emit(let kind, let detail):
                core.broadcast(.event(kind, detail: detail))
                switch kind {
                case .requestCompleted(let id, let location):
                    lastHanded = location
                    core.answer(id, .location(location))
                case .requestFailed(let id, let error):
                    core.answer(id, .failed(error))
                case .significantChange(let location):
                    lastHanded = location
                default:
                    break
                }
            case .schedule, .cancel:
                timers.apply(action)
            case .discard:
                break
            }
        }
    }
}
