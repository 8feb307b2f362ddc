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
    public private(set) var achievedRegime: ReceiverRegime = .continuous
    /// The regimes last offered to the policy.
    public private(set) var offeredRegimes: Set<ReceiverRegime> = [.continuous]
    /// The mechanism in use; nil until it is known (a receiver with commands must be identified first).
    public private(set) var mechanism: PowerControl?
    public private(set) var connection: ReceiverConnection
    /// What gpsd's identification of the receiver means for power control; nil until gpsd named a driver.
    public private(set) var identification: ReceiverIdentification?

    private var identity: ReceiverIdentity?
    private var devicePath: String?
    /// Whether the controller acts on the receiver yet (it needs a mechanism).
    private var engaged = false
    /// Whether the first wake of a receiver with commands was sent.
    private var startWakeSent = false
    private var requested: ReceiverRegime = .continuous
    private var target: ReceiverRegime = .continuous
    private var phase: Phase = .running(.continuous)
    /// Regimes a command had no effect for: never used again.
    private var ineffective: Set<ReceiverRegime> = []
    private var reportedUnreachable: Set<ReceiverRegime> = []
    private var readOnlyGPSD: Bool?
    /// When the wake the next first fix is timed from was sent, and the regime it woke from.
    private var firstFixPending: (since: Double, from: ReceiverRegime)?
    /// When to apply the current regime again after gpsd reopened (and probed) the device.
    private var reapplyAt: Double?
    /// The writes awaiting gpsd's answer, oldest first.
    private var awaitingReplies: [AwaitingReply] = []
    private var shuttingDown = false
    /// The identified receiver's device went away (unplugged, gpsd gone): whatever gpsd activates next is
    /// identified again before it is trusted to be the same receiver.
    private var deviceGone = false
    /// The device that came back after `deviceGone`, while its receiver is being identified again.
    private var reidentifying: Reidentifying?
    /// Whether `offeredRegimes` went out once (the first offer goes out even when it is the default).
    private var hasOffered = false
    private var actions: [PowerControllerAction] = []

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

    private enum Phase: Sendable {
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

    private struct Settle: Sendable {
        var until: Double
        var messages: [ReceiverMessage]
        var then: Step
        var note: String
    }

    /// What the writes after a settle lead to.
    private enum Step: Sendable {
        case goDown(ReceiverRegime, reapplied: Bool)
        case wake(Waking)
        case run(ReceiverRegime, reapplied: Bool)
    }

    private struct GoingDown: Sendable {
        var regime: ReceiverRegime
        var commandAt: Double
        var lastOutput: Double?
    }

    private struct Waking: Sendable {
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
    private struct Reidentifying: Sendable {
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
    public static let identificationPolls = 3

    private struct AwaitingReply: Sendable {
        var what: String
        /// The last write of a power-save plan: its answer confirms power save.
        var confirmsPowerSave: Bool
        /// Wake bytes: the settle after them counts from when gpsd wrote them.
        var isPreamble = false
    }

    // MARK: - Inputs

    private mutating func receiverChanged(path: String?, identity: ReceiverIdentity?, now: Double) {
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
        var cameBack: String?
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

    private mutating func output(path: String, hasFix: Bool, now: Double) {
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

    private mutating func deviceActivated(path: String, now: Double) {
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

    private mutating func deviceClosed(path: String, now: Double) {
        guard !shuttingDown, case .goingDown(let goingDown) = phase else { return }
        // A USB port switched off takes the device away.
        if mechanism == .usbPort { quiet(goingDown, at: now, now: now) }
    }

    private mutating func regimeRequested(_ regime: ReceiverRegime, now: Double) {
        guard !shuttingDown else { return }
        requested = regime
        // Before the receiver is engaged there is nothing to act on: the wake at start applies it.
        guard engaged else { return }
        retarget(now: now)
    }

    private mutating func commandReply(_ outcome: GPSDCommandOutcome, now: Double) {
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
            report(.commandFailed, regime: target, detail: "gpsd refused \(reply.what): \(message)")
        case .failed(let reason):
            report(.commandFailed, regime: target, detail: "\(reply.what) was not sent: \(reason)")
        }
    }

    private mutating func shutdown(exitRegime: ReceiverRegime, now: Double) {
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

    // MARK: - Engaging

    private func resolveMechanism() -> PowerControl? {
        if let mechanism = configuration.mechanism { return mechanism }
        if configuration.hasPowerSwitch { return configuration.model.powerControl == .usbPort ? .usbPort : .gpio }
        guard let identification else { return nil }
        switch identification.family {
        case .ublox: return .ubx
        case .mediatek: return .pmtk
        case .sirf, .nmea, .unknown: return .closeDevice
        }
    }

    private var isCommandMechanism: Bool {
        switch mechanism {
        case .ubx, .pmtk, .sirf: true
        default: false
        }
    }

    /// Starts acting once the mechanism is known: commands need an identified receiver, a switch or a
    /// release does not.
    private mutating func engageIfReady(now: Double) {
        if mechanism == nil { mechanism = resolveMechanism() }
        guard let mechanism else { return }
        if isCommandMechanism && identification == nil { return }
        engaged = true
        if identification != nil { reportIdentification() }
        // A u-blox whose generation gpsd has not said is asked for its versions, as one that came back is: its
        // generation decides power save and backup.
        if case .ublox(nil) = identification?.family, let identity {
            reidentifying = Reidentifying(
                path: identity.path, cameBack: false, nextPollAt: now + configuration.timeouts.probeSettle)
        }
        updateOffers()
        switch mechanism {
        case .gpio, .usbPort:
            guard configuration.hasPowerSwitch else {
                target = .continuous
                return
            }
            // Whatever a previous run left the line at: on, and time the first fix.
            target = resolve(requested)
            if target == .off {
                goDown(.off, from: nil, now: now, note: "at start")
            } else {
                wakeUp(Waking(regime: target, from: .off, startedAt: now, attempt: 0), now: now, note: "at start")
            }
        case .closeDevice:
            retarget(now: now)
        case .ubx, .pmtk, .sirf:
            wakeAtStart(now: now)
        }
    }

    /// Wakes a receiver with commands whatever state a previous run left it in: the wake preamble if any of
    /// its down regimes needs one, then the plan of the regime asked for.
    private mutating func wakeAtStart(now: Double, note: String? = nil) {
        startWakeSent = true
        target = resolve(requested)
        let needsPreamble = [ReceiverRegime.standby, .off].contains { regime in
            if case .anyByte = plan(regime)?.wake { return true }
            return false
        }
        let messages = plan(target)?.messages ?? []
        let step: Step = target.producesFixes ? .run(target, reapplied: false) : .goDown(target, reapplied: false)
        sequence(
            preamble: needsPreamble, messages, then: step, now: now,
            note: note ?? "at start (wake whatever state it was left in)")
    }

    /// Whether `candidate` says less than `current` about what may be the same receiver: gpsd names the
    /// generic NMEA driver, or a u-blox without its versions, before the receiver answered a probe or a poll.
    static func isVaguer(_ candidate: ReceiverIdentification, than current: ReceiverIdentification) -> Bool {
        switch (candidate.family, current.family) {
        case (.nmea, .ublox), (.nmea, .mediatek), (.nmea, .sirf): true
        case (.ublox(nil), .ublox(.some)): true
        default: false
        }
    }

    /// The messages that make a receiver say what it is, which gpsd decodes (none for one without commands):
    /// every make's version query Lodestar can drive, the one identified before first: the receiver that came
    /// back may be another make (a u-blox swapped for a MediaTek), and gpsd probes no further by itself. A
    /// receiver ignores the other make's query.
    private var identificationPolls: [ReceiverMessage] {
        let ublox = ReceiverMessage.ubx(UBXCommand.pollVersion)
        let mediatek = ReceiverMessage.pmtk(PMTKCommand.queryFirmware)
        switch identification?.family {
        case .ublox: return [ublox, mediatek]
        case .mediatek: return [mediatek, ublox]
        default: return []
        }
    }

    /// The device came back on `path`: its receiver is asked what it is once gpsd's probing is over, as the
    /// regime is (a receiver with commands only; one already being asked keeps its count).
    private mutating func startReidentifying(path: String, now: Double) {
        guard isCommandMechanism, reidentifying?.path != path else { return }
        reidentifying = Reidentifying(path: path, nextPollAt: now + configuration.timeouts.probeSettle)
    }

    /// Asks the receiver on the device that came back what it is, up to `Self.identificationPolls` times; then
    /// takes what gpsd said meanwhile, however vague (another receiver may really have been plugged in).
    private mutating func pollIdentity(now: Double) {
        guard var pending = reidentifying else { return }
        let polls = identificationPolls
        guard pending.polls < Self.identificationPolls, !polls.isEmpty else {
            reidentifying = nil
            if let vague = pending.vague { receiverChanged(path: vague.path, identity: vague, now: now) }
            return
        }
        for poll in polls { write(.message(poll), confirmsPowerSave: false) }
        pending.polls += 1
        pending.nextPollAt = now + configuration.timeouts.probeSettle
        reidentifying = pending
    }

    private mutating func reportIdentification(cameBackOn path: String? = nil) {
        guard let identification, let identity else { return }
        let model = identification.model?.name ?? configuration.model.name
        let mechanismName = mechanism?.rawValue ?? "none"
        let regimes = ReceiverRegime.allCases.filter { reachableRegimes.contains($0) }.map(\.rawValue)
        let what = [identity.driver, identity.subtype].compactMap { $0 }.joined(separator: " ")
        if case .unknown = identification.family {
            let off: String
            switch mechanism {
            case .gpio, .usbPort: off = "off switches its power"
            default: off = "no power control for this receiver: the policy filters, the receiver runs"
            }
            report(
                .receiverUnknown,
                detail:
                    "\(what): \(identification.summary). Lodestar keeps it running; \(off); mechanism \(mechanismName)"
                    + " over \(connection.rawValue), reachable regimes: \(regimes.joined(separator: ", "))")
        } else {
            let again = path.map { "again, on \($0) (its device came back): " } ?? ""
            report(
                .receiverIdentified,
                detail:
                    "\(again)\(what): model \(model), mechanism \(mechanismName) over \(connection.rawValue); reachable"
                    + " regimes: \(regimes.joined(separator: ", ")) (\(identification.summary))")
        }
    }

    // MARK: - Regimes

    private func plan(_ regime: ReceiverRegime) -> RegimePlan? {
        guard let identification else { return nil }
        return try? RegimePlan.plan(regime, for: identification, on: connection).get()
    }

    /// What the mechanism reaches on this receiver and connection, before anything was found ineffective.
    private var reachableRegimes: Set<ReceiverRegime> {
        switch mechanism {
        case nil: return [.continuous]
        case .gpio, .usbPort: return configuration.hasPowerSwitch ? [.continuous, .off] : [.continuous]
        // Releasing the device through gpsd powers nothing down (ReceiverModel.regimes(reachableBy:on:)).
        case .closeDevice: return [.continuous]
        case .ubx, .pmtk, .sirf:
            guard let identification else { return [.continuous] }
            return RegimePlan.reachableRegimes(for: identification, on: connection)
        }
    }

    private mutating func updateOffers() {
        let offers = reachableRegimes.subtracting(ineffective).union([.continuous])
        guard offers != offeredRegimes || !hasOffered else { return }
        hasOffered = true
        offeredRegimes = offers
        actions.append(.offerRegimes(offers))
    }

    /// Why `regime` cannot be used now.
    private func unreachableReason(_ regime: ReceiverRegime) -> String {
        if ineffective.contains(regime) { return "a command for it had no effect on this receiver earlier" }
        switch mechanism {
        case nil: return "the receiver is not identified yet"
        case .gpio, .usbPort:
            return configuration.hasPowerSwitch
                ? "a power switch only turns the receiver on (continuous) or off"
                : "no power switch is configured for the \(mechanism?.rawValue ?? "") mechanism"
        case .closeDevice:
            return "no power commands are known for this receiver and no power switch is configured: releasing it"
                + " through gpsd would power nothing down, so it keeps running"
        case .ubx, .pmtk, .sirf:
            guard let identification else { return "the receiver is not identified yet" }
            if case .failure(let unreachable) = RegimePlan.plan(regime, for: identification, on: connection) {
                return unreachable.reason
            }
            return "it is not offered"
        }
    }

    /// The regime to use for `regime`: itself when offered, else the nearest offered (powerSave → continuous,
    /// off → standby → continuous, standby → off → continuous as the receiver model's fallback has it),
    /// reported once per regime.
    private mutating func resolve(_ regime: ReceiverRegime) -> ReceiverRegime {
        if offeredRegimes.contains(regime) { return regime }
        let fallbacks: [ReceiverRegime]
        switch regime {
        case .powerSave, .continuous: fallbacks = [.continuous]
        case .off: fallbacks = [.standby, .continuous]
        case .standby: fallbacks = [.off, .continuous]
        }
        let fallback = fallbacks.first { offeredRegimes.contains($0) } ?? .continuous
        if reportedUnreachable.insert(regime).inserted {
            report(
                .regimeUnreachable, regime: regime,
                detail: "\(regime.rawValue) is unreachable: \(unreachableReason(regime)); using \(fallback.rawValue)")
        }
        return fallback
    }

    /// Resolves what the policy asked for again and applies it if that changes anything.
    private mutating func retarget(now: Double) {
        target = resolve(requested)
        apply(now: now, note: nil)
    }

    /// Takes the receiver from where it is to `target`.
    private mutating func apply(now: Double, note: String?) {
        switch phase {
        case .settling(var settle):
            // The preamble went out and the receiver is waking: what follows it changes.
            guard let step = stepAfterWake(settle.then, now: now) else { return }
            settle.messages = plan(target)?.messages ?? []
            settle.then = step
            phase = .settling(settle)
        case .running(let regime):
            if target.producesFixes {
                guard regime != target, isCommandMechanism else { return }
                sequence(
                    preamble: false, plan(target)?.messages ?? [], then: .run(target, reapplied: false),
                    now: now, note: note)
            } else {
                goDown(target, from: nil, now: now, note: note)
            }
        case .goingDown(let goingDown):
            if target.producesFixes {
                wakeUp(Waking(regime: target, from: goingDown.regime, startedAt: now, attempt: 0), now: now, note: note)
            } else if target != goingDown.regime {
                goDown(target, from: goingDown.regime, now: now, note: note)
            }
        case .down(let regime):
            if target.producesFixes {
                reapplyAt = nil
                wakeUp(Waking(regime: target, from: regime, startedAt: now, attempt: 0), now: now, note: note)
            } else if target != regime {
                reapplyAt = nil
                goDown(target, from: regime, now: now, note: note)
            }
        case .waking(var waking):
            if target.producesFixes {
                // Output confirms the wake, and the regime's plan follows it.
                waking.regime = target
                phase = .waking(waking)
            } else {
                goDown(target, from: waking.from, now: now, note: note)
            }
        case .retrying(var waking, let at):
            if !target.producesFixes {
                goDown(target, from: waking.from, now: now, note: note)
            } else if shuttingDown {
                // No retry comes after exit: try once more now.
                wakeUp(Waking(regime: target, from: waking.from, startedAt: now, attempt: 0), now: now, note: note)
            } else {
                waking.regime = target
                phase = .retrying(waking, at: at)
            }
        }
    }

    /// The step after a settle that is under way, for a new `target`.
    private func stepAfterWake(_ step: Step, now: Double) -> Step? {
        switch step {
        case .wake(var waking):
            if target.producesFixes {
                waking.regime = target
                return .wake(waking)
            }
            return .goDown(target, reapplied: false)
        case .goDown(let regime, _), .run(let regime, _):
            if regime == target { return nil }
            return target.producesFixes ? .run(target, reapplied: false) : .goDown(target, reapplied: false)
        }
    }

    /// Puts the receiver down in `regime`; `from` is the down regime it may still be in (whose wake comes
    /// first, so the command is not lost waking it).
    private mutating func goDown(
        _ regime: ReceiverRegime, from: ReceiverRegime?, now: Double, note: String?,
        reapplied: Bool = false
    ) {
        // A fix still awaited from an earlier wake is not this wake's to time.
        firstFixPending = nil
        switch mechanism {
        case .gpio, .usbPort:
            actions.append(.setPower(false))
            begin(.goDown(regime, reapplied: reapplied), sent: ["power switched off"], now: now, note: note)
        case .ubx, .pmtk, .sirf, .closeDevice, nil:
            let preamble = from.flatMap { plan($0)?.wake.bytesBeforeNextMessages.isEmpty == false } ?? false
            sequence(
                preamble: preamble, plan(regime)?.messages ?? [], then: .goDown(regime, reapplied: reapplied),
                now: now, note: note)
        }
    }

    /// Wakes the receiver from `waking.from` to `waking.regime` and times it.
    private mutating func wakeUp(_ waking: Waking, now: Double, note: String?) {
        achievedRegime = .continuous
        firstFixPending = (now, waking.from)
        switch mechanism {
        case .gpio, .usbPort:
            actions.append(.setPower(true))
            begin(.wake(waking), sent: ["power switched on"], now: now, note: note)
        case .ubx, .pmtk, .sirf, .closeDevice, nil:
            let wake = plan(waking.from)?.wake ?? .running
            sequence(
                preamble: !wake.bytesBeforeNextMessages.isEmpty, plan(waking.regime)?.messages ?? [],
                then: .wake(waking), now: now, note: note)
        }
    }

    /// Writes the preamble and waits for the receiver to settle before `messages`, or writes them now.
    private mutating func sequence(
        preamble: Bool, _ messages: [ReceiverMessage], then step: Step, now: Double,
        note: String?
    ) {
        if preamble {
            write(.wakePreamble, confirmsPowerSave: false)
            let until = now + Double(RegimeWake.settleMilliseconds) / 1000
            actions.append(.wait(until: until))
            achievedRegime = .continuous
            phase = .settling(Settle(until: until, messages: messages, then: step, note: note ?? ""))
        } else {
            for (index, message) in messages.enumerated() {
                let last = index == messages.count - 1
                write(.message(message), confirmsPowerSave: last && isPowerSave(step))
            }
            begin(step, sent: messages.map(\.name), now: now, note: note)
        }
    }

    private func isPowerSave(_ step: Step) -> Bool {
        switch step {
        case .run(let regime, _): regime == .powerSave
        case .wake(let waking): waking.regime == .powerSave
        case .goDown: false
        }
    }

    private mutating func write(_ write: ReceiverWrite, confirmsPowerSave: Bool) {
        actions.append(.write(write))
        awaitingReplies.append(
            AwaitingReply(
                what: write.description, confirmsPowerSave: confirmsPowerSave, isPreamble: write == .wakePreamble))
    }

    /// The writes for `step` went out (`sent` names them): the phase they lead to starts.
    private mutating func begin(_ step: Step, sent: [String], now: Double, note: String?) {
        let prefix = note.map { "\($0): " } ?? ""
        let what = sent.isEmpty ? "nothing to send" : sent.joined(separator: ", ")
        switch step {
        case .goDown(let regime, let reapplied):
            phase = .goingDown(GoingDown(regime: regime, commandAt: now, lastOutput: nil))
            reportSent(regime, reapplied: reapplied, "\(prefix)\(regime.rawValue)", what)
        case .wake(let waking):
            phase = .waking(waking)
            let attempt = waking.attempt == 0 ? "" : " (try \(waking.attempt + 1))"
            report(
                .regimeCommanded, regime: waking.regime,
                detail: "\(prefix)\(waking.regime.rawValue), waking from \(waking.from.rawValue)\(attempt): \(what)")
        case .run(let regime, let reapplied):
            phase = .running(regime)
            if regime != .powerSave { achievedRegime = regime }
            if reapplied || !sent.isEmpty || shuttingDown {
                reportSent(regime, reapplied: reapplied, "\(prefix)\(regime.rawValue)", what)
            }
        }
    }

    private mutating func reportSent(_ regime: ReceiverRegime, reapplied: Bool, _ heading: String, _ what: String) {
        if reapplied {
            let why = "the receiver woke: gpsd reopened or probed the device"
            report(.reapplied, regime: regime, detail: "\(heading) again (\(why)): \(what)")
        } else {
            report(.regimeCommanded, regime: regime, detail: "\(heading): \(what)")
        }
    }

    // MARK: - Effects

    /// How long a down command may leave the receiver talking before it counts as ineffective.
    private var noEffectDeadline: Double { configuration.timeouts.noEffectDeadline }

    private mutating func quiet(_ goingDown: GoingDown, at quietAt: Double, now: Double) {
        phase = .down(goingDown.regime)
        achievedRegime = goingDown.regime
        let after = quietAt - goingDown.commandAt
        report(
            .quiet, regime: goingDown.regime, seconds: after,
            detail: "quiet \(seconds(after)) after the \(goingDown.regime.rawValue) command")
    }

    private mutating func noEffect(_ goingDown: GoingDown, now: Double) {
        noEffect(regime: goingDown.regime, seconds: now - goingDown.commandAt, now: now)
    }

    private mutating func noEffect(regime: ReceiverRegime, seconds elapsed: Double, now: Double) {
        let cause: String
        if readOnlyGPSD == true {
            cause = "gpsd runs read-only (-b), which drops every write to the receiver"
        } else {
            switch mechanism {
            case .gpio, .usbPort:
                cause =
                    "the power switch did not cut the receiver's supply (wiring, the active-low setting, or a hub"
                    + " that does not switch its ports one by one)"
            default:
                // gpsd's -b is a cause only while its command line is unknown: read and without -b, it is not.
                cause =
                    (readOnlyGPSD == nil ? "gpsd started with -b (it drops every write without saying so), " : "")
                    + "another program holding the port, or the receiver ignored the command"
            }
        }
        ineffective.insert(regime)
        // Read-only gpsd drops every command, not just this one.
        if readOnlyGPSD == true && isCommandMechanism { ineffective.formUnion([.powerSave, .standby, .off]) }
        reportedUnreachable.formUnion(ineffective)
        let when = elapsed > 0 ? " \(seconds(elapsed)) after the command" : ""
        report(
            .noEffect, regime: regime, seconds: elapsed,
            detail:
                "\(regime.rawValue) had no effect: the receiver kept running\(when). Likely cause: \(cause)."
                + " Lodestar stops using \(regime.rawValue) and counts the receiver as running")
        achievedRegime = .continuous
        phase = .running(.continuous)
        requested = .continuous
        target = .continuous
        reapplyAt = nil
        updateOffers()
    }

    /// Output after a wake: the receiver is up. Its full plan goes again, for a receiver that woke without
    /// its configuration.
    private mutating func awake(_ waking: Waking, now: Double) {
        if isCommandMechanism, let messages = plan(waking.regime)?.messages, !messages.isEmpty {
            sequence(
                preamble: false, messages, then: .run(waking.regime, reapplied: false), now: now,
                note: "awake after \(seconds(now - waking.startedAt)), again")
        } else {
            phase = .running(waking.regime)
            if waking.regime != .powerSave { achievedRegime = waking.regime }
        }
    }

    // MARK: - Deadlines

    private mutating func fireDeadlines(now: Double) {
        // Each firing moves the phase on or sets a later deadline; the bound is only a guard.
        for _ in 0..<8 {
            guard let deadline = nextDeadline, deadline <= now else { return }
            fire(now: now)
        }
    }

    private mutating func fire(now: Double) {
        if let pending = reidentifying, pending.nextPollAt <= now {
            pollIdentity(now: now)
            return
        }
        if let at = reapplyAt, at <= now {
            reapplyAt = nil
            switch phase {
            case .down(let regime):
                goDown(regime, from: regime, now: now, note: nil, reapplied: true)
            case .running(let regime):
                sequence(
                    preamble: false, plan(regime)?.messages ?? [], then: .run(regime, reapplied: true), now: now,
                    note: nil)
            default: break
            }
            return
        }
        switch phase {
        case .settling(let settle) where settle.until <= now:
            sequence(
                preamble: false, settle.messages, then: settle.then, now: now,
                note: settle.note.isEmpty ? nil : settle.note)
        case .goingDown(let goingDown):
            quiet(goingDown, at: goingDown.lastOutput ?? goingDown.commandAt, now: now)
        case .waking(let waking):
            let interval = min(
                configuration.timeouts.firstRetryInterval * pow2(waking.attempt),
                configuration.timeouts.maximumRetryInterval)
            let next = Waking(regime: waking.regime, from: waking.from, startedAt: now, attempt: waking.attempt + 1)
            phase = .retrying(next, at: now + interval)
            report(
                .wakeFailed, regime: waking.from, seconds: now - waking.startedAt,
                detail:
                    "no output \(seconds(now - waking.startedAt)) after the wake from \(waking.from.rawValue)"
                    + " (try \(waking.attempt + 1)); next try in \(seconds(interval))")
        case .retrying(let waking, _):
            wakeUp(
                Waking(regime: waking.regime, from: waking.from, startedAt: now, attempt: waking.attempt), now: now,
                note: nil)
        default:
            break
        }
    }

    private func pow2(_ exponent: Int) -> Double {
        var value = 1.0
        for _ in 0..<min(exponent, 30) { value *= 2 }
        return value
    }

    // MARK: - Reports

    private mutating func report(
        _ kind: PowerEvent.Kind, regime: ReceiverRegime? = nil, seconds: Double? = nil, detail: String
    ) {
        let chosen = kind == .receiverIdentified || kind == .receiverUnknown ? mechanism : nil
        actions.append(.report(PowerEvent(kind, regime: regime, seconds: seconds, detail: detail, mechanism: chosen)))
    }

    private func seconds(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) s" : "\(rounded) s"
    }
}
