import Policy
import Receivers

/// The receiver's charge since the service started, estimated from what power control observed, never from
/// what it only commanded: a regime down counts once the receiver went quiet, and anything power control could
/// not confirm is charged as running. Currents are the receiver model's (`ReceiverModel.current(in:)`, as the
/// simulation charges regimes; acquisition after a wake, as it charges time to first fix).
///
/// Pure: times are seconds on the service's monotonic clock, passed in. Without power control no events come,
/// and the receiver is charged at its tracking current throughout: no saving. The same holds for a mechanism
/// that cannot lower the receiver's current (no commands and no switch: releasing the device through gpsd
/// leaves it powered): whatever it saw, all its time is charged at the tracking current.
public struct EnergyLedger: Sendable {
    /// What the receiver is charged as now.
    public enum Charging: Sendable, Equatable {
        /// Up in `continuous` or `powerSave`, or not known to be down.
        case running(ReceiverRegime)
        /// Seen quiet in a down regime.
        case down(ReceiverRegime)
        /// Woken from a down regime, no fix yet: acquisition current until the first fix.
        case acquiring(ReceiverRegime)
    }

    public let model: ReceiverModel
    /// When the ledger started (monotonic seconds).
    public let start: Double
    public private(set) var charging: Charging = .running(.continuous)
    /// The mechanism power control chose, from its identification event; the profile's model's until then.
    public private(set) var mechanism: PowerControl?
    /// Charge up to `since`, in milliampere-seconds.
    private var milliampSeconds: Double = 0
    private var since: Double

    public init(model: ReceiverModel, start: Double) {
        self.model = model
        self.start = start
        since = start
    }

    /// Whether the mechanism in use can lower the receiver's current at all: commands (UBX, PMTK) or a power
    /// switch (GPIO line, USB port). SiRF gets no commands, and a released device stays powered.
    public var mechanismSavesPower: Bool {
        switch mechanism ?? model.powerControl {
        case .ubx, .pmtk, .gpio, .usbPort: true
        case .sirf, .closeDevice: false
        }
    }

    /// The current (mA) drawn as charged now.
    public var current: Double {
        guard mechanismSavesPower else { return model.current.tracking }
        switch charging {
        case .running(let regime), .down(let regime): return model.current(in: regime)
        case .acquiring: return model.current.acquisition
        }
    }

    /// Takes what power control reported at `t`. An event earlier than the last one counts at the last one's
    /// time (the ledger never goes back).
    public mutating func record(_ event: PowerEvent, at t: Double) {
        advance(to: t)
        switch event.kind {
        case .regimeCommanded:
            // Up is charged at once, whatever the receiver does next (conservative); down only once it is quiet.
            guard let regime = event.regime, Self.isUp(regime) else { return }
            switch charging {
            case .down(let from) where model.current(in: from) < model.current.tracking:
                charging = .acquiring(regime)
            case .acquiring:
                // Another try at the same wake: still acquiring, towards the regime now asked for.
                charging = .acquiring(regime)
            default:
                charging = .running(regime)
            }
        case .quiet:
            guard let regime = event.regime else { return }
            charging = Self.isUp(regime) ? .running(regime) : .down(regime)
        case .firstFixAfterWake:
            if case .acquiring(let regime) = charging { charging = .running(regime) }
        case .noEffect:
            // The receiver kept running.
            charging = .running(.continuous)
        case .commandFailed:
            // Whatever was asked, nothing shows the receiver is down: charged running (acquiring stays, higher).
            if case .acquiring = charging { return }
            charging = .running(.continuous)
        case .reapplied:
            // The receiver woke (gpsd opened or probed it): running until it is quiet again.
            guard let regime = event.regime else { return }
            charging = .running(Self.isUp(regime) ? regime : .continuous)
        case .wakeFailed:
            // No output after a wake: maybe still down, maybe acquiring unheard; charged acquiring.
            return
        case .receiverIdentified, .receiverUnknown:
            mechanism = event.mechanism
        case .regimeUnreachable:
            return
        }
    }

    /// mAh charged from `start` to `t`.
    public func charge(at t: Double) -> Double {
        (milliampSeconds + current * max(0, t - since)) / 3600
    }

    /// mAh the receiver would have drawn left in continuous from `start` to `t`.
    public func alwaysOn(at t: Double) -> Double {
        model.current.tracking * max(0, t - start) / 3600
    }

    /// Percent of always-on's charge saved by `t` (negative when the wakes cost more than they saved); nil
    /// before any time has passed.
    public func saving(at t: Double) -> Double? {
        Self.saving(charge: charge(at: t), alwaysOn: alwaysOn(at: t))
    }

    /// `0.42 mAh against 1.73 mAh always on (76 % saved)`.
    public func summary(at t: Double) -> String {
        Self.summary(charge: charge(at: t), alwaysOn: alwaysOn(at: t))
    }

    public static func saving(charge: Double, alwaysOn: Double) -> Double? {
        alwaysOn > 0 ? (alwaysOn - charge) / alwaysOn * 100 : nil
    }

    /// `0.42 mAh against 1.73 mAh always on (76 % saved)`; `(5 % more)` when it drew more; no percentage
    /// before any charge.
    public static func summary(charge: Double, alwaysOn: Double) -> String {
        let (drawn, baseline) = (StatusText.fixed(charge, decimals: 2), StatusText.fixed(alwaysOn, decimals: 2))
        let figures = "\(drawn) mAh against \(baseline) mAh always on"
        guard let saving = saving(charge: charge, alwaysOn: alwaysOn), saving.isFinite else { return figures }
        // A tiny always-on figure (a short run) can make the ratio enormous: clamped before the Int conversion.
        let percent = Int(min(max(saving, -1e9), 1e9).rounded())
        return percent >= 0 ? "\(figures) (\(percent) % saved)" : "\(figures) (\(-percent) % more)"
    }

    private static func isUp(_ regime: ReceiverRegime) -> Bool {
        regime == .continuous || regime == .powerSave
    }

    private mutating func advance(to t: Double) {
        guard t > since else { return }
        milliampSeconds += current * (t - since)
        since = t
    }
}
