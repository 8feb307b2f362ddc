import GPSD
import Policy

// Deadlines: the waits that end a step when the receiver says nothing. Part of `PowerController` (PowerController.swift holds its state and inputs).
extension PowerController {
    mutating func fireDeadlines(now: Double) {
        // Each firing moves the phase on or sets a later deadline; the bound is only a guard.
        for _ in 0..<8 {
            guard let deadline = nextDeadline, deadline <= now else { return }
            fire(now: now)
        }
    }

    mutating func fire(now: Double) {
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
        case .goingDown(let goingDown) where goingDown.undelivered != nil:
            // Quiet, but not from a command that never reached the receiver (gpsd lost the device, or the
            // switch failed): held down as far as the policy goes, charged as running until it is seen quiet
            // after a command that went through. Output from it sends the command again.
            phase = .down(goingDown.regime)
            undeliveredDown = goingDown.undelivered
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

    func pow2(_ exponent: Int) -> Double {
        var value = 1.0
        for _ in 0..<min(exponent, 30) { value *= 2 }
        return value
    }
}
