import GPSD
import SystemInterface
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
    /// Receiver power control, when the application asked for it and the source is live.
    private var power: ReceiverPowerDriver?
    /// Regimes power control offered that the policy has not been given yet.
    private var pendingOffer: (regimes: Set<ReceiverRegime>, at: Instant)?
    /// Live, with a no-fix interval: notices a receiver that should be navigating and has no fix.
    private var noFix: NoFixReporter?
    /// Since when, and in which regime, the policy has had the receiver down on purpose.
    private var down: (since: Instant, regime: ReceiverRegime)?
    /// Live: what the runtime does is also written to the capture.
    private let recorder: CaptureRecorder?
    private var done: Bool { driver.isShutDown }

    init(core: ManagerCore) {
        self.core = core
        switch core.source {
        case .gpsd(let host, let port, let device):
            source = LiveSource(
                host: host, port: port, device: device, receiverLink: core.receiverLink, clockRate: core.clockRate,
                recorder: core.live.recorder, recordsReceiverBytes: core.live.recordsReceiverBytes)
            recorder = core.live.recorder
            assembler = LocationAssembler(origin: .live)
            if let setup = core.power, let commands = core.receiverLink.commands {
                power = ReceiverPowerDriver(
                    setup: setup, model: core.receiver, host: host, port: port, device: device, commands: commands,
                    inbox: core.inbox)
            }
        case .replay(let contents, let speed):
            source = ReplaySource(contents, speed: speed, receiver: core.receiver)
            assembler = LocationAssembler(origin: .replay)
            recorder = nil
        }
        driver = PolicyDriver(
            configuration: core.configuration, receiver: core.receiver, instantsNeverGoBack: true)
    }

    func run() {
        source.start(inbox: core.inbox)
        if core.source.isLive, core.live.noFixInterval > 0 {
            // Nothing says how long the receiver was down before the start: a cold start's time is its due.
            noFix = NoFixReporter(
                interval: core.live.noFixInterval, now: source.now.seconds, grace: core.receiver.timeToFirstFix.cold)
        }
        while !done {
            fireTimers(through: source.now)
            offerRegimes()
            reportNoFix()
            for message in core.inbox.take() where !done {
                let now = source.now
                fireTimers(through: now)
                switch message {
                case .command(let event): handle(event, at: now)
                case .powerReply(let outcome):
                    power?.reply(outcome, at: now)
                    handPowerOutputsOn()
                }
                offerRegimes()
            }
            if done { break }
            let deadlines = [driver.nextDeadline, power?.nextDeadline, noFix?.nextDeadline.map(Instant.init(seconds:))]
                .compactMap { $0 }
            switch source.next(before: deadlines.min(), inbox: core.inbox) {
            case .event(let event, let instant):
                fireTimers(through: instant)
                receive(event, at: instant)
                offerRegimes()
                reportNoFix()
            case .idle:
                continue
            case .ended(let instant):
                handle(.shutdown, at: instant)
            }
        }
        if let exitRegime = core.exitRegime { core.receiverLink.setRegime(exitRegime, reason: "exiting: the exit regime") }
        if let power, let exitRegime = core.exitRegime { leave(power, in: exitRegime) }
        source.stop()
        core.finish()
    }

    // MARK: Inputs

    /// Puts the receiver in the exit regime and waits, 1.2 s at most (a service must stop within 2 s of
    /// SIGTERM, outputs flushed), for gpsd to have taken the commands.
    private func leave(_ power: ReceiverPowerDriver, in exitRegime: ReceiverRegime) {
        power.shutdown(exitRegime: exitRegime, at: source.now)
        handPowerOutputsOn()
        let limit = monotonicSeconds() + 1.2
        while !(power.isFinished && power.unanswered == 0), monotonicSeconds() < limit {
            let wait = power.nextDeadline.map { max(($0 - source.now) / core.clockRate, 0) } ?? 0.1
            // A live source reads gpsd and writes the commands within `next`; what it reads now is dropped.
            let seconds = max(min(wait, limit - monotonicSeconds()), 0)
            _ = source.next(before: Instant(seconds: source.now.seconds + seconds * core.clockRate), inbox: core.inbox)
            for case .powerReply(let outcome) in core.inbox.take() { power.reply(outcome, at: source.now) }
            power.advance(to: source.now)
            handPowerOutputsOn()
        }
    }

    /// Hands the policy the regimes power control offered last, if it has not had them.
    private func offerRegimes() {
        guard let offer = pendingOffer, !done else { return }
        pendingOffer = nil
        handle(.regimesOffered(offer.regimes), at: offer.at)
    }

    /// Carries out what power control said: the regimes it offers go to the policy, its events and writes to
    /// the application.
    private func handPowerOutputsOn() {
        guard let power else { return }
        for (output, instant) in power.takeOutputs() {
            switch output {
            case .offer(let regimes):
                // Handed to the policy at the loop's next turn: this may run inside a policy step.
                pendingOffer = (regimes, instant)
            case .report(let event):
                recorder?.recordPowerEvent(event)
                core.broadcast(.power(event))
            case .transmitted(let bytes, let description):
                recorder?.recordTransmitted(bytes)
                core.broadcast(.transmitted(bytes, description: description))
            }
        }
    }

    private func receive(_ event: LiveEvent, at instant: Instant) {
        switch event {
        case .fix(let fix):
            if let notice = noFix?.observe(fix, at: instant.seconds) { core.broadcast(.noFix(notice)) }
        case .report(.sky(let sky)):
            noFix?.observe(sky, at: instant.seconds)
        default:
            break
        }
        if let power {
            power.observe(event, at: instant)
            handPowerOutputsOn()
        }
        if let location = assembler.location(after: event) {
            handle(.fix(location), at: instant)
            return
        }
        switch event {
        case .fix, .report, .deviceActivated, .deviceClosed:
            break
        case .receiverLost(let reason), .gpsdLost(let reason):
            // The policy has one loss: no fixes are coming, whether the receiver or gpsd is gone.
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

    /// A no-fix line when one is due.
    private func reportNoFix() {
        guard !done, let notice = noFix?.check(at: source.now.seconds) else { return }
        core.broadcast(.noFix(notice))
    }

    /// The receiver is expected to navigate in continuous and power save only; after a wake, not before its
    /// time to first fix from the regime it was in.
    private func noteNavigating(_ regime: ReceiverRegime, at now: Instant) {
        switch regime {
        case .off, .standby:
            if down == nil { down = (now, regime) }
            noFix?.suspend()
        case .powerSave, .continuous:
            let grace = down.map { core.receiver.timeToFirstFix(afterDown: now - $0.since, in: $0.regime) } ?? 0
            down = nil
            noFix?.resume(at: now.seconds, grace: grace)
        }
    }

    private func handle(_ event: PolicyEvent, at instant: Instant) {
        driver.handle(event, at: instant, perform: perform)
    }

    /// Fires, in deadline order, every timer due at or before `instant`, each at its own deadline.
    private func fireTimers(through instant: Instant) {
        driver.advance(to: instant, perform: perform)
        if let power {
            power.advance(to: instant)
            handPowerOutputsOn()
        }
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
                noteNavigating(regime, at: now)
                recorder?.recordRegime(regime, reason: reason)
                core.receiverLink.setRegime(regime, reason: reason)
                if let power {
                    power.requestRegime(regime, reason: reason, at: now)
                    handPowerOutputsOn()
                }
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
