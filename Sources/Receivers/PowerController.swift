import GPSD
import Policy

/// Receiver power control as a sans-I/O state machine, in the style of `Policy`: inputs come in stamped with
/// the monotonic `now` (seconds), actions go out, and the runtime calls `handle(.tick, now:)` again at
/// `nextDeadline`. It never reads a clock, sleeps or does I/O.
///
/// It puts the receiver in the regime the policy asks for by the mechanism that fits the receiver and its
/// connection (UBX or PMTK frames through gpsd, a power switch, or releasing the device through gpsd), and
/// checks the effect: a down regime counts once the receiver went quiet, a wake once output resumed, and a
/// down command the receiver kept talking through is reported once as having no effect and not used again.
/// `achievedRegime` is only ever what was observed, so no saving is reported that the receiver did not make.
///
/// gpsd's own habits are handled here: reopening a device probes it, which wakes a sleeping MTK or u-blox
/// on its UART (the down regime is applied again once the probing is over); gpsd switches an identified
/// u-blox to binary (nothing changes: gpsd decodes either); gpsd closes a device 60 s after its last watcher
/// left (the release mechanism relies on it, and allows for it before calling a release ineffective).
public struct PowerController: Sendable {
    public let configuration: PowerControllerConfiguration
    /// The regime the receiver is in as far as observed: a down regime only once it went quiet, powerSave
    /// once gpsd took the commands, continuous for anything unconfirmed (a wake, a command with no effect).
    public internal(set) var achievedRegime: ReceiverRegime = .continuous
    /// The regimes last offered to the policy.
    public internal(set) var offeredRegimes: Set<ReceiverRegime> = [.continuous]
    /// The mechanism in use; nil until it is known (a receiver with commands must be identified first).
    public internal(set) var mechanism: PowerControl?
    public internal(set) var connection: ReceiverConnection
    /// What gpsd's identification of the receiver means for power control; nil until gpsd named a driver.
    public internal(set) var identification: ReceiverIdentification?

    var identity: ReceiverIdentity?
    var devicePath: String?
    /// Whether the controller acts on the receiver yet (it needs a mechanism).
    var engaged = false
    /// Whether the first wake of a receiver with commands was sent.
    var startWakeSent = false
    var requested: ReceiverRegime = .continuous
    var target: ReceiverRegime = .continuous
    var phase: Phase = .running(.continuous)
    /// Regimes a command had no effect for: never used again.
    var ineffective: Set<ReceiverRegime> = []
    var reportedUnreachable: Set<ReceiverRegime> = []
    var readOnlyGPSD: Bool?
    /// When the wake the next first fix is timed from was sent, and the regime it woke from.
    var firstFixPending: (since: Double, from: ReceiverRegime)?
    /// When to apply the current regime again after gpsd reopened (and probed) the device.
    var reapplyAt: Double?
    /// Held `.down` after a down command that did not reach the receiver: why (see `downUndelivered`). The
    /// next down command says it is sent again for that reason (`begin`).
    var undeliveredDown: String?
    /// The writes awaiting gpsd's answer, oldest first.
    var awaitingReplies: [AwaitingReply] = []
    var shuttingDown = false
    /// The identified receiver's device went away (unplugged, gpsd gone): whatever gpsd activates next is
    /// identified again before it is trusted to be the same receiver.
    var deviceGone = false
    /// The device that came back after `deviceGone`, while its receiver is being identified again.
    var reidentifying: Reidentifying?
    /// Whether `offeredRegimes` went out once (the first offer goes out even when it is the default).
    var hasOffered = false
    var actions: [PowerControllerAction] = []

    public init(configuration: PowerControllerConfiguration) {
        self.configuration = configuration
        self.connection = configuration.connection ?? .unknown
        self.readOnlyGPSD = configuration.readOnlyGPSD
    }

    /// When the runtime must call `handle(.tick, now:)` next; nil when nothing is pending.
    public var nextDeadline: Double? {
        var deadlines: [Double] = []
        switch phase {
        case .settling(let settle): deadlines.append(settle.until)
        case .goingDown(let goingDown) where !shuttingDown:
            deadlines.append((goingDown.lastOutput ?? goingDown.commandAt) + configuration.timeouts.quietWindow)
        case .waking(let waking) where !shuttingDown:
            deadlines.append(waking.startedAt + configuration.wakeTimeout)
        case .retrying(_, let at) where !shuttingDown: deadlines.append(at)
        default: break
        }
        if let reapplyAt, !shuttingDown { deadlines.append(reapplyAt) }
        if let reidentifying, !shuttingDown { deadlines.append(reidentifying.nextPollAt) }
        return deadlines.min()
    }

    /// Whether a wake was sent whose first fix has not come yet (it will be reported as `firstFixAfterWake`).
    public var isTimingFirstFix: Bool { firstFixPending != nil }

    /// After `.shutdown`: whether everything for the exit regime was handed out (no settle is pending).
    public var isFinished: Bool {
        guard shuttingDown else { return false }
        if case .settling = phase { return false }
        return true
    }

    public mutating func handle(_ input: PowerControllerInput, now: Double) -> [PowerControllerAction] {
        actions = []
        if !engaged && !shuttingDown { engageIfReady(now: now) }
        fireDeadlines(now: now)
        switch input {
        case .receiverChanged(let path, let identity): receiverChanged(path: path, identity: identity, now: now)
        case .output(let path, let hasFix): output(path: path, hasFix: hasFix, now: now)
        case .deviceActivated(let path): deviceActivated(path: path, now: now)
        case .deviceClosed(let path): deviceClosed(path: path, now: now)
        case .regimeRequested(let regime, _): regimeRequested(regime, now: now)
        case .commandReply(let outcome): commandReply(outcome, now: now)
        case .switchFailed(let error):
            downUndelivered("the power switch could not be set")
            report(.commandFailed, regime: target, detail: "the power switch could not be set: \(error)")
        case .tick: break
        case .shutdown(let exitRegime): shutdown(exitRegime: exitRegime, now: now)
        }
        fireDeadlines(now: now)
        let result = actions
        actions = []
        return result
    }

    // MARK: - State

    enum Phase: Sendable {
        /// Up (continuous or power save) or, before the receiver is engaged, assumed to be.
        case running(ReceiverRegime)
        /// A wake preamble went out; `messages` follow at `until`.
        case settling(Settle)
        /// A down command went out; waiting for the receiver to go quiet.
        case goingDown(GoingDown)
        /// Held down and (unless gpsd woke it since) quiet.
        case down(ReceiverRegime)
        /// A wake went out; waiting for output.
        case waking(Waking)
        /// A wake failed; the next try is at `at`.
        case retrying(Waking, at: Double)
    }

    struct Settle: Sendable {
        var until: Double
        var messages: [ReceiverMessage]
        var then: Step
        var note: String
    }

    /// What the writes after a settle lead to.
    enum Step: Sendable {
        case goDown(ReceiverRegime, reapplied: Bool)
        case wake(Waking)
        case run(ReceiverRegime, reapplied: Bool)
    }

    struct GoingDown: Sendable {
        var regime: ReceiverRegime
        var commandAt: Double
        var lastOutput: Double?
        /// Why the down command did not reach the receiver (gpsd refused it, it could not be sent, the switch
        /// failed): quiet that follows is then not its effect (a device gpsd lost also goes quiet).
        var undelivered: String?
    }

    struct Waking: Sendable {
        /// The up regime woken to.
        var regime: ReceiverRegime
        /// The down regime woken from.
        var from: ReceiverRegime
        var startedAt: Double
        /// Tries before this one.
        var attempt: Int
    }

    /// A receiver with commands whose device came back (a replug, a gpsd restart). gpsd names the generic
    /// NMEA driver first for anything that talks NMEA, and gpsd 3.22 probes a device added where another was
    /// no further: the receiver is asked for its versions (u-blox MON-VER, MediaTek PMTK605), whose answer
    /// makes gpsd switch to the make's driver and name it in its next DEVICE report. Until then the
    /// identification from before stands.
    struct Reidentifying: Sendable {
        var path: String
        /// The device came back (a replug, a gpsd restart); false: the receiver was found at start with its
        /// make but not its generation (gpsd names `u-blox` before its MON-VER, if it ever polls it).
        var cameBack = true
        var polls = 0
        var nextPollAt: Double
        /// The vaguer identity gpsd gave meanwhile: taken once the polls are used up without a better one.
        var vague: ReceiverIdentity?
    }

    /// Identification polls sent for a device that came back before gpsd's word is taken as it is.
    public static let identificationPollLimit = 3

    struct AwaitingReply: Sendable {
        var what: String
        /// The last write of a power-save plan: its answer confirms power save.
        var confirmsPowerSave: Bool
        /// Wake bytes: the settle after them counts from when gpsd wrote them.
        var isPreamble = false
        /// One of the messages that send the receiver down.
        var leadsDown = false
    }

    // MARK: - Inputs

    /// `cameBackOn`: the device that came back, when its polls are over and gpsd's vaguer word is taken.
    mutating func receiverChanged(path: String?, identity: ReceiverIdentity?, now: Double, cameBackOn: String? = nil) {
        if let path {
            devicePath = path
            connection = configuration.connection ?? ReceiverConnection(devicePath: path)
        } else if engaged, identification != nil {
            deviceGone = true
        }
        // A device gone (nil identity) keeps what was identified: a USB port switched off brings it back.
        guard let identity else { return }
        // gpsd's notice that the device is back may already name its first, generic driver, and it arrives
        // before the activation itself: the receiver is asked what it is from here.
        if deviceGone { startReidentifying(path: identity.path, now: now) }
        let candidate = ReceiverIdentification(identity)
        var cameBack = cameBackOn
        if var pending = reidentifying, pending.path == identity.path {
            if let current = identification, Self.isVaguer(candidate, than: current) {
                // The same receiver, as far as anything says yet: its power setup goes on.
                pending.vague = identity
                reidentifying = pending
                return
            }
            // Found at start: the same word again is not the answer; the polls go on.
            if !pending.cameBack, candidate == identification { return }
            reidentifying = nil
            if pending.cameBack { cameBack = identity.path }
        }
        let before = (identification, mechanism, connection)
        self.identity = identity
        identification = candidate
        mechanism = resolveMechanism()
        guard engaged else {
            engageIfReady(now: now)
            return
        }
        guard before != (identification, mechanism, connection) else {
            if let cameBack { reportIdentification(cameBackOn: cameBack) }
            return
        }
        // gpsd named a first driver (NMEA0183) and then a better one (u-blox), or reported the versions, or
        // the receiver that came back is another.
        reportIdentification(cameBackOn: cameBack)
        updateOffers()
        // Commands of another kind now (a first vague name made precise, or a receiver of another make on the
        // port): the receiver's own commands wake it from whatever state it is in and apply the regime, which
        // the other make's commands never did.
        if before.1 != mechanism && isCommandMechanism {
            wakeAtStart(now: now, note: startWakeSent ? "another kind of receiver (wake whatever state it is in)" : nil)
            return
        }
        retarget(now: now)
    }

    mutating func output(path: String, hasFix: Bool, now: Double) {
        if let devicePath, path != devicePath { return }
        guard !shuttingDown else { return }
        switch phase {
        case .goingDown(var goingDown):
            goingDown.lastOutput = now
            phase = .goingDown(goingDown)
            if now - goingDown.commandAt >= noEffectDeadline { noEffect(goingDown, now: now) }
        case .down:
            guard reapplyAt == nil else { return }
            // Something woke it (a probe, a reopened port): it runs until the regime is applied again.
            achievedRegime = .continuous
            reapplyAt = now + configuration.timeouts.probeSettle
        case .waking(let waking), .retrying(let waking, _):
            awake(waking, now: now)
        case .running, .settling:
            break
        }
        if hasFix, let pending = firstFixPending, case .running = phase {
            firstFixPending = nil
            report(
                .firstFixAfterWake, regime: pending.from, seconds: now - pending.since,
                detail: "first fix \(seconds(now - pending.since)) after the wake from \(pending.from.rawValue)")
        }
    }

    mutating func deviceActivated(path: String, now: Double) {
        guard engaged, !shuttingDown else { return }
        if deviceGone {
            deviceGone = false
            startReidentifying(path: path, now: now)
        }
        let heldDown: ReceiverRegime
        switch phase {
        case .down(let regime): heldDown = regime
        case .goingDown(let goingDown): heldDown = goingDown.regime
        case .running:
            // A reopened receiver may have lost its configuration (a reconnect, a power cycle).
            if isCommandMechanism { reapplyAt = now + configuration.timeouts.probeSettle }
            return
        case .settling, .waking, .retrying:
            // gpsd brings the device back after a USB port was switched on: output confirms the wake.
            return
        }
        // gpsd probed the device on opening it, which wakes a sleeping receiver: once the probing is over,
        // the down regime goes again.
        phase = .down(heldDown)
        achievedRegime = .continuous
        reapplyAt = now + configuration.timeouts.probeSettle
    }

    mutating func deviceClosed(path: String, now: Double) {
        guard !shuttingDown, case .goingDown(let goingDown) = phase else { return }
        // A USB port switched off takes the device away.
        if mechanism == .usbPort { quiet(goingDown, at: now, now: now) }
    }

    mutating func regimeRequested(_ regime: ReceiverRegime, now: Double) {
        guard !shuttingDown else { return }
        requested = regime
        // Before the receiver is engaged there is nothing to act on: the wake at start applies it.
        guard engaged else { return }
        retarget(now: now)
    }

    mutating func commandReply(_ outcome: GPSDCommandOutcome, now: Double) {
        guard !awaitingReplies.isEmpty else { return }
        let reply = awaitingReplies.removeFirst()
        if reply.isPreamble, case .settling(var settle) = phase {
            // gpsd wrote the wake bytes only now (they waited behind earlier commands): the receiver settles
            // from here, or the next messages would reach it with the bytes that wake it, and be lost.
            settle.until = max(settle.until, now + Double(RegimeWake.settleMilliseconds) / 1000)
            phase = .settling(settle)
        }
        switch outcome {
        case .answered:
            guard reply.confirmsPowerSave, case .running(.powerSave) = phase else { return }
            if readOnlyGPSD == true {
                noEffect(regime: .powerSave, seconds: 0, now: now)
            } else {
                // Power save keeps the fixes coming, so output cannot confirm it: gpsd taking the commands is
                // all there is to see.
                achievedRegime = .powerSave
            }
        case .refused(let message):
            if message.lowercased().contains("read-only") { readOnlyGPSD = true }
            if reply.leadsDown { downUndelivered("gpsd refused \(reply.what)") }
            report(.commandFailed, regime: target, detail: "gpsd refused \(reply.what): \(message)")
        case .failed(let reason):
            if reply.leadsDown { downUndelivered("\(reply.what) was not sent") }
            report(.commandFailed, regime: target, detail: "\(reply.what) was not sent: \(reason)")
        }
    }

    /// The down command in flight did not reach the receiver: the receiver is not counted down when it goes
    /// quiet (`fire` holds it down uncounted instead).
    mutating func downUndelivered(_ why: String) {
        guard case .goingDown(var goingDown) = phase else { return }
        goingDown.undelivered = goingDown.undelivered ?? why
        phase = .goingDown(goingDown)
    }

    mutating func shutdown(exitRegime: ReceiverRegime, now: Double) {
        shuttingDown = true
        reapplyAt = nil
        reidentifying = nil
        guard engaged else {
            report(
                .regimeCommanded, regime: exitRegime,
                detail: "on exit: nothing sent, the receiver was never identified (it is left as it is)")
            return
        }
        requested = exitRegime
        target = resolve(exitRegime)
        let before = actions.count
        apply(now: now, note: "on exit")
        var sentSomething = actions[before...].contains { action in
            if case .report = action { return false }
            return true
        }
        if case .settling = phase { sentSomething = true }
        if !sentSomething {
            report(
                .regimeCommanded, regime: target,
                detail: "on exit: the receiver is already in \(target.rawValue), nothing sent")
        }
    }

    // MARK: - Reports

    mutating func report(
        _ kind: PowerEvent.Kind, regime: ReceiverRegime? = nil, seconds: Double? = nil, detail: String
    ) {
        let chosen = kind == .receiverIdentified || kind == .receiverUnknown ? mechanism : nil
        actions.append(.report(PowerEvent(kind, regime: regime, seconds: seconds, detail: detail, mechanism: chosen)))
    }

    func seconds(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) s" : "\(rounded) s"
    }
}
