import GPSModel
import Policy

#if canImport(Glibc)
import Glibc
#endif

/// Staleness percentiles in constant memory: counts in logarithmic bins 0.1 % wide from 1 cm (below it, a
/// bin of its own), so a percentile is within 0.1 % of the exact one; the maximum is exact.
struct StalenessHistogram: Sendable {
    private static let smallest = 0.01
    private static let ratio = 1.001
    private static let logRatio = log(ratio)
    private var counts: [UInt32] = []
    private var belowSmallest = 0
    private(set) var count = 0
    private(set) var maximum = 0.0

    mutating func add(_ value: Double) {
        count += 1
        maximum = Swift.max(maximum, value)
        guard value >= Self.smallest, value.isFinite else {
            if value.isFinite { belowSmallest += 1 } else { append(bin: Self.bin(for: 4e7)) }
            return
        }
        append(bin: Self.bin(for: value))
    }

    private mutating func append(bin: Int) {
        if bin >= counts.count { counts += [UInt32](repeating: 0, count: bin + 1 - counts.count) }
        counts[bin] += 1
    }

    private static func bin(for value: Double) -> Int {
        // Beyond half the Earth's circumference nothing is farther: one last bin.
        Int(log(Swift.min(value, 4e7) / smallest) / logRatio)
    }

    /// The nearest-rank percentile: the middle of the bin it falls in, never above the maximum.
    func percentile(_ fraction: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = Swift.min(Swift.max(Int((fraction * Double(count)).rounded(.up)), 1), count)
        if rank == count { return maximum }
        var seen = belowSmallest
        if seen >= rank { return 0 }
        for (bin, binCount) in counts.enumerated() {
            seen += Int(binCount)
            if seen >= rank {
                return Swift.min(Self.smallest * exp((Double(bin) + 0.5) * Self.logRatio), maximum)
            }
        }
        return maximum
    }
}

/// One run's figures as they accumulate: charge from its timeline, staleness at each true fix.
struct RunMeter: Sendable {
    let model: ReceiverModel
    let bound: Double
    private(set) var energy = 0.0
    private(set) var energyWhileStopped = 0.0
    /// The part of `energy` drawn in each class of true speed (`EvaluationMath.speedClassLimits`), for the
    /// runs that split it: the policy's and the oracle's.
    private(set) var energyBySpeed = EvaluationMath.speedClassLimits.map { _ in 0.0 }
    private(set) var downSeconds = 0.0
    private(set) var wakes = 0
    private var lastWasDown: Bool?
    private var lastDelivered: Location?
    private var lastDeliveredAt = 0.0
    private(set) var deliveredCount = 0
    private var firstLocationAt: Double?
    private var histogram = StalenessHistogram()
    private var overBound = 0
    private var withoutLocation = 0

    /// With `records`, the timeline (touching stretches of one state joined) and the deliveries are kept too,
    /// for `Baselines`' whole-run answers; an evaluation keeps neither.
    let records: Bool
    private(set) var timeline: [ReceiverInterval] = []
    private(set) var deliveries: [(t: Double, location: Location)] = []

    init(model: ReceiverModel, bound: Double, records: Bool = false) {
        self.model = model
        self.bound = bound
        self.records = records
    }

    mutating func delivered(_ location: Location, at t: Double) {
        if records { deliveries.append((t, location)) }
        lastDelivered = location
        lastDeliveredAt = t
        deliveredCount += 1
    }

    /// Staleness at a true fix: metres from it to the last location delivered, nil before the first. In a
    /// `park`, both are placed by its circle first: a delivered fix that wandered within it is the park too.
    mutating func judge(_ truth: Location, at t: Double, park: ParkCircle? = nil) -> Double? {
        guard let lastDelivered else {
            withoutLocation += 1
            return nil
        }
        if firstLocationAt == nil { firstLocationAt = lastDeliveredAt }
        let distance =
            if let park { Geodesy.distance(from: park.place(lastDelivered), to: park.place(truth)) } else {
                Geodesy.distance(from: lastDelivered, to: truth)
            }
        histogram.add(distance)
        if distance > bound { overBound += 1 }
        return distance
    }

    /// Charges stretches of the run's timeline, in order; `stopped` when they lie where the truth stood still.
    /// The charge, mAh.
    @discardableResult
    mutating func charge(_ intervals: [ReceiverInterval], stopped: Bool) -> Double {
        guard !intervals.isEmpty else { return 0 }
        let charge = EvaluationMath.energy(intervals, model: model)
        energy += charge
        if stopped { energyWhileStopped += charge }
        for interval in intervals {
            if records { timeline.append(joining: interval) }
            let isDown = interval.state.isDown
            if isDown { downSeconds += interval.end - interval.start }
            if lastWasDown == true, !isDown { wakes += 1 }
            lastWasDown = isDown
        }
        return charge
    }

    /// Charge already counted in `energy`, drawn in `speedClass` of the true track (the first is stopped).
    mutating func charge(_ charge: Double, speedClass: Int) {
        energyBySpeed[speedClass] += charge
        if speedClass == 0 { energyWhileStopped += charge }
    }

    func figures(name: String, alwaysOnEnergy: Double, trueFixes: Int, first: Double, last: Double) -> RunFigures {
        RunFigures(
            name: name, energy: energy, energyPercent: alwaysOnEnergy > 0 ? energy / alwaysOnEnergy * 100 : 0,
            energyWhileStopped: energyWhileStopped,
            staleness: RunFigures.Staleness(
                p50: histogram.percentile(0.5), p95: histogram.percentile(0.95), max: histogram.maximum,
                // A true fix with no location yet counts as over the bound.
                overBound: overBound + withoutLocation),
            secondsWithoutLocation: (firstLocationAt ?? last) - first, delivered: deliveredCount,
            downSeconds: downSeconds, wakes: wakes)
    }
}

/// The stretches between true fixes, each with the class of the true speed over it (`SpeedClass`; the first,
/// standing, is what "stopped" means everywhere), joined when they touch and share a class, kept only as far
/// back as a run that charges late (the oracle) still needs.
struct SpeedStretches: Sendable {
    private(set) var list: [(start: Double, end: Double, speedClass: Int)] = []

    mutating func add(from start: Double, to end: Double, speedClass: Int) {
        guard end > start else { return }
        if let last = list.last, last.end == start, last.speedClass == speedClass {
            list[list.count - 1].end = end
        } else {
            list.append((start, end, speedClass))
        }
    }

    /// The stretches of one class, `start` and `end` only.
    func of(_ speedClass: Int) -> [(start: Double, end: Double)] {
        list.filter { $0.speedClass == speedClass }.map { (start: $0.start, end: $0.end) }
    }

    mutating func forget(before t: Double) {
        let gone = list.prefix { $0.end <= t }.count
        if gone > 0 { list.removeFirst(gone) }
    }
}
