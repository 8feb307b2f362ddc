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
        var run = IntervalBaseline(every: every, model: model, bound: .infinity, records: true)
        for point in truth.points { run.feed(point, stopped: false) }
        run.finish(at: truth.last)
        return (run.meter.timeline, run.meter.deliveries)
    }

    /// transistorsoft's model: tracking and delivering every fix until the device has stayed within `radius`
    /// of an anchor for `timeout`; then down, with a probe every `probe` seconds; a probe outside the radius
    /// resumes tracking.
    public static func stopTimeout(
        _ truth: TrueTrack, radius: Double, timeout: Double, probe: Double, model: ReceiverModel
    ) -> Run {
        var run = StopTimeoutBaseline(
            radius: radius, timeout: timeout, probe: probe, model: model, bound: .infinity, records: true)
        for point in truth.points { run.feed(point, stopped: false) }
        run.finish(at: truth.last)
        return (run.meter.timeline, run.meter.deliveries)
    }

    /// The physical limit: knowing the whole truth, a location is needed only when the last one delivered
    /// would otherwise be farther than `bound` from the true position; between two needed fixes the receiver
    /// either stays up (tracking, or power-save cycling where the model has it and it is cheaper) or goes
    /// down and wakes exactly its time to first fix before the next, whichever costs less charge. After the
    /// last needed fix it is off.
    public static func oracle(_ truth: TrueTrack, bound: Double, model: ReceiverModel) -> Run {
        var run = OracleBaseline(model: model, bound: bound, records: true)
        for point in truth.points { run.feed(point, stretches: SpeedStretches()) }
        run.finish(at: truth.last, stretches: SpeedStretches())
        return (run.meter.timeline, run.meter.deliveries)
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

/// `Baselines.interval` one true fix at a time: what the evaluation runs.
/// A baseline that runs one simulated receiver and charges its meter with what it drew.
protocol ReceiverBaseline {
    var receiver: SimulatedReceiver? { get set }
    var meter: RunMeter { get set }
}

extension ReceiverBaseline {
    /// The charge from the last fix to the end of the capture.
    mutating func finish(at t: Double) {
        guard var receiver else { return }
        meter.charge(receiver.takeTimeline(until: t), stopped: false)
        self.receiver = receiver
    }
}

struct IntervalBaseline: ReceiverBaseline, Sendable {
    let every: Double
    private let model: ReceiverModel
    private let down: ReceiverRegime
    var receiver: SimulatedReceiver?
    private var wakeAt = 0.0
    private var awake = false
    var meter: RunMeter

    init(every: Double, model: ReceiverModel, bound: Double, records: Bool = false) {
        self.every = every
        self.model = model
        down = model.cheaperDownRegime(forSleepOf: every)
        meter = RunMeter(model: model, bound: bound, records: records)
    }

    mutating func feed(_ point: (t: Double, location: Location), stopped: Bool) {
        guard var receiver else {
            var started = SimulatedReceiver(model: model, start: point.t)
            meter.delivered(point.location, at: point.t)
            _ = started.setRegime(down, at: point.t)
            wakeAt = point.t + every
            receiver = started
            _ = meter.judge(point.location, at: point.t)
            return
        }
        if !awake, point.t >= wakeAt {
            _ = receiver.setRegime(.continuous, at: wakeAt)
            awake = true
        }
        if awake, receiver.producesFix(at: point.t) {
            meter.delivered(point.location, at: point.t)
            _ = receiver.setRegime(down, at: point.t)
            awake = false
            wakeAt = point.t + every
        }
        meter.charge(receiver.takeTimeline(until: point.t), stopped: stopped)
        self.receiver = receiver
        _ = meter.judge(point.location, at: point.t)
    }

    /// Nothing from `start` to `end`: up to `start` as it would have been, then off; afresh at the next fix.
    mutating func hole(from start: Double, to end: Double) {
        guard var receiver else { return }
        if !awake, wakeAt < start { _ = receiver.setRegime(.continuous, at: wakeAt) }
        meter.charge(receiver.takeTimeline(until: start), stopped: false)
        receiver.unplug(at: start)
        meter.charge(receiver.takeTimeline(until: end), stopped: false)
        self.receiver = nil
        awake = false
    }
}

/// `Baselines.stopTimeout` one true fix at a time: what the evaluation runs.
struct StopTimeoutBaseline: ReceiverBaseline, Sendable {
    private let radius: Double
    private let timeout: Double
    private let probe: Double
    private let model: ReceiverModel
    private let down: ReceiverRegime
    var receiver: SimulatedReceiver?
    private var anchor: (t: Double, location: Location)?
    private var stoppedState = false
    private var probing = false
    private var nextProbe = 0.0
    var meter: RunMeter

    init(
        radius: Double, timeout: Double, probe: Double, model: ReceiverModel, bound: Double, records: Bool = false
    ) {
        self.radius = radius
        self.timeout = timeout
        self.probe = probe
        self.model = model
        down = model.cheaperDownRegime(forSleepOf: probe)
        meter = RunMeter(model: model, bound: bound, records: records)
    }

    mutating func feed(_ point: (t: Double, location: Location), stopped: Bool) {
        var receiver = self.receiver ?? SimulatedReceiver(model: model, start: point.t)
        let anchor = self.anchor ?? point
        step(point, anchor: anchor, receiver: &receiver)
        meter.charge(receiver.takeTimeline(until: point.t), stopped: stopped)
        self.receiver = receiver
        _ = meter.judge(point.location, at: point.t)
    }

    private mutating func step(
        _ point: (t: Double, location: Location), anchor: (t: Double, location: Location),
        receiver: inout SimulatedReceiver
    ) {
        self.anchor = anchor
        if stoppedState {
            if !probing {
                guard point.t >= nextProbe else { return }
                _ = receiver.setRegime(.continuous, at: nextProbe)
                probing = true
            }
            guard receiver.producesFix(at: point.t) else { return }
            probing = false
            if Geodesy.distance(from: anchor.location, to: point.location) > radius {
                stoppedState = false
                self.anchor = point
                meter.delivered(point.location, at: point.t)
            } else {
                _ = receiver.setRegime(down, at: point.t)
                nextProbe = point.t + probe
            }
            return
        }
        meter.delivered(point.location, at: point.t)
        if Geodesy.distance(from: anchor.location, to: point.location) > radius {
            self.anchor = point
        } else if point.t - anchor.t >= timeout {
            stoppedState = true
            _ = receiver.setRegime(down, at: point.t)
            nextProbe = point.t + probe
        }
    }

    /// Nothing from `start` to `end`: up to `start` as it would have been, then off; afresh at the next fix.
    mutating func hole(from start: Double, to end: Double) {
        guard var receiver else { return }
        if stoppedState, !probing, nextProbe < start { _ = receiver.setRegime(.continuous, at: nextProbe) }
        meter.charge(receiver.takeTimeline(until: start), stopped: false)
        receiver.unplug(at: start)
        meter.charge(receiver.takeTimeline(until: end), stopped: false)
        self.receiver = nil
        anchor = nil
        stoppedState = false
        probing = false
    }
}

/// `Baselines.oracle` one true fix at a time, each needed fix settling the gap before it: what the
/// evaluation runs.
struct OracleBaseline: Sendable {
    private let model: ReceiverModel
    private let bound: Double
    private var lastNeeded: (t: Double, location: Location)?
    private(set) var meter: RunMeter
    /// The oracle's timeline is known up to here.
    private(set) var settledUntil = -Double.infinity

    init(model: ReceiverModel, bound: Double, records: Bool = false) {
        self.model = model
        self.bound = bound
        meter = RunMeter(model: model, bound: bound, records: records)
    }

    mutating func feed(_ point: (t: Double, location: Location), stretches: SpeedStretches) {
        if let lastNeeded {
            if Geodesy.distance(from: lastNeeded.location, to: point.location) > bound {
                settle(Baselines.cheapestGap(from: lastNeeded.t, to: point.t, model: model), stretches: stretches)
                self.lastNeeded = point
                meter.delivered(point.location, at: point.t)
            }
        } else {
            lastNeeded = point
            settledUntil = point.t
            meter.delivered(point.location, at: point.t)
        }
        _ = meter.judge(point.location, at: point.t)
    }

    mutating func finish(at t: Double, stretches: SpeedStretches) {
        guard let lastNeeded, t > lastNeeded.t else { return }
        let reachable = model.reachableRegimes
        let offCheaper = model.current(in: .off) <= model.current.standby || !reachable.contains(.standby)
        let state: ReceiverInterval.State = offCheaper && reachable.contains(.off) ? .off : .standby
        settle([ReceiverInterval(start: lastNeeded.t, end: t, state: state)], stretches: stretches)
    }

    private mutating func settle(_ intervals: [ReceiverInterval], stretches: SpeedStretches) {
        meter.charge(intervals, stopped: false)
        for speedClass in EvaluationMath.speedClassLimits.indices {
            let charge = EvaluationMath.energy(intervals, model: model, within: stretches.of(speedClass))
            meter.charge(charge, speedClass: speedClass)
        }
        settledUntil = intervals.last?.end ?? settledUntil
    }
}
