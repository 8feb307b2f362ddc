import GPSD
import Policy

// Effects: what the receiver's output says about the last command (quiet, a first fix, no effect). Part of `PowerController` (PowerController.swift holds its state and inputs).
extension PowerController {
    /// How long a down command may leave the receiver talking before it counts as ineffective.
    var noEffectDeadline: Double { configuration.timeouts.noEffectDeadline }

    mutating func quiet(_ goingDown: GoingDown, at quietAt: Double, now: Double) {
        phase = .down(goingDown.regime)
        achievedRegime = goingDown.regime
        let after = quietAt - goingDown.commandAt
        report(
            .quiet, regime: goingDown.regime, seconds: after,
            detail: "quiet \(seconds(after)) after the \(goingDown.regime.rawValue) command")
    }

    mutating func noEffect(_ goingDown: GoingDown, now: Double) {
        noEffect(
            regime: goingDown.regime, seconds: now - goingDown.commandAt, now: now, undelivered: goingDown.undelivered)
    }

    /// `undelivered`: why the command never reached the receiver, which is then the cause named.
    mutating func noEffect(regime: ReceiverRegime, seconds elapsed: Double, now: Double, undelivered: String? = nil) {
        let cause: String
        if let undelivered, readOnlyGPSD != true {
            cause = "the command did not reach it (\(undelivered))"
        } else if readOnlyGPSD == true {
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
    mutating func awake(_ waking: Waking, now: Double) {
        if isCommandMechanism, let messages = plan(waking.regime)?.messages, !messages.isEmpty {
            sequence(
                preamble: false, messages, then: .run(waking.regime, reapplied: false), now: now,
                note: "awake after \(seconds(now - waking.startedAt)), again")
        } else {
            phase = .running(waking.regime)
            if waking.regime != .powerSave { achievedRegime = waking.regime }
        }
    }
}
