import GPSD
import Policy

// Regimes: the commands and switch steps that take the receiver to the regime the policy asks for, and how each is confirmed. Part of `PowerController` (PowerController.swift holds its state and inputs).
extension PowerController {
    func plan(_ regime: ReceiverRegime) -> RegimePlan? {
        guard let identification else { return nil }
        return try? RegimePlan.plan(regime, for: identification, on: connection).get()
    }

    /// What the mechanism reaches on this receiver and connection, before anything was found ineffective.
    var reachableRegimes: Set<ReceiverRegime> {
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

    mutating func updateOffers() {
        let offers = reachableRegimes.subtracting(ineffective).union([.continuous])
        guard offers != offeredRegimes || !hasOffered else { return }
        hasOffered = true
        offeredRegimes = offers
        actions.append(.offerRegimes(offers))
    }

    /// Why `regime` cannot be used now.
    func unreachableReason(_ regime: ReceiverRegime) -> String {
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
    mutating func resolve(_ regime: ReceiverRegime) -> ReceiverRegime {
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
    mutating func retarget(now: Double) {
        target = resolve(requested)
        apply(now: now, note: nil)
    }

    /// Takes the receiver from where it is to `target`.
    mutating func apply(now: Double, note: String?) {
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
    func stepAfterWake(_ step: Step, now: Double) -> Step? {
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
    mutating func goDown(
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
    mutating func wakeUp(_ waking: Waking, now: Double, note: String?) {
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
    mutating func sequence(
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
            let leadsDown = if case .goDown = step { true } else { false }
            for (index, message) in messages.enumerated() {
                let last = index == messages.count - 1
                write(.message(message), confirmsPowerSave: last && isPowerSave(step), leadsDown: leadsDown)
            }
            begin(step, sent: messages.map(\.name), now: now, note: note)
        }
    }

    func isPowerSave(_ step: Step) -> Bool {
        switch step {
        case .run(let regime, _): regime == .powerSave
        case .wake(let waking): waking.regime == .powerSave
        case .goDown: false
        }
    }

    mutating func write(_ write: ReceiverWrite, confirmsPowerSave: Bool, leadsDown: Bool = false) {
        actions.append(.write(write))
        awaitingReplies.append(
            AwaitingReply(
                what: write.description, confirmsPowerSave: confirmsPowerSave, isPreamble: write == .wakePreamble,
                leadsDown: leadsDown))
    }

    /// The writes for `step` went out (`sent` names them): the phase they lead to starts.
    mutating func begin(_ step: Step, sent: [String], now: Double, note: String?) {
        let prefix = note.map { "\($0): " } ?? ""
        let what = sent.isEmpty ? "nothing to send" : sent.joined(separator: ", ")
        // Sent again after a down command that did not reach the receiver: that is why, not a wake by gpsd.
        let why = undeliveredDown.map { "the last command did not reach it: \($0)" }
        undeliveredDown = nil
        switch step {
        case .goDown(let regime, let reapplied):
            phase = .goingDown(GoingDown(regime: regime, commandAt: now, lastOutput: nil))
            reportSent(regime, reapplied: reapplied, "\(prefix)\(regime.rawValue)", what, why: why)
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

    mutating func reportSent(
        _ regime: ReceiverRegime, reapplied: Bool, _ heading: String, _ what: String, why: String? = nil
    ) {
        if reapplied {
            let why = why ?? "the receiver woke: gpsd reopened or probed the device"
            report(.reapplied, regime: regime, detail: "\(heading) again (\(why)): \(what)")
        } else {
            report(.regimeCommanded, regime: regime, detail: "\(heading): \(what)")
        }
    }
}
