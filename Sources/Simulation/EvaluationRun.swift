import GPSD
import Capture
import GPSModel
import Policy

#if canImport(Glibc)
import Glibc
#endif

/// An evaluation fed one input at a time (docs/contract.md §11), every run at once: the profile's simulated
/// run, always-on, each interval, stop-timeout and the oracle see each true fix as it comes and are charged
/// and judged on the spot. Its memory does not grow with the capture's length: staleness goes into
/// histograms (percentiles to 0.1 %), energy into running sums. Only `keepsDetail` (the HTML report, which
/// draws every fix) and batching profiles (whose track error needs the whole track) keep the fixes.
public final class EvaluationRun {
    public let evaluator: Evaluator
    public let keepsDetail: Bool
    private var setup: SimulationSetup { evaluator.setup }
    private let model: ReceiverModel
    private let policyRun: SimulationRun
    private var policyMeter: RunMeter
    private var alwaysOnMeter: RunMeter
    private var intervalRuns: [IntervalBaseline]
    private var stopTimeoutRun: StopTimeoutBaseline
    private var oracleRun: OracleBaseline
    private var stopFinder: StopFinder
    private var parkFinder: ParkFinder
    /// The profile's timeline, touching stretches of one state joined: a state change a probe at most, so a
    /// day keeps thousands, for the parked figures.
    private var policyTimeline: [ReceiverInterval] = []
    private var assembler = LocationAssembler(origin: .replay)
    private var previous: (t: Double, location: Location)?
    private var first: Double?
    private var last = 0.0
    private var trueFixes = 0
    private var stretches = SpeedStretches()
    /// Seconds of the true track in each class of speed, and the class of its last stretch.
    private var secondsBySpeed = EvaluationMath.speedClassLimits.map { _ in 0.0 }
    private var lastSpeedClass: Int?

    private var events: [(t: Double, kind: PolicyEventKind, detail: String)] = []
    private var failedAcquisitions = 0
    // Kept only with `keepsDetail`, or for a batching profile's track error.
    private var points: [(t: Double, location: Location)] = []
    private var changes: [TrueTrack.ReceiverChange] = []
    private var deliveries: [(t: Double, location: Location)] = []
    private var timeline: [ReceiverInterval] = []
    private var perFix: [Double?] = []
    private let keepsTrack: Bool

    public init(_ evaluator: Evaluator, keepsDetail: Bool) {
        self.evaluator = evaluator
        self.keepsDetail = keepsDetail
        model = evaluator.setup.receiver
        keepsTrack = keepsDetail || evaluator.setup.deferral != nil
        policyRun = SimulationRun(setup: evaluator.setup)
        policyMeter = RunMeter(model: model, bound: evaluator.bound)
        alwaysOnMeter = RunMeter(model: model, bound: evaluator.bound)
        let receiverModel = evaluator.setup.receiver
        intervalRuns = Evaluator.intervals.map {
            IntervalBaseline(every: $0, model: receiverModel, bound: evaluator.bound)
        }
        stopTimeoutRun = StopTimeoutBaseline(
            radius: Evaluator.stopTimeoutRadius, timeout: Evaluator.stopTimeout, probe: Evaluator.stopTimeoutProbe,
            model: model, bound: evaluator.bound)
        // Its timeline is kept for the parked figures: an interval or two per location it needs.
        oracleRun = OracleBaseline(model: model, bound: evaluator.bound, records: true)
        parkFinder = ParkFinder(rule: evaluator.parkRule)
        let rule = Evaluator.stopRule(evaluator.setup)
        stopFinder = StopFinder(minimum: rule.minimum, radius: rule.radius)
    }

    /// One event of the replayed capture, at `t`.
    public func feed(t: Double, event: LiveEvent) {
        for input in TruthInput.inputs(for: event, assembler: &assembler) { feed(t: t, input) }
    }

    public func feed(t: Double, _ input: TruthInput) {
        policyRun.feed(t: t, input) { output in take(output) }
        switch input {
        case .fix(let location): truth(t: t, location)
        case .lost(let reason):
            if keepsTrack { changes.append(.init(t: t, afterPoints: points.count, lostReason: reason)) }
        case .back:
            if keepsTrack { changes.append(.init(t: t, afterPoints: points.count, lostReason: nil)) }
        }
    }

    private func take(_ output: SimulationOutput) {
        switch output {
        case .locations(let t, let locations):
            for location in locations { deliver(location, at: t) }
        case .event(let t, let kind, let detail):
            if kind == .acquisitionFailed { failedAcquisitions += 1 }
            // The figures need only pauses and resumes; the report draws every event.
            if keepsDetail || kind.name == "paused" || kind == .resumed { events.append((t, kind, detail)) }
            // What the application is handed besides updates: a significant change, a request's answer.
            switch kind {
            case .significantChange(let location), .requestCompleted(_, let location): deliver(location, at: t)
            default: break
            }
        case .regime: break
        }
    }

    private func deliver(_ location: Location, at t: Double) {
        policyMeter.delivered(location, at: t)
        parkFinder.delivered(t, location)
        if keepsTrack { deliveries.append((t, location)) }
    }

    /// A true fix: every run sees it, then each is charged for the stretch since the previous one and judged
    /// at it.
    private func truth(t: Double, _ location: Location) {
        trueFixes += 1
        if first == nil { first = t }
        last = t
        let point = (t: t, location: location)
        var speedClass: Int?
        if let previous, t > previous.t {
            let index = EvaluationMath.speedClass(
                Geodesy.distance(from: previous.location, to: location) / (t - previous.t))
            stretches.add(from: previous.t, to: t, speedClass: index)
            secondsBySpeed[index] += t - previous.t
            speedClass = index
            lastSpeedClass = index
        }
        // The first class is under `stoppedSpeed`.
        let stopped = speedClass == 0

        let taken = policyRun.takeTimeline(until: t)
        let charge = policyMeter.charge(taken, stopped: false)
        if let speedClass { policyMeter.charge(charge, speedClass: speedClass) }
        if keepsDetail { timeline += taken }
        keep(taken)
        // Staleness is scored where the vehicle is: in a park, at its centre, whatever the fix's wander. The
        // baselines and the oracle see that place as the truth too, so none is charged for chasing the wander.
        parkFinder.truth(t, location)
        let park = parkFinder.circle
        let scored = (t: t, location: park?.place(location) ?? location)
        let staleness = policyMeter.judge(location, at: t, park: park)
        if keepsDetail { perFix.append(staleness) }

        alwaysOnMeter.delivered(scored.location, at: t)
        if let previous {
            // A hole in the capture (docs/contract.md §9): each run pays its first hour as it would, then off;
            // the baselines start afresh after it.
            let holeStart = previous.t + SimulationRun.holeThreshold
            if t > holeStart {
                alwaysOnMeter.charge(
                    [
                        ReceiverInterval(start: previous.t, end: holeStart, state: .tracking),
                        ReceiverInterval(start: holeStart, end: t, state: .off),
                    ], stopped: stopped)
                for index in intervalRuns.indices { intervalRuns[index].hole(from: holeStart, to: t) }
                stopTimeoutRun.hole(from: holeStart, to: t)
            } else {
                alwaysOnMeter.charge([ReceiverInterval(start: previous.t, end: t, state: .tracking)], stopped: stopped)
            }
        }
        _ = alwaysOnMeter.judge(scored.location, at: t)

        for index in intervalRuns.indices { intervalRuns[index].feed(scored, stopped: stopped) }
        stopTimeoutRun.feed(scored, stopped: stopped)
        oracleRun.feed(scored, stretches: stretches)
        stretches.forget(before: oracleRun.settledUntil)
        stopFinder.feed(point)
        if keepsTrack { points.append(point) }
        previous = point
    }

    private func bySpeed() -> [Evaluation.SpeedClassFigures] {
        let limits = EvaluationMath.speedClassLimits
        return limits.indices.map { index in
            Evaluation.SpeedClassFigures(
                from: limits[index], to: index + 1 < limits.count ? limits[index + 1] : nil,
                seconds: secondsBySpeed[index], energy: policyMeter.energyBySpeed[index],
                oracleEnergy: oracleRun.meter.energyBySpeed[index])
        }
    }

    private func keep(_ intervals: [ReceiverInterval]) {
        for interval in intervals { policyTimeline.append(joining: interval) }
    }

    public func finish() -> Evaluation {
        let summary = policyRun.finish { output in take(output) }
        let end = summary.lastT
        let tail = policyRun.takeTimeline(until: end)
        // After the last true fix there is no speed: the tail counts in the class the track ended in.
        let tailCharge = policyMeter.charge(tail, stopped: false)
        if let lastSpeedClass { policyMeter.charge(tailCharge, speedClass: lastSpeedClass) }
        if keepsDetail { timeline += tail }
        keep(tail)
        let firstT = first ?? 0
        let duration = last - firstT
        // Always-on is the reference: 100 %, holes included.
        let alwaysOnEnergy = alwaysOnMeter.energy
        func figures(_ name: String, _ meter: RunMeter) -> RunFigures {
            meter.figures(name: name, alwaysOnEnergy: alwaysOnEnergy, trueFixes: trueFixes, first: firstT, last: last)
        }
        let policy = figures("profile:" + evaluator.name, policyMeter)
        let alwaysOn = figures("always-on", alwaysOnMeter)
        var interval: (seconds: Double, figures: RunFigures)?
        // Staleness does not grow strictly with N (a sleep can end just as a stop does): try them all.
        for index in intervalRuns.indices {
            intervalRuns[index].finish(at: last)
            let run = intervalRuns[index]
            let result = figures("interval:\(Int(run.every))", run.meter)
            if result.staleness.p95 <= evaluator.bound { interval = (run.every, result) }
        }
        stopTimeoutRun.finish(at: last)
        let stopFigures = figures("stop-timeout", stopTimeoutRun.meter)
        oracleRun.finish(at: last, stretches: stretches)
        let oracle = figures("oracle", oracleRun.meter)
        let parks = parkFinder.finish()
        let parked = ParkFinder.stretches(parks, end: last)
        let energyParked = EvaluationMath.energy(policyTimeline, model: model, within: parked)
        let oracleParked = EvaluationMath.energy(oracleRun.meter.timeline, model: model, within: parked)
        let parking = ParkingFigures(
            rule: evaluator.parkRule, parks: parks, parkedSeconds: parked.reduce(0) { $0 + $1.end - $1.start },
            energyParked: energyParked, energyMoving: policy.energy - energyParked, oracleEnergyParked: oracleParked,
            oracleEnergyMoving: oracle.energy - oracleParked,
            wakesWhileParked: ParkFinder.wakes(policyTimeline, within: parked))
        let truth = TrueTrack(points: keepsTrack ? points : [], receiverChanges: keepsTrack ? changes : [])

        // Batching profiles hold locations: their track, not their staleness, says how good it is.
        let trackError =
            setup.deferral == nil
            ? nil
            : EvaluationMath.trackError(truth: truth, delivered: deliveries.map(\.location)).map {
                Evaluation.TrackError(p50: $0.p50, p95: $0.p95, max: $0.max)
            }
        return Evaluation(
            trueFixes: trueFixes, duration: duration, bound: evaluator.bound, receiver: model, policy: policy,
            trackError: trackError, parking: parking, pauses: Evaluator.pauses(events: events, stops: stopFinder.finish()),
            failedAcquisitions: failedAcquisitions, alwaysOn: alwaysOn,
            interval: interval, stopTimeout: stopFigures, oracle: oracle,
            ratioToOracle: oracle.energy > 0 ? policy.energy / oracle.energy : (policy.energy > 0 ? .infinity : 1),
            bySpeed: bySpeed(),
            truth: keepsDetail ? truth : TrueTrack(points: []), timeline: keepsDetail ? timeline : summary.timeline,
            deliveries: keepsDetail ? deliveries : [], events: events, stalenessPerFix: keepsDetail ? perFix : [])
    }
}
