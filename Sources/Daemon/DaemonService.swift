import GPSD
import GPSModel
import Lodestar
import Policy
import Capture
import Receivers
import Synchronization
import SystemInterface

#if canImport(Glibc)
    import Glibc
#endif

/// What one run of the service is given: the config, the profile it names (already loaded), and how the
/// receiver is powered. Built by `lodestar run` from the config file and flags, and again on each reload.
public struct DaemonSetup: Sendable {
    public var configuration: DaemonConfiguration
    public var profile: Profile
    /// nil: the receiver is never commanded (`receiver.powerControl` false).
    public var power: ReceiverPowerSetup?
    /// The runtime's clock against the monotonic clock: 1 live; the demo plays an emulated receiver faster.
    public var clockRate: Double = 1
    /// The motion sensor's line (`motion.gpio`); nil: none.
    public var motion: MotionSetup?

    /// With `motion`, the profile runs with `policy.motion.sensor` on: a pause keeps the receiver down until a
    /// hint, and probes only as the fallback.
    public init(
        configuration: DaemonConfiguration, profile: Profile, power: ReceiverPowerSetup?, motion: MotionSetup? = nil,
        clockRate: Double = 1
    ) {
        var profile = profile
        if motion != nil { profile.policy.motion.sensor = true }
        (self.configuration, self.profile, self.power, self.motion, self.clockRate) =
            (configuration, profile, power, motion, clockRate)
    }
}

/// Why the service stopped.
public enum DaemonOutcome: Sendable, Equatable {
    /// SIGTERM, SIGINT or the caller's stop: the receiver was put in its exit regime and the outputs flushed.
    case stopped
    /// A directory the service needs could not be made or written; the message names it.
    case cannotCreate(String)
}

/// The service `lodestar run` is: a `LocationManager` running the profile against gpsd with receiver power
/// control, its deliveries written to the configured outputs, its state saved and its status published
/// (status file, systemd notifications). Runs on the caller's thread until told to stop; a reload swaps the
/// manager and the outputs for ones built from the new setup without leaving the process.
public final class DaemonService {
    /// What the caller provides besides the setup: where log lines go, the outputs a config asks for, and the
    /// process's signals.
    public struct Hooks {
        /// What the service says happens, to the journal (stderr); its level follows the config's `logLevel`.
        public var logger: Logger
        /// The outputs a config names; failures to open one are logged and it is left out.
        public var makeOutputs: (DaemonConfiguration) -> [any TrackOutput]
        /// True once SIGTERM or SIGINT came (or the caller wants the run to end).
        public var shouldStop: () -> Bool
        /// Called about every 0.2 s: a new setup after SIGHUP, or the problems that kept the old one; nil when
        /// no reload was asked for.
        public var takeReload: () -> DaemonReload?
        /// Signalled when `shouldStop` or `takeReload` may have news (a signal handler writes it): with it the
        /// service sleeps until its next timer, up to a second, instead of looking every 0.2 s.
        public var wakeUp: WakeUpPipe?
        /// Every update, after the service handled it (the demo counts and compares).
        public var observe: (LocationUpdate) -> Void = { _ in }
        /// The run of a setup, given the last location to restore: a `LocationManager` against gpsd
        /// (`ManagedRun`) unless a test scripts one.
        public var makeRun: (DaemonSetup, Location?) -> any DaemonRun = { ManagedRun(setup: $0, restoring: $1) }

        public init(
            logger: Logger, makeOutputs: @escaping (DaemonConfiguration) -> [any TrackOutput],
            shouldStop: @escaping () -> Bool, wakeUp: WakeUpPipe? = nil,
            takeReload: @escaping () -> DaemonReload? = { nil }
        ) {
            self.logger = logger
            self.makeOutputs = makeOutputs
            self.shouldStop = shouldStop
            self.wakeUp = wakeUp
            self.takeReload = takeReload
        }
    }

    private var setup: DaemonSetup
    private var hooks: Hooks
    private var outputs: [OutputGuard] = []
    /// The location store and its uploaders; nil without a store.
    private var forwarder: StoreForwarder?
    /// The status and state files whose last write failed, with the failure (logged once per change).
    private var failing: [String: String] = [:]
    /// What is wrong now, oldest first, by what it is about: status shows the newest as its last error, and
    /// each goes when its condition does (a reload that succeeds, an output written again, a fix).
    private var problems: [(key: String, message: String, at: UTCTime)] = []
    private var run: (any DaemonRun)?
    /// When the running run was told to shut down (a stop or a reload), on the monotonic clock.
    private var runShutDownAt: Double?
    private let clock: any DaemonClock
    private let started: Double
    private let startedAt: UTCTime
    private var status: DaemonStatus
    /// What the state file held at start; `state` is it plus this run.
    private var savedState = PersistedState()
    private var state = PersistedState()
    private var ledger: EnergyLedger
    /// Charge of the runs before the last reload (each reload starts a ledger with the new model).
    private var chargeBeforeReload = (charge: 0.0, alwaysOn: 0.0)
    private let notifier: SystemdNotifier
    private var nextStatus = 0.0
    private var nextSave = 0.0
    private var nextDurableSave = 0.0
    /// The store's `syncPoints` the outputs last followed.
    private var outputsSyncedAt = 0
    private var nextWatchdog = 0.0

    /// `environment` is where systemd's NOTIFY_SOCKET and WATCHDOG_USEC are read (the process's by default);
    /// `clock` is the service's time (the system's, but for tests).
    public init(
        setup: DaemonSetup, hooks: Hooks, environment: [String: String] = SystemdNotifier.processEnvironment(),
        clock: any DaemonClock = SystemDaemonClock()
    ) {
        self.setup = setup
        self.hooks = hooks
        self.clock = clock
        started = clock.monotonicSeconds
        startedAt = clock.now
        notifier = SystemdNotifier(environment: environment)
        status = DaemonStatus(
            pid: getpid(), started: startedAt, updated: startedAt, profile: setup.profile.name,
            device: setup.configuration.gpsd.device, mechanism: Self.mechanismName(setup),
            regime: .continuous, regimeReason: "starting", updateInterval: setup.configuration.status.updateInterval)
        ledger = EnergyLedger(model: setup.profile.receiver, start: 0)
    }

    /// The receiver's charge this run as the service estimated it (mAh), and what always-on would have drawn.
    public var estimatedCharge: (charge: Double, alwaysOn: Double) {
        (status.chargeMilliampHours, status.alwaysOnMilliampHours)
    }

    private var log: Logger { hooks.logger }

    /// What the journal files a policy event under: a receiver gone or a wake without a fix is a warning
    /// (`journalctl -p warning` shows them), the rest is what a tracker does all day.
    static func level(of kind: PolicyEventKind) -> Logger.Level {
        switch kind {
        case .receiverLost, .acquisitionFailed, .receiverTimeChanged: .warning
        case .receiverBack: .notice
        case .requestFailed: .warning
        case .paused, .resumed, .deferredFinished, .significantChange, .requestCompleted, .wakeDeliveredNothing: .info
        }
    }

    /// A command without effect, a wake that failed or a command not sent is a warning; the identification
    /// a notice; every regime step information.
    static func level(of kind: PowerEvent.Kind) -> Logger.Level {
        switch kind {
        case .noEffect, .wakeFailed, .commandFailed, .regimeUnreachable: .warning
        case .receiverIdentified, .receiverUnknown: .notice
        case .regimeCommanded, .quiet, .firstFixAfterWake, .reapplied: .info
        }
    }

    /// Seconds since the service started, on the monotonic clock.
    private var t: Double { clock.monotonicSeconds - started }
    /// Seconds since the service started on the runtime's clock (the receiver's, in the demo).
    private var receiverSeconds: Double { t * setup.clockRate }

    /// How long the service waits for the manager to put the receiver in its exit regime.
    static let managerStopLimit = 1.4
    /// How long it waits for the uploaders to give up a send in flight (it is sent again next run).
    static let uploadStopLimit = 0.3

    /// The store and uploaders a setup names, on the service's clock (the receiver's, in the demo).
    private func makeForwarder(_ setup: DaemonSetup) -> StoreForwarder? {
        let started = self.started
        let rate = setup.clockRate
        let serviceClock = self.clock
        let clock = ForwardingClock(
            anchor: startedAt, rate: rate, seconds: { (serviceClock.monotonicSeconds - started) * rate })
        let forwarder = StoreForwarder(
            configuration: setup.configuration, clock: clock, newestDelivered: state.lastLocation?.timestamp,
            logger: hooks.logger)
        status.store = forwarder == nil ? nil : setup.configuration.store.map {
            DaemonConfiguration.resolve($0.path, under: setup.configuration.stateDirectory)
        }
        return forwarder
    }

    /// Runs until `hooks.shouldStop`; returns within about 2 s of it.
    public func runUntilStopped() -> DaemonOutcome {
        if let problem = Self.prepareDirectories(setup.configuration) { return .cannotCreate(problem) }
        let stateFile = PersistedStateFile(stateDirectory: setup.configuration.stateDirectory)
        let loaded = stateFile.load(now: clock.now)
        if let message = loaded.message { log.warning(message) }
        savedState = loaded.state
        state = savedState
        state.runs += 1
        if let last = savedState.lastLocation {
            status.lastFix = last.timestamp
            status.lastLocation = last
            log.info(
                "restored: last location \(last.timestamp.iso8601), receiver left in "
                    + "\(savedState.regime?.rawValue ?? "an unknown regime"), \(savedState.fixesDelivered) locations over "
                    + "\(savedState.runs) earlier run\(savedState.runs == 1 ? "" : "s")")
        }
        outputs = hooks.makeOutputs(setup.configuration).map(OutputGuard.init)
        forwarder = makeForwarder(setup)
        outputsSyncedAt = 0
        log.notice(
            "profile \(setup.profile.name), gpsd \(setup.configuration.gpsd.host):\(setup.configuration.gpsd.port)"
                + (setup.configuration.gpsd.device.map { " device \($0)" } ?? "")
                + ", power control \(Self.mechanismName(setup)); outputs: "
                + (outputs.isEmpty ? "none" : outputs.map(\.name).joined(separator: ", "))
                + Self.motionWords(setup.motion))
        run = startRun(setup)
        publish()
        notify(notifier.ready(status: status.systemdStatusLine(now: clock.now)))
        var nextTick = 0.0
        var watched = outputs.flatMap(\.pollDescriptors)
        let wakeUp = hooks.wakeUp.map { [$0.descriptor] } ?? []
        while let current = run {
            // Outside the gate: meanwhile the run's thread handles what it delivers. A socket client is accepted
            // as it connects. Told of signals, the loop sleeps until its next timer (the tick, the status, the
            // watchdog), up to a second; else, and while the run shuts down, it looks every 0.2 s.
            let next = notifier.watchdogInterval == nil ? min(nextTick, nextStatus) : min(nextTick, nextStatus, nextWatchdog)
            let pause = hooks.wakeUp == nil || runShutDownAt != nil ? 0.2 : min(1, max(0.01, next - t))
            let readable = current.waitForUpdates(seconds: pause, watching: wakeUp + watched)
            if readable { hooks.wakeUp?.drain() }
            let ended = gate.withLock { _ -> Bool in
                if readable {
                    for output in outputs where !output.pollDescriptors.isEmpty {
                        report(output.tick(now: clock.now, t: t), of: output)
                    }
                }
                let (updates, finished) = current.take()
                for update in updates { handle(update) }
                if finished {
                    finishCapture(of: current)
                    run = nil
                    return true
                }
                if hooks.shouldStop(), runShutDownAt == nil {
                    log.notice("stopping: the receiver goes to \(setup.profile.effectiveExitRegime.rawValue)")
                    notify(notifier.stopping())
                    runShutDownAt = clock.monotonicSeconds
                    current.shutDown()
                }
                // With the 0.2 s turn before the stop is seen and the outputs' close after, this keeps the exit
                // within systemd's and the contract's 2 s.
                if let asked = runShutDownAt, clock.monotonicSeconds - asked > Self.managerStopLimit {
                    log.warning(
                        "the manager did not finish within \(Self.managerStopLimit) s of the stop; leaving anyway")
                    finishCapture(of: current)
                    run = nil
                    return true
                }
                if runShutDownAt == nil, let reload = hooks.takeReload() { apply(reload) }
                if t >= nextTick {
                    nextTick = t + 1
                    tickOutputs()
                }
                housekeeping()
                // Watched again at once: a client that connects just after another must be accepted before the
                // next location, or it misses that location. A listener whose accept fails offers nothing here.
                watched = outputs.flatMap(\.pollDescriptors)
                return false
            }
            if ended { break }
        }
        // From here no run's thread handles an update: a manager that did not finish keeps its last ones.
        gate.withLock { $0 = true }
        for output in outputs {
            for entry in output.finish(t: t) { log.log(entry.level, entry.text) }
        }
        forwarder?.close(waitingAtMost: Self.uploadStopLimit)
        // The last status keeps what the outputs and the store lost.
        publish()
        outputs = []
        forwarder = nil
        save()
        // A reload's shutdown ends with its new run: what is left is the stop's.
        if let stopSeen = runShutDownAt {
            let seconds = ((clock.monotonicSeconds - stopSeen) * 100).rounded() / 100
            log.notice("stopped \(seconds) s after the stop was seen")
        }
        return .stopped
    }

    /// The status file and systemd's STATUS line every `updateInterval`, the state file every minute, the
    /// watchdog at half its interval.
    private func housekeeping() {
        if let problem = run?.newCaptureFailure() {
            log.error(problem)
            note(error: problem, about: "capture")
        }
        if let problem = run?.newMotionFailure() {
            log.error(problem)
            note(error: problem, about: "motion")
        }
        for level in run?.newIgnitionLevels() ?? [] { log.info(level) }
        let now = t
        if now >= nextStatus {
            nextStatus = now + setup.configuration.status.updateInterval
            publish()
            notify(notifier.status(status.systemdStatusLine(now: status.updated)))
        }
        if now >= nextSave {
            // Written every minute, so a killed daemon resumes from at most a minute ago (the page cache
            // outlives the process). Synced only as often as the store (journald's 5 min by default): each
            // synced save is two fsyncs, and after a power cut what it keeps (the last location, the
            // totals) is worth no more than the store's last interval.
            nextSave = now + 60
            let durable = now >= nextDurableSave
            if durable { nextDurableSave = now + max(60, setup.configuration.store?.syncInterval ?? 300) }
            save(durable: durable)
        }
        if let interval = notifier.watchdogInterval, now >= nextWatchdog {
            nextWatchdog = now + interval
            notify(notifier.watchdog())
        }
    }

    private func publish() {
        let charge = chargeBeforeReload.charge + ledger.charge(at: receiverSeconds)
        let alwaysOn = chargeBeforeReload.alwaysOn + ledger.alwaysOn(at: receiverSeconds)
        status.updated = clock.now
        status.uploads = forwarder?.uploads ?? []
        status.storeDropped = forwarder?.dropped ?? 0
        status.storeLost = forwarder?.lost ?? 0
        if let problem = forwarder?.writeProblem { note(error: "store: \(problem)", about: "store") } else { clear("store") }
        status.outputs = outputs.map(\.status)
        status.chargeMilliampHours = charge
        status.alwaysOnMilliampHours = alwaysOn
        state.chargeMilliampHours = savedState.chargeMilliampHours + charge
        state.alwaysOnMilliampHours = savedState.alwaysOnMilliampHours + alwaysOn
        state.fixesDelivered = savedState.fixesDelivered + status.fixesDelivered
        do throws(DaemonFileError) {
            try StatusFile(runtimeDirectory: setup.configuration.runtimeDirectory).write(status)
            recoveredFile("status")
        } catch {
            failedFile("status", error.description)
        }
    }

    private func save(durable: Bool = true) {
        do throws(DaemonFileError) {
            try PersistedStateFile(stateDirectory: setup.configuration.stateDirectory).save(state, durable: durable)
            recoveredFile("state")
        } catch {
            failedFile("state", error.description)
        }
    }

    private func failedFile(_ name: String, _ reason: String) {
        guard failing[name] != reason else { return }
        failing[name] = reason
        log.error("cannot write the \(name) file: \(reason)")
        note(error: reason, about: "file \(name)")
    }

    private func recoveredFile(_ name: String) {
        guard failing.removeValue(forKey: name) != nil else { return }
        clear("file \(name)")
        log.notice("the \(name) file is written again")
    }

    private var notifyFailed = false

    /// A failed notification is logged once; the service never stops for it.
    private func notify(_ failure: NotifyFailure?) {
        if let failure, !notifyFailed { log.warning("\(failure)") }
        notifyFailed = failure != nil
    }

    private func apply(_ reload: DaemonReload) {
        switch reload {
        case .rejected(let problems):
            log.error("reload refused, the running config stays:")
            for problem in problems { log.error("  \(problem)") }
            // Each refusal is news, not the same condition going on: it becomes the newest problem.
            clear("reload")
            note(error: "reload refused: " + (problems.first ?? "invalid config"), about: "reload")
        case .accepted(let new):
            log.notice("reloading: profile \(new.profile.name)")
            hooks.logger.logLevel = new.configuration.logLevel
            // The config now running is valid: a refusal of an earlier one is no longer true.
            clear("reload")
            let asked = clock.monotonicSeconds
            notify(notifier.reloading(monotonicSeconds: asked))
            let old = run
            runShutDownAt = asked
            old?.shutDown()
            // The old manager puts the receiver in its exit regime; the new one wakes it as any start does.
            while let old, !old.isFinished, clock.monotonicSeconds - asked < Self.managerStopLimit {
                old.waitForUpdates(seconds: 0.1)
                for update in old.take().updates { handle(update) }
            }
            if let old { finishCapture(of: old) }
            let outputsChanged =
                new.configuration.outputs != setup.configuration.outputs
                || new.configuration.stateDirectory != setup.configuration.stateDirectory
                || new.configuration.runtimeDirectory != setup.configuration.runtimeDirectory
            let forwardingChanged =
                new.configuration.store != setup.configuration.store
                || new.configuration.upload != setup.configuration.upload
                || new.configuration.coordinates != setup.configuration.coordinates
                || new.configuration.stateDirectory != setup.configuration.stateDirectory
                || new.clockRate != setup.clockRate
            if outputsChanged {
                for output in outputs {
                    for entry in output.finish(t: t) { log.log(entry.level, entry.text) }
                    clear("output \(output.name)")
                }
                if let problem = Self.prepareDirectories(new.configuration) { log.error(problem) }
                outputs = hooks.makeOutputs(new.configuration).map(OutputGuard.init)
            }
            // The old run's capture is closed; the new run has its own.
            clear("capture")
            for output in outputs { output.retryNow() }
            if forwardingChanged {
                forwarder?.close(waitingAtMost: Self.uploadStopLimit)
                forwarder = makeForwarder(new)
                outputsSyncedAt = 0
            }
            chargeBeforeReload.charge += ledger.charge(at: receiverSeconds)
            chargeBeforeReload.alwaysOn += ledger.alwaysOn(at: receiverSeconds)
            let startedAgain = t * new.clockRate
            setup = new
            ledger = EnergyLedger(model: new.profile.receiver, start: startedAgain)
            status.profile = new.profile.name
            status.mechanism = Self.mechanismName(new)
            status.updateInterval = new.configuration.status.updateInterval
            run = startRun(new)
            runShutDownAt = nil
            publish()
            notify(notifier.ready(status: status.systemdStatusLine(now: clock.now)))
        }
    }

    // MARK: Updates

    /// Held by whichever thread works on the service: the run's own thread while it hands over an update
    /// (`deliverDirectly`), the service's thread for the rest. The run's thread only tries it, and leaves the
    /// update in the run's inbox when the service's thread has it, so neither waits for the other. Its value is
    /// true once the service has finished with its runs. Handing the updates to the service's thread cost a
    /// pipe write, a poll, a read and two thread switches per update (bench/daemon.sh).
    private let gate = Mutex(false)

    /// The run of `setup`, handing its updates to this service on its own thread while the gate is free.
    private func startRun(_ setup: DaemonSetup) -> any DaemonRun {
        let started = hooks.makeRun(setup, state.lastLocation)
        started.deliverDirectly(to: ServiceHandOver(service: self, run: started))
        return started
    }

    /// On the run's thread: the updates it left in its inbox while the gate was taken, then `update`; false
    /// (it waits in the inbox) when the gate is taken, the service has finished, or the run is no longer the
    /// service's (a reload replaced it).
    fileprivate func takeDirectly(_ update: LocationUpdate, from candidate: AnyObject) -> Bool {
        gate.withLockIfAvailable { finished -> Bool in
            guard !finished, let current = run, current === candidate else { return false }
            for earlier in current.take().updates { handle(earlier) }
            handle(update)
            return true
        } ?? false
    }

    private func handle(_ update: LocationUpdate) {
        let now = clock.now
        forwarder?.record(update)
        switch update {
        case .locations(let locations):
            let coordinates = setup.configuration.coordinates
            // A fix says the receiver is back and navigating.
            if !locations.isEmpty { ["receiver", "acquisition", "wake"].forEach(clear) }
            // The first location a state holds is saved at once: until then a restart has nothing to resume.
            if state.lastLocation == nil, !locations.isEmpty { nextSave = 0 }
            for location in locations {
                // Outputs get the configured datum; the state, the status and the store keep WGS-84.
                write(.location(coordinates == .wgs84 ? location : location.converted(to: coordinates)), now: now)
                status.fixesDelivered += 1
                status.lastFix = location.timestamp
                status.lastLocation = location
                state.lastLocation = location
                state.lastNavigating = location.timestamp
            }
        case .regime(var regime, var reason):
            // Stopping, the policy lets go of the receiver ("off: shutting down"), but what the receiver is
            // left in is the exit regime the stop already named: status, state and the log say that.
            if runShutDownAt != nil {
                regime = setup.profile.effectiveExitRegime
                reason = "\(reason): left in the exit regime"
            }
            status.regime = regime
            status.regimeReason = reason
            state.regime = regime
            log.info("regime \(regime.rawValue): \(reason)")
            write(.regime(regime, reason: reason, t: t, at: now), now: now)
        case .event(let kind, let detail):
            log.log(Self.level(of: kind), "\(kind.name): \(detail)")
            if case .receiverLost = kind { note(error: detail, about: "receiver") }
            if case .acquisitionFailed = kind { note(error: "no fix: \(detail)", about: "acquisition") }
            write(.event(kind, detail: detail, t: t, at: now), now: now)
        case .power(let event):
            if setup.power != nil { ledger.record(event, at: receiverSeconds) }
            log.log(
                Self.level(of: event.kind), "power: \(event.kind.rawValue): \(event.detail)",
                metadata: event.mechanism.map { [Logger.Metadata("mechanism", $0.rawValue)] } ?? [])
            switch event.kind {
            case .receiverIdentified, .receiverUnknown:
                status.receiver = event.detail
                status.mechanism = event.mechanism?.rawValue ?? "none"
            case .noEffect: note(error: event.detail, about: "sleep")
            case .wakeFailed, .commandFailed: note(error: event.detail, about: "wake")
            case .quiet: clear("sleep")
            case .firstFixAfterWake: clear("wake")
            default: break
            }
            write(.power(event, t: t, at: now), now: now)
        case .noFix(let notice):
            log.info(notice.sentence)
        case .transmitted(let bytes, let description):
            log.debug("power: sent \(description): \(hexadecimal(bytes))")
        }
        followStoreSync()
        hooks.observe(update)
    }

    /// Syncs the outputs' files when the store synced since the last call, after the update's records were
    /// written to them: a power cut loses no more of a file than of the store.
    private func followStoreSync() {
        guard let forwarder, forwarder.syncPoints != outputsSyncedAt else { return }
        outputsSyncedAt = forwarder.syncPoints
        let now = clock.now
        let t = self.t
        for output in outputs { report(output.sync(now: now, t: t), of: output) }
    }

    private func finishCapture(of run: any DaemonRun) {
        if let problem = run.finishCapture() {
            log.error(problem)
            note(error: problem, about: "capture")
        }
    }

    /// `error` is true now, about `key`; the status shows the newest problem still true.
    private func note(error: String, about key: String) {
        if let index = problems.firstIndex(where: { $0.key == key }) {
            // The same condition, still there, perhaps in other words (a full store fails on the insert, then on
            // the checkpoint): it keeps its place and the time it began, so it does not hide a newer problem.
            problems[index].message = error
        } else {
            problems.append((key, error, clock.now))
        }
        showNewestProblem()
    }

    /// The condition about `key` is over.
    private func clear(_ key: String) {
        guard let index = problems.firstIndex(where: { $0.key == key }) else { return }
        problems.remove(at: index)
        showNewestProblem()
    }

    private func showNewestProblem() {
        status.lastError = problems.last?.message
        status.lastErrorAt = problems.last?.at
        status.errors = problems.map(\.message)
    }

    private func write(_ record: TrackRecord, now: UTCTime) {
        let t = self.t
        for output in outputs { report(output.write(record, now: now, t: t), of: output) }
    }

    private func tickOutputs() {
        forwarder?.tick()
        let now = clock.now
        let t = self.t
        for output in outputs { report(output.tick(now: now, t: t), of: output) }
        followStoreSync()
    }

    private func report(_ lines: [LogEntry], of output: OutputGuard) {
        for entry in lines { log.log(entry.level, entry.text) }
        if let failure = output.failure {
            note(error: "\(output.name): \(failure)", about: "output \(output.name)")
        } else {
            clear("output \(output.name)")
        }
    }

    // MARK: Set-up

    /// `; motion IIO iio:device0 (mpu6050), sampled every 0.2 s` for the start line; empty without a source.
    static func motionWords(_ motion: MotionSetup?) -> String {
        guard let source = motion?.source else { return "" }
        guard let interval = source.sampleInterval else { return "; \(source)" }
        return "; \(source), sampled every \(interval) s"
    }

    static func mechanismName(_ setup: DaemonSetup) -> String {
        guard let power = setup.power else { return "none" }
        if let mechanism = power.mechanism { return mechanism.rawValue }
        return "from the receiver gpsd identifies"
    }

    /// Makes the state and runtime directories (0755); the message names the one that failed and why.
    static func prepareDirectories(_ configuration: DaemonConfiguration) -> String? {
        for (directory, key) in [(configuration.stateDirectory, "stateDirectory"), (configuration.runtimeDirectory, "runtimeDirectory")] {
            if let problem = makeDirectories(directory) {
                return "\(key): \(problem) (run it as the lodestar service, or give --state-dir and --runtime-dir)"
            }
        }
        return nil
    }

    static func makeDirectories(_ path: String) -> String? {
        do throws(SystemError) {
            try SystemInterface.makeDirectories(path)
        } catch {
            return "cannot create \(error.subject): \(error.reason)"
        }
        if access(path, W_OK) != 0 { return "cannot write in \(path): \(Errno.current)" }
        return nil
    }
}

/// What a SIGHUP gave: a new setup, or the problems of the new config (the running one stays).
public enum DaemonReload: Sendable {
    case accepted(DaemonSetup)
    case rejected([String])
}

/// What a run's thread calls to hand an update to the service. The service is not `Sendable`: every use of it
/// from here is under its gate (`DaemonService.takeDirectly`), which makes one thread at a time work on it.
private final class ServiceHandOver: UpdateTaker, @unchecked Sendable {
    private weak var service: DaemonService?
    private let run: AnyObject

    init(service: DaemonService, run: any DaemonRun) {
        self.service = service
        self.run = run
    }

    func take(_ update: LocationUpdate) -> Bool {
        service?.takeDirectly(update, from: run) ?? false
    }
}
