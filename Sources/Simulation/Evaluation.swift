import GPSD
import Capture
import GPSModel
import Policy

#if canImport(Glibc)
import Glibc
#endif

/// The truth of a capture: every location it holds, on its clock (docs/contract.md §11: the full capture is
/// the truth a policy is judged against).
public struct TrueTrack: Sendable {
    public let points: [(t: Double, location: Location)]
    /// The receiver going away (a device closed, gpsd gone) and coming back, in the stream's order: each
    /// came after the first `afterPoints` points.
    public let receiverChanges: [ReceiverChange]

    public struct ReceiverChange: Sendable, Equatable {
        public var t: Double
        public var afterPoints: Int
        /// Why it was lost; nil when it came back.
        public var lostReason: String?
    }

    public init(points: [(t: Double, location: Location)], receiverChanges: [ReceiverChange] = []) {
        self.points = points
        self.receiverChanges = receiverChanges
    }

    /// The capture through the live pipeline (decoder, epoch collapsing, assembler), decoded once for both
    /// the simulated run and the evaluation that judges it.
    public init(_ contents: CaptureContents) {
        var assembler = LocationAssembler(origin: .replay)
        var points: [(t: Double, location: Location)] = []
        var changes: [ReceiverChange] = []
        CaptureReplayer(contents).run(onEvent: { t, event in
            if let location = assembler.location(after: event) { points.append((t, location)) }
            switch event {
            case .receiverLost(let reason): changes.append(ReceiverChange(t: t, afterPoints: points.count, lostReason: reason))
            case .receiverBack: changes.append(ReceiverChange(t: t, afterPoints: points.count, lostReason: nil))
            default: break
            }
        })
        self.points = points
        receiverChanges = changes
    }

    /// The track as the inputs of a simulated replay, in the stream's order.
    public func forEachInput(_ body: (Double, TruthInput) -> Void) {
        var changes = receiverChanges[...]
        for (index, point) in points.enumerated() {
            while let change = changes.first, change.afterPoints <= index {
                body(change.t, change.lostReason.map(TruthInput.lost) ?? .back)
                changes = changes.dropFirst()
            }
            body(point.t, .fix(point.location))
        }
        for change in changes { body(change.t, change.lostReason.map(TruthInput.lost) ?? .back) }
    }

    public var first: Double { points.first?.t ?? 0 }
    public var last: Double { points.last?.t ?? 0 }
    public var duration: Double { last - first }

    /// Stops: runs of at least `minimum` seconds whose fixes stay within `radius` of the run's centroid,
    /// slower than 1 m/s, with no gap over 30 s. The departure is the first fix farther than `radius` from
    /// the centroid after the run (a car creeping off a stop is still near it for a while).
    public func stops(minimum: Double, radius: Double = 25) -> [(start: Double, end: Double, departure: Double?)] {
        var finder = StopFinder(minimum: minimum, radius: radius)
        for point in points { finder.feed(point) }
        return finder.finish()
    }
}

/// What one run (the policy, a baseline, the oracle) cost and how good its track was.
public struct RunFigures: Sendable, Equatable {
    public var name: String
    /// Charge drawn by the receiver, mAh.
    public var energy: Double
    /// Percentage of always-on for the same capture and receiver model.
    public var energyPercent: Double
    /// The part of `energy` drawn while the true track was stopped (moving under
    /// `EvaluationMath.stoppedSpeed`): where a policy loses most against the oracle.
    public var energyWhileStopped: Double
    /// Staleness at the true fixes (metres from the true position to the last location the application
    /// had been given), over the fixes at which it had one.
    public var staleness: Staleness
    /// Seconds of the capture during which the application had no location at all (before the first).
    public var secondsWithoutLocation: Double
    public var delivered: Int
    /// Seconds the receiver was down (standby or off).
    public var downSeconds: Double
    /// Wakes from down (power-ups), each paying a time to first fix.
    public var wakes: Int

    public struct Staleness: Sendable, Equatable {
        public var p50: Double
        public var p95: Double
        public var max: Double
        /// True fixes where it was over the bound.
        public var overBound: Int
    }

    /// Whether the run kept staleness within `bound` at every true fix (and had a location from the start).
    public var meetsBoundEverywhere: Bool { staleness.overBound == 0 }
}

/// Evaluation arithmetic shared by the policy's run, the baselines and the oracle.
public enum EvaluationMath {
    /// mAh for a receiver timeline.
    public static func energy(_ timeline: [ReceiverInterval], model: ReceiverModel) -> Double {
        timeline.reduce(0) { total, interval in
            let current: Double
            switch interval.state {
            case .acquiring: current = model.current.acquisition
            case .tracking: current = model.current.tracking
            case .powerSave: current = model.current.powerSave
            case .standby: current = model.current.standby
            case .off: current = model.current(in: .off)
            }
            return total + current * (interval.end - interval.start) / 3600
        }
    }

    /// Below this true speed (m/s, from one true fix to the next) the device counts as stopped.
    public static let stoppedSpeed = 1.0

    /// The stretches of `truth` where it stood still: each stretch between two true fixes less than
    /// `stoppedSpeed` apart in speed, joined when they touch (`start` and `end` only).
    public static func stoppedStretches(_ truth: TrueTrack) -> [(start: Double, end: Double)] {
        var stopped: [(start: Double, end: Double)] = []
        for (from, to) in zip(truth.points, truth.points.dropFirst()) where to.t > from.t {
            let speed = Geodesy.distance(from: from.location, to: to.location) / (to.t - from.t)
            guard speed < stoppedSpeed else { continue }
            if let last = stopped.last, last.end == from.t {
                stopped[stopped.count - 1].end = to.t
            } else {
                stopped.append((from.t, to.t))
            }
        }
        return stopped
    }

    /// The charge (mAh) of `timeline` drawn within `stopped` (`stoppedStretches` of the truth).
    public static func energyWhileStopped(
        _ timeline: [ReceiverInterval], model: ReceiverModel, stopped: [(start: Double, end: Double)]
    ) -> Double {
        // Both lists are in time order and each list's intervals are disjoint: one merge pass.
        var overlap: [ReceiverInterval] = []
        var index = 0
        for interval in timeline {
            while index < stopped.count, stopped[index].end <= interval.start { index += 1 }
            var next = index
            while next < stopped.count, stopped[next].start < interval.end {
                let start = Swift.max(interval.start, stopped[next].start)
                let end = Swift.min(interval.end, stopped[next].end)
                if end > start { overlap.append(ReceiverInterval(start: start, end: end, state: interval.state)) }
                next += 1
            }
        }
        return energy(overlap, model: model)
    }

    /// The nearest-rank percentile of sorted values.
    public static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// Staleness at every true fix for deliveries `(t, location)` in time order.
    public static func staleness(
        truth: TrueTrack, deliveries: [(t: Double, location: Location)], bound: Double
    ) -> (RunFigures.Staleness, withoutLocation: Double, perFix: [Double?]) {
        var values: [Double] = []
        var perFix: [Double?] = []
        values.reserveCapacity(truth.points.count)
        var index = -1
        var firstLocationAt: Double?
        for point in truth.points {
            while index + 1 < deliveries.count, deliveries[index + 1].t <= point.t { index += 1 }
            guard index >= 0 else {
                perFix.append(nil)
                continue
            }
            if firstLocationAt == nil { firstLocationAt = deliveries[index].t }
            let distance = Geodesy.distance(from: deliveries[index].location, to: point.location)
            values.append(distance)
            perFix.append(distance)
        }
        let sorted = values.sorted()
        let without = (firstLocationAt ?? truth.last) - truth.first
        // A true fix with no location yet counts as over the bound.
        let overBound = values.count { $0 > bound } + (truth.points.count - values.count)
        return (
            RunFigures.Staleness(
                p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: sorted.last ?? 0,
                overBound: overBound),
            without, perFix
        )
    }

    /// Distance from each true position to the delivered track (the polyline through every delivered
    /// location, in order): for batching profiles, where staleness says little.
    public static func trackError(truth: TrueTrack, delivered: [Location]) -> (p50: Double, p95: Double, max: Double)? {
        guard !delivered.isEmpty else { return nil }
        var errors: [Double] = []
        errors.reserveCapacity(truth.points.count)
        // Local flat projection around the first point: the tracks here span tens of km at most.
        let origin = delivered[0]
        let scale = cos(origin.latitude * .pi / 180)
        func project(_ location: Location) -> (x: Double, y: Double) {
            ((location.longitude - origin.longitude) * 111_320 * scale, (location.latitude - origin.latitude) * 110_574)
        }
        let track = delivered.map(project)
        for point in truth.points {
            let p = project(point.location)
            var best = Double.infinity
            if track.count == 1 { best = hypot(p.x - track[0].x, p.y - track[0].y) }
            for (a, b) in zip(track, track.dropFirst()) {
                best = min(best, segmentDistance(p, a, b))
            }
            errors.append(best)
        }
        let sorted = errors.sorted()
        return (percentile(sorted, 0.5), percentile(sorted, 0.95), sorted.last ?? 0)
    }

    static func segmentDistance(_ p: (x: Double, y: Double), _ a: (x: Double, y: Double), _ b: (x: Double, y: Double))
        -> Double
    {
        let dx = b.x - a.x
        let dy = b.y - a.y
        let length = dx * dx + dy * dy
        guard length > 0 else { return hypot(p.x - a.x, p.y - a.y) }
        let u = max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length))
        return hypot(p.x - (a.x + u * dx), p.y - (a.y + u * dy))
    }
}

/// A profile's run on a capture next to the baselines and the oracle (docs/contract.md §11).
public struct Evaluation: Sendable {
    public var trueFixes: Int
    public var duration: Double
    public var bound: Double
    public var receiver: ReceiverModel
    public var policy: RunFigures
    /// For profiles that batch: distance from each true position to the delivered track.
    public var trackError: TrackError?
    public var pauses: [PauseFigures]
    public var failedAcquisitions: Int
    public var alwaysOn: RunFigures
    /// The largest interval (seconds) whose staleness p95 still meets the bound, and its figures; nil when
    /// not even the shortest does.
    public var interval: (seconds: Double, figures: RunFigures)?
    public var stopTimeout: RunFigures
    public var oracle: RunFigures
    /// The policy's energy over the oracle's.
    public var ratioToOracle: Double

    // What the report draws.
    public var truth: TrueTrack
    public var timeline: [ReceiverInterval]
    public var deliveries: [(t: Double, location: Location)]
    public var events: [(t: Double, kind: PolicyEventKind, detail: String)]
    public var stalenessPerFix: [Double?]

    public struct TrackError: Sendable, Equatable {
        public var p50: Double
        public var p95: Double
        public var max: Double
    }

    /// A pause and the resume after it, against the true stop (nil when the pause matches none).
    public struct PauseFigures: Sendable, Equatable {
        public var pausedAt: Double
        public var resumedAt: Double?
        /// Seconds from the true stop's start to the pause.
        public var delayAfterStop: Double?
        /// Seconds from the true departure to the resume.
        public var delayAfterDeparture: Double?
    }

    /// Every run the evaluation compares, in table order.
    public var runs: [RunFigures] {
        [policy, alwaysOn] + (interval.map { [$0.figures] } ?? []) + [stopTimeout, oracle]
    }
}

/// Computes an `Evaluation`: the profile's simulated run (`ReceiverSimulation`), the baselines on the same
/// simulated receiver, and the oracle.
public struct Evaluator: Sendable {
    public let setup: SimulationSetup
    /// Staleness bound in metres (the profile's).
    public let bound: Double
    public let name: String

    /// The transistorsoft baseline's settings (its documented defaults).
    public static let stopTimeoutRadius = 25.0
    public static let stopTimeout = 300.0
    public static let stopTimeoutProbe = 60.0
    /// The intervals tried for the `interval:N` baseline.
    public static let intervals: [Double] = [
        1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 450, 600, 900, 1200, 1800, 3600,
    ]

    public init(setup: SimulationSetup, bound: Double, name: String) {
        self.setup = setup
        self.bound = bound
        self.name = name
    }

    public func evaluate(_ contents: CaptureContents) -> Evaluation {
        let run = EvaluationRun(self, keepsDetail: true)
        CaptureReplayer(contents).run(onEvent: { t, event in run.feed(t: t, event: event) })
        return run.finish()
    }

    public func evaluate(_ truth: TrueTrack) -> Evaluation {
        let run = EvaluationRun(self, keepsDetail: true)
        truth.forEachInput { t, input in run.feed(t: t, input) }
        return run.finish()
    }

    /// Each pause with its resume, matched to the true stop it falls in (stops as long as the activity's
    /// window, within its radius).
    static func pauses(
        events: [(t: Double, kind: PolicyEventKind, detail: String)],
        stops: [(start: Double, end: Double, departure: Double?)]
    ) -> [Evaluation.PauseFigures] {
        var result: [Evaluation.PauseFigures] = []
        for (index, event) in events.enumerated() where event.kind.name == "paused" {
            let resumed = events[(index + 1)...].first { $0.kind == .resumed }?.t
            let stop = stops.first { event.t >= $0.start - 1 && event.t <= ($0.departure ?? .infinity) + 1 }
            result.append(
                Evaluation.PauseFigures(
                    pausedAt: event.t, resumedAt: resumed, delayAfterStop: stop.map { event.t - $0.start },
                    delayAfterDeparture: stop.flatMap { stop in
                        guard let departure = stop.departure, let resumed else { return nil }
                        return resumed - departure
                    }))
        }
        return result
    }

    /// The stops `pauses` matches against, for a setup.
    static func stopRule(_ setup: SimulationSetup) -> (minimum: Double, radius: Double) {
        let activity = setup.updates?.activityType ?? .other
        let rule = setup.policy.stationary[activity]
        return (min(rule.window ?? 120, 120), rule.radius / 2)
    }
}

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
    private var assembler = LocationAssembler(origin: .replay)
    private var previous: (t: Double, location: Location)?
    private var first: Double?
    private var last = 0.0
    private var trueFixes = 0
    private var stretches = StoppedStretches()

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
        oracleRun = OracleBaseline(model: model, bound: evaluator.bound)
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
        if keepsTrack { deliveries.append((t, location)) }
    }

    /// A true fix: every run sees it, then each is charged for the stretch since the previous one and judged
    /// at it.
    private func truth(t: Double, _ location: Location) {
        trueFixes += 1
        if first == nil { first = t }
        last = t
        let point = (t: t, location: location)
        var stopped = false
        if let previous, t > previous.t {
            let speed = Geodesy.distance(from: previous.location, to: location) / (t - previous.t)
            stopped = speed < EvaluationMath.stoppedSpeed
        }
        if let previous { stretches.add(from: previous.t, to: t, stopped: stopped) }

        let taken = policyRun.takeTimeline(until: t)
        policyMeter.charge(taken, stopped: stopped)
        if keepsDetail { timeline += taken }
        let staleness = policyMeter.judge(location, at: t)
        if keepsDetail { perFix.append(staleness) }

        alwaysOnMeter.delivered(location, at: t)
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
        _ = alwaysOnMeter.judge(location, at: t)

        for index in intervalRuns.indices { intervalRuns[index].feed(point, stopped: stopped) }
        stopTimeoutRun.feed(point, stopped: stopped)
        oracleRun.feed(point, stretches: stretches)
        stretches.forget(before: oracleRun.settledUntil)
        stopFinder.feed(point)
        if keepsTrack { points.append(point) }
        previous = point
    }

    public func finish() -> Evaluation {
        let summary = policyRun.finish { output in take(output) }
        let end = summary.lastT
        let tail = policyRun.takeTimeline(until: end)
        policyMeter.charge(tail, stopped: false)
        if keepsDetail { timeline += tail }
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
            trackError: trackError, pauses: Evaluator.pauses(events: events, stops: stopFinder.finish()),
            failedAcquisitions: failedAcquisitions, alwaysOn: alwaysOn,
            interval: interval, stopTimeout: stopFigures, oracle: oracle,
            ratioToOracle: oracle.energy > 0 ? policy.energy / oracle.energy : (policy.energy > 0 ? .infinity : 1),
            truth: keepsDetail ? truth : TrueTrack(points: []), timeline: keepsDetail ? timeline : summary.timeline,
            deliveries: keepsDetail ? deliveries : [], events: events, stalenessPerFix: keepsDetail ? perFix : [])
    }
}

/// `TrueTrack.stops`, one true fix at a time: runs of fixes within `radius` of their centroid, slower than
/// 1 m/s, with no gap over 30 s, lasting `minimum`; each stop's departure is the first later fix farther
/// than `radius` from its centroid.
struct StopFinder: Sendable {
    let minimum: Double
    let radius: Double
    private var run: (start: Double, end: Double, latitude: Double, longitude: Double, count: Double)?
    private var stops: [(start: Double, end: Double, departure: Double?, latitude: Double, longitude: Double)] = []
    /// Stops still waiting for their departure.
    private var pending: [Int] = []

    init(minimum: Double, radius: Double) {
        self.minimum = minimum
        self.radius = radius
    }

    mutating func feed(_ point: (t: Double, location: Location)) {
        let location = point.location
        if let current = run {
            let distance = Geodesy.distance(
                latitude1: current.latitude / current.count, longitude1: current.longitude / current.count,
                latitude2: location.latitude, longitude2: location.longitude)
            if (location.speed ?? 0) < 1, distance <= radius, point.t - current.end < 30 {
                run = (
                    current.start, point.t, current.latitude + location.latitude,
                    current.longitude + location.longitude, current.count + 1
                )
                checkDepartures(point)
                return
            }
            close()
        }
        checkDepartures(point)
        run = (point.t, point.t, location.latitude, location.longitude, 1)
    }

    private mutating func checkDepartures(_ point: (t: Double, location: Location)) {
        pending.removeAll { index in
            let stop = stops[index]
            let distance = Geodesy.distance(
                latitude1: stop.latitude, longitude1: stop.longitude, latitude2: point.location.latitude,
                longitude2: point.location.longitude)
            guard distance > radius else { return false }
            stops[index].departure = point.t
            return true
        }
    }

    private mutating func close() {
        guard let current = run else { return }
        run = nil
        guard current.end - current.start >= minimum else { return }
        stops.append(
            (current.start, current.end, nil, current.latitude / current.count, current.longitude / current.count))
        pending.append(stops.count - 1)
    }

    mutating func finish() -> [(start: Double, end: Double, departure: Double?)] {
        close()
        return stops.map { ($0.start, $0.end, $0.departure) }
    }
}
