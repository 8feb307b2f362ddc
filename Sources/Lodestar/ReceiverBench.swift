import GPSD
import GPSModel
import Policy
import Receivers
import SystemInterface

/// Receiver power control by hand, for bringing up a new board (`lodestar receiver`): the same controller
/// and the same gpsd connection a `LocationManager` uses, driven one regime at a time, waiting for the
/// effect. Used from one thread.
public final class ReceiverBench {
    /// What the bench saw while it waited: power control's reports and when (monotonic seconds).
    public struct Seen: Sendable {
        public var events: [(at: Double, event: PowerEvent)] = []
        /// The first fix with a position after the wait began, if any.
        public var firstFixAt: Double?
        /// Power control's last offer of regimes.
        public var offered: Set<ReceiverRegime>?
    }

    private let inbox = Inbox()
    private let link: ReceiverLink
    private let source: LiveSource
    private let power: ReceiverPowerDriver
    private let stop: () -> Bool
    /// What power control offered last.
    public private(set) var offered: Set<ReceiverRegime>?
    /// gpsd's identification of the receiver, once made.
    public var identity: ReceiverIdentity? { power.identity }
    /// Every report since the start, in order, for a caller that prints them as they come.
    public var onEvent: ((PowerEvent) -> Void)?
    /// Every byte written to the receiver, with what it was.
    public var onTransmitted: (([UInt8], String) -> Void)?

    public init(
        host: String, port: String, device: String?, model: ReceiverModel, power setup: ReceiverPowerSetup,
        shouldStop: @escaping () -> Bool = { false }
    ) {
        link = ReceiverLink(control: NoReceiverControl(), model: model, live: true)
        source = LiveSource(host: host, port: port, device: device, receiverLink: link)
        // The bench commands regimes itself: the controller's clock is the source's.
        power = ReceiverPowerDriver(
            setup: setup, model: model, host: host, port: port, device: device,
            commands: link.commands ?? GPSDCommandChannel(), inbox: inbox)
        stop = shouldStop
        source.start(inbox: inbox)
    }

    deinit { source.stop() }

    /// The source's clock (monotonic seconds since the bench started).
    public var now: Double { source.now.seconds }

    /// Waits until gpsd identified the receiver and power control said what it will do with it; false at the
    /// timeout.
    public func identify(timeout: Double) -> Seen {
        pump(timeout: timeout) { seen in
            seen.events.contains { [.receiverIdentified, .receiverUnknown].contains($0.event.kind) }
        }
    }

    /// Asks for `regime` and waits for its effect: quiet for a down regime, the first fix for an up one, or a
    /// report that it cannot be had (no effect, unreachable, wake failed); at most `timeout` seconds.
    public func setRegime(_ regime: ReceiverRegime, timeout: Double) -> Seen {
        let up = regime == .continuous || regime == .powerSave
        power.requestRegime(regime, reason: "asked for by hand", at: source.now)
        return pump(timeout: timeout, initial: take()) { seen in
            seen.events.contains { item in
                switch item.event.kind {
                case .quiet, .noEffect, .commandFailed: !up
                case .firstFixAfterWake, .wakeFailed: up
                case .regimeUnreachable: false
                default: false
                }
            } || (up && seen.firstFixAt != nil && !power.waitingForFirstFix)
        }
    }

    /// Leaves the receiver as it is: the bench stops watching (gpsd closes the device a minute later).
    public func close() { source.stop() }

    private func take() -> Seen {
        var seen = Seen()
        collect(into: &seen)
        return seen
    }

    private func collect(into seen: inout Seen) {
        for (output, instant) in power.takeOutputs() {
            switch output {
            case .offer(let regimes):
                offered = regimes
                seen.offered = regimes
            case .report(let event):
                seen.events.append((instant.seconds, event))
                onEvent?(event)
            case .transmitted(let bytes, let description):
                onTransmitted?(bytes, description)
            }
        }
    }

    private func pump(timeout: Double, initial: Seen = Seen(), until done: (Seen) -> Bool) -> Seen {
        var seen = initial
        let limit = source.now.seconds + timeout
        while !done(seen), source.now.seconds < limit, !stop() {
            let deadline = min(power.nextDeadline?.seconds ?? limit, limit, source.now.seconds + 0.2)
            // The source reads gpsd (and writes the commands) on this thread, within its `next`.
            if case .event(let event, let now) = source.next(before: Instant(seconds: deadline), inbox: inbox) {
                power.observe(event, at: now)
                if case .fix(let fix) = event, fix.hasPosition, seen.firstFixAt == nil {
                    seen.firstFixAt = now.seconds
                }
            }
            for case .powerReply(let outcome) in inbox.take() { power.reply(outcome, at: source.now) }
            power.advance(to: source.now)
            collect(into: &seen)
        }
        return seen
    }
}
