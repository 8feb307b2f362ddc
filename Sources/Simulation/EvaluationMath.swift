import GPSD
import Capture
import GPSModel
import Policy

#if canImport(Glibc)
import Glibc
#endif

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

    /// The classes of true speed the policy's and the oracle's charge are split by (`Evaluation.bySpeed`), by
    /// their lower limits in m/s: standing (below `stoppedSpeed`), crawling (to 5 m/s: a walk, a jam, the
    /// seconds around a stop), moving (to 15 m/s, a town's speed limit), fast. A prediction from the recent
    /// speed is weakest where a start can multiply it, so this says where a profile loses to the oracle.
    public static let speedClassLimits = [0, stoppedSpeed, 5, 15]

    /// The class (an index into `speedClassLimits`) of a true speed.
    public static func speedClass(_ speed: Double) -> Int {
        speedClassLimits.lastIndex { speed >= $0 } ?? 0
    }

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

    /// The charge (mAh) of `timeline` drawn within `stretches` (`stoppedStretches` of the truth, its parks).
    public static func energy(
        _ timeline: [ReceiverInterval], model: ReceiverModel, within stretches: [(start: Double, end: Double)]
    ) -> Double {
        // Both lists are in time order and each list's intervals are disjoint: one merge pass.
        var overlap: [ReceiverInterval] = []
        var index = 0
        for interval in timeline {
            while index < stretches.count, stretches[index].end <= interval.start { index += 1 }
            var next = index
            while next < stretches.count, stretches[next].start < interval.end {
                let start = Swift.max(interval.start, stretches[next].start)
                let end = Swift.min(interval.end, stretches[next].end)
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
