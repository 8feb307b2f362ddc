import Capture
import GPSModel
import Policy

#if canImport(Glibc)
import Glibc
#endif

/// The runs a profile is compared with, on the same simulated receiver. Each returns its receiver timeline
/// and what it delivered.
public enum Baselines {
    public typealias Run = (timeline: [ReceiverInterval], deliveries: [(t: Double, location: Location)])

    /// One fix every `every` seconds, the receiver down in between (in whichever of standby or off is
    /// cheaper for that sleep); after each wake the first fix comes after the model's time to first fix.
    public static func interval(_ truth: TrueTrack, every: Double, model: ReceiverModel) -> Run {
        guard let first = truth.points.first else { return ([], []) }
        var receiver = SimulatedReceiver(model: model, start: first.t)
        var deliveries: [(t: Double, location: Location)] = [first]
        let down = model.cheaperDownRegime(forSleepOf: every)
        _ = receiver.setRegime(down, at: first.t)
        var wakeAt = first.t + every
        var awake = false
        for point in truth.points.dropFirst() {
            if !awake, point.t >= wakeAt {
                _ = receiver.setRegime(.continuous, at: wakeAt)
                awake = true
            }
            if awake, receiver.producesFix(at: point.t) {
                deliveries.append(point)
                _ = receiver.setRegime(down, at: point.t)
                awake = false
                wakeAt = point.t + every
            }
        }
        return (receiver.timeline(until: truth.last), deliveries)
    }

    /// transistorsoft's model: tracking and delivering every fix until the device has stayed within `radius`
    /// of an anchor for `timeout`; then down, with a probe every `probe` seconds; a probe outside the radius
    /// resumes tracking.
    public static func stopTimeout(
        _ truth: TrueTrack, radius: Double, timeout: Double, probe: Double, model: ReceiverModel
    ) -> Run {
        guard let first = truth.points.first else { return ([], []) }
        var receiver = SimulatedReceiver(model: model, start: first.t)
        var deliveries: [(t: Double, location: Location)] = []
        var anchor = first
        var stopped = false
        var probing = false
        var nextProbe = 0.0
        let down = model.cheaperDownRegime(forSleepOf: probe)
        for point in truth.points {
            if stopped {
                if !probing {
                    guard point.t >= nextProbe else { continue }
                    _ = receiver.setRegime(.continuous, at: nextProbe)
                    probing = true
                }
                guard receiver.producesFix(at: point.t) else { continue }
                probing = false
                if Geodesy.distance(from: anchor.location, to: point.location) > radius {
                    stopped = false
                    anchor = point
                    deliveries.append(point)
                } else {
                    _ = receiver.setRegime(down, at: point.t)
                    nextProbe = point.t + probe
                }
                continue
            }
            deliveries.append(point)
            if Geodesy.distance(from: anchor.location, to: point.location) > radius {
                anchor = point
            } else if point.t - anchor.t >= timeout {
                stopped = true
                _ = receiver.setRegime(down, at: point.t)
                nextProbe = point.t + probe
            }
        }
        return (receiver.timeline(until: truth.last), deliveries)
    }

    /// The physical limit: knowing the whole truth, a location is needed only when the last one delivered
    /// would otherwise be farther than `bound` from the true position; between two needed fixes the receiver
    /// either stays up (tracking, or power-save cycling where the model has it and it is cheaper) or goes
    /// down and wakes exactly its time to first fix before the next, whichever costs less charge. After the
    /// last needed fix it is off.
    public static func oracle(_ truth: TrueTrack, bound: Double, model: ReceiverModel) -> Run {
        guard let first = truth.points.first else { return ([], []) }
        var needed: [(t: Double, location: Location)] = [first]
        for point in truth.points.dropFirst() {
            if let last = needed.last, Geodesy.distance(from: last.location, to: point.location) > bound {
                needed.append(point)
            }
        }
        var timeline: [ReceiverInterval] = []
        for (from, to) in zip(needed, needed.dropFirst()) {
            timeline += cheapestGap(from: from.t, to: to.t, model: model)
        }
        if let last = needed.last, truth.last > last.t {
            let reachable = model.reachableRegimes
            let offCheaper = model.current(in: .off) <= model.current.standby || !reachable.contains(.standby)
            let state: ReceiverInterval.State = offCheaper && reachable.contains(.off) ? .off : .standby
            timeline.append(ReceiverInterval(start: last.t, end: truth.last, state: state))
        }
        return (timeline, needed)
    }

    /// Up the whole gap, or down and back up in time for a fix at `to`: the cheaper in charge.
    static func cheapestGap(from start: Double, to end: Double, model: ReceiverModel) -> [ReceiverInterval] {
        let gap = end - start
        // Staying up costs the cheaper of tracking and power-save cycling (which still gives a fix a second).
        let reachable = model.reachableRegimes
        let savesPower = reachable.contains(.powerSave) && model.current.powerSave < model.current.tracking
        var best = [ReceiverInterval(start: start, end: end, state: savesPower ? .powerSave : .tracking)]
        var bestCharge = (savesPower ? model.current.powerSave : model.current.tracking) * gap
        let ways = [ReceiverRegime.off, .standby].filter(reachable.contains)
        for way in ways {
            // The time to first fix depends on how long the receiver is down, which depends on it: take the
            // hot start if the down time that leaves is within the hot window, else the warm one.
            var firstFix = model.timeToFirstFix(afterDown: max(0, gap - model.timeToFirstFix.hot), in: way)
            if firstFix > model.timeToFirstFix.hot { firstFix = model.timeToFirstFix(afterDown: gap - firstFix, in: way) }
            guard gap > firstFix else { continue }
            let downCurrent = model.current(in: way)
            let charge = downCurrent * (gap - firstFix) + model.current.acquisition * firstFix
            if charge < bestCharge {
                bestCharge = charge
                best = [
                    ReceiverInterval(start: start, end: end - firstFix, state: way == .standby ? .standby : .off),
                    ReceiverInterval(start: end - firstFix, end: end, state: .acquiring),
                ]
            }
        }
        return best
    }
}
