import GPSD
import GPSModel
import Policy

/// The runtime of docs/architecture.md: the one place that owns the clock and the timers. It runs on a thread of its
/// own, feeds the policy the application's calls, the source's fixes and the timer firings, each stamped
/// with the source's clock, and executes the actions the policy returns. Used only on that thread.
final class LocationRuntime {
    private let core: ManagerCore
    private let source: any RuntimeSource
    /// The policy and its timers; instants handed to it never go back, whatever the source says.
    private var driver: PolicyDriver
    private var assembler: LocationAssembler
    /// A loss was passed on and the receiver has not come back since.
    private var receiverLost = false
    /// The newest location the application was handed (what `reduced` accuracy may reveal).
    private var lastHanded: Location?
    private var done: Bool { driver.isShutDown }

    init(core: ManagerCore) {
        self.core = core
        switch core.source {
        case .gpsd(let host, let port, let device):
            source = LiveSource(host: host, port: port, device: device, receiverLink: core.receiverLink)
            assembler = LocationAssembler(origin: .live)
        case .replay(let contents, let speed):
            source = ReplaySource(contents, speed: speed, receiver: core.receiver)
            assembler = LocationAssembler(origin: .replay)
        }
        driver = PolicyDriver(
            configuration: core.configuration, receiver: core.receiver, instantsNeverGoBack: true)
    }

    func run() {
        source.start(inbox: core.inbox)
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
            switch source.next(before: driver.nextDeadline, inbox: core.inbox) {
            case .event(let event, let instant):
                fireTimers(through: instant)
                receive(event, at: instant)
            case .idle:
                continue
            case .ended(let instant):
                handle(.shutdown, at: instant)
            }
        }
        if let exitRegime = core.exitRegime { core.receiverLink.setRegime(exitRegime, reason: "exiting: the exit regime") }
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
        driver.handle(event, at: instant, perform: perform)
    }

    /// Fires, in deadline order, every timer due at or before `instant`, each at its own deadline.
    private func fireTimers(through instant: Instant) {
        driver.advance(to: instant, perform: perform)
    }

    // MARK: Actions

    /// Executes one step's actions, then shares the location the application may know.
    private func perform(_ step: PolicyDriver.Step, policy: Policy) {
        execute(step.actions, at: step.at)
        let known = policy.updatesConfiguration?.desiredAccuracy == .reduced ? lastHanded : policy.lastKnownLocation
        core.setLastKnownLocation(known)
    }

    private func execute(_ actions: [PolicyAction], at now: Instant) {
        for action in actions {
            switch action {
            case .setRegime(let regime, let reason):
                source.regimeChanged(to: regime, at: now)
                core.receiverLink.setRegime(regime, reason: reason)
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
            case .schedule, .cancel, .discard:
                break
            }
        }
    }
}
