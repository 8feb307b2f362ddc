import GPSD
import Policy

// Engaging: identifying the receiver, choosing its mechanism and asking what it is when it comes back. Part of `PowerController` (PowerController.swift holds its state and inputs).
extension PowerController {
    func resolveMechanism() -> PowerControl? {
        if let mechanism = configuration.mechanism { return mechanism }
        if configuration.hasPowerSwitch { return configuration.model.powerControl == .usbPort ? .usbPort : .gpio }
        guard let identification else { return nil }
        switch identification.family {
        case .ublox: return .ubx
        case .mediatek: return .pmtk
        case .sirf, .nmea, .unknown: return .closeDevice
        }
    }

    var isCommandMechanism: Bool {
        switch mechanism {
        case .ubx, .pmtk, .sirf: true
        default: false
        }
    }

    /// Starts acting once the mechanism is known: commands need an identified receiver, a switch or a
    /// release does not.
    mutating func engageIfReady(now: Double) {
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
    mutating func wakeAtStart(now: Double, note: String? = nil) {
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
        if isSameMakeSaidLess(candidate, than: current) { return true }
        switch (candidate.family, current.family) {
        case (.nmea, .ublox), (.nmea, .mediatek), (.nmea, .sirf): return true
        default: return false
        }
    }

    /// Of those, the ones that name the same make with less detail (a u-blox without its generation).
    static func isSameMakeSaidLess(_ candidate: ReceiverIdentification, than current: ReceiverIdentification) -> Bool {
        if case (.ublox(nil), .ublox(.some)) = (candidate.family, current.family) { return true }
        return false
    }

    /// The messages that make a receiver say what it is, which gpsd decodes (none for one without commands):
    /// every make's version query Lodestar can drive, the one identified before first: the receiver that came
    /// back may be another make (a u-blox swapped for a MediaTek), and gpsd probes no further by itself. A
    /// receiver ignores the other make's query.
    var versionQueries: [ReceiverMessage] {
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
    mutating func startReidentifying(path: String, now: Double) {
        guard isCommandMechanism, reidentifying?.path != path else { return }
        reidentifying = Reidentifying(path: path, nextPollAt: now + configuration.timeouts.probeSettle)
    }

    /// Asks the receiver on the device that came back what it is, up to `Self.identificationPollLimit` times; then
    /// takes what gpsd said meanwhile, however vague (another receiver may really have been plugged in).
    mutating func pollIdentity(now: Double) {
        guard var pending = reidentifying else { return }
        let polls = versionQueries
        guard pending.polls < Self.identificationPollLimit, !polls.isEmpty else {
            reidentifying = nil
            // A device that came back is reported as such whatever gpsd managed to say, so the journal tells
            // the replug from the start.
            let cameBack = pending.cameBack ? pending.path : nil
            // gpsd naming the u-blox without its versions says no more than that the same make is there: the
            // generation known from before stands.
            if let vague = pending.vague,
                !(identification.map { Self.isSameMakeSaidLess(ReceiverIdentification(vague), than: $0) } ?? false)
            {
                receiverChanged(path: vague.path, identity: vague, now: now, cameBackOn: cameBack)
            } else if let cameBack {
                reportIdentification(cameBackOn: cameBack)
            }
            return
        }
        for poll in polls { write(.message(poll), confirmsPowerSave: false) }
        pending.polls += 1
        pending.nextPollAt = now + configuration.timeouts.probeSettle
        reidentifying = pending
    }

    mutating func reportIdentification(cameBackOn path: String? = nil) {
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
}
