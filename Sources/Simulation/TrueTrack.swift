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
