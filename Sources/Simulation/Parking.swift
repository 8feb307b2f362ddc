import GPSModel

/// How an evaluation tells a park from motion on the true track (docs/policy.md, "Parked and departing").
/// A parked receiver's fixes wander, tens of metres and at times more than a hundred, so neither a speed nor
/// one fix outside a small circle means the vehicle left: a park is a stretch of at least `minimum` seconds
/// whose fixes stay within `leave` of their centre, and it is left when a fix lies farther than `leave`. The
/// departure is then dated back to the last fix within `radius` of the centre, or the last slower than
/// `standingSpeed` if later: the moment it went for good.
public struct ParkRule: Sendable, Equatable {
    /// Shortest park, in seconds: shorter stands (lights, queues, a delivery) are stops, not parks.
    public var minimum: Double
    /// The circle a parked receiver's wander mostly stays in, in metres.
    public var radius: Double
    /// How far from the centre a fix must lie before the park counts as left, in metres.
    public var leave: Double

    /// m/s: a fix slower than this stands, wherever its position wandered.
    public var standingSpeed: Double

    public init(minimum: Double = 600, radius: Double = 100, leave: Double = 250, standingSpeed: Double = 0.5) {
        self.minimum = minimum
        self.radius = radius
        self.leave = leave
        self.standingSpeed = standingSpeed
    }
}

/// Where a parked vehicle stands, for scoring staleness (docs/policy.md, "Parked and departing"): in a park, any
/// position within `radius` of its centre (the park rule's `leave`) is the centre. The receiver's wander there
/// is noise, not the vehicle moving, so neither a true fix nor a delivered location that wandered inside the
/// circle counts as elsewhere.
struct ParkCircle: Sendable, Equatable {
    var latitude: Double
    var longitude: Double
    var radius: Double

    init(latitude: Double, longitude: Double, radius: Double) {
        (self.latitude, self.longitude, self.radius) = (latitude, longitude, radius)
    }

    /// The location at the centre when it lies within the circle, else unchanged.
    func place(_ location: Location) -> Location {
        guard
            Geodesy.distance(
                latitude1: latitude, longitude1: longitude, latitude2: location.latitude,
                longitude2: location.longitude) <= radius
        else { return location }
        var placed = location
        placed.latitude = latitude
        placed.longitude = longitude
        return placed
    }
}

/// What parks cost and how soon each departure was seen, for one run: the profile's.
public struct ParkingFigures: Sendable, Equatable {
    public var rule: ParkRule
    public var parks: [Park]
    /// Seconds parked, summed over the parks (to the departure, or to the end of the track).
    public var parkedSeconds: Double
    /// The profile's charge while parked and while not, mAh.
    public var energyParked: Double
    public var energyMoving: Double
    /// The oracle's, on the same parks.
    public var oracleEnergyParked: Double
    public var oracleEnergyMoving: Double
    /// The profile's wakes (down to up) that began while parked.
    public var wakesWhileParked: Int

    public struct Park: Sendable, Equatable {
        public var start: Double
        /// The last fix within `radius`, or standing, before the vehicle left; nil when the track ends parked.
        public var departure: Double?
        /// From the departure to the first location the application was given farther than `radius` from the
        /// park's centre: seconds, and metres travelled along the true track. Nil when none came.
        public var seenAfter: Double?
        public var seenAfterMetres: Double?
    }

    /// Wakes per hour parked.
    public var wakesPerParkedHour: Double { parkedSeconds > 0 ? Double(wakesWhileParked) / (parkedSeconds / 3600) : 0 }

    /// Departures the application never saw before the track ended.
    public var unseenDepartures: Int { parks.count { $0.departure != nil && $0.seenAfter == nil } }

    /// Nearest-rank p50, p95 and max of the seen departures' latency, in seconds and in metres; nil without one.
    public var departureLatency: (seconds: [Double], metres: [Double])? {
        let seen = parks.compactMap { park in park.seenAfter.flatMap { s in park.seenAfterMetres.map { (s, $0) } } }
        guard !seen.isEmpty else { return nil }
        let seconds = seen.map(\.0).sorted()
        let metres = seen.map(\.1).sorted()
        return (
            [0.5, 0.95, 1].map { EvaluationMath.percentile(seconds, $0) },
            [0.5, 0.95, 1].map { EvaluationMath.percentile(metres, $0) }
        )
    }
}

/// `ParkRule` applied one input at a time: true fixes find the parks, the application's locations date when
/// each departure was seen. Memory is one run and the parks found.
struct ParkFinder: Sendable {
    let rule: ParkRule
    private var parks: [ParkingFigures.Park] = []
    /// The stretch being watched: its start, its centre's sums, the last fix within `radius` and the true
    /// path since then.
    private var run: Run?
    private var previous: Location?
    /// A departure confirmed before the application saw it: the park's index and centre, and the path since.
    private var awaiting: (index: Int, latitude: Double, longitude: Double, metres: Double)?

    private struct Run: Sendable {
        var start: Double
        /// The last fix within `radius`, or standing: the departure, if the next ones leave.
        var lastParked: Double
        var latitude: Double
        var longitude: Double
        var count: Double
        var metresSinceParked = 0.0
        /// The first location given farther than `radius` since `lastParked`: seconds and metres after it.
        var seen: (seconds: Double, metres: Double)?

        var centre: (latitude: Double, longitude: Double) { (latitude / count, longitude / count) }
    }

    init(rule: ParkRule) { self.rule = rule }

    /// The park the true track is in, from the moment the stretch has lasted `minimum` (as a park is told from
    /// a stop) to the fix that leaves it; nil otherwise. Its centre is the mean of the stretch's fixes so far,
    /// its radius `leave`: a wander is told from a departure only once it goes that far, so up to then it is
    /// the park (the departure's own figures are dated back to the last fix within `radius`, or standing).
    var circle: ParkCircle? {
        guard let run, run.lastParked - run.start >= rule.minimum else { return nil }
        let centre = run.centre
        return ParkCircle(latitude: centre.latitude, longitude: centre.longitude, radius: rule.leave)
    }

    mutating func truth(_ t: Double, _ location: Location) {
        let step = previous.map { Geodesy.distance(from: $0, to: location) } ?? 0
        previous = location
        awaiting?.metres += step
        guard var current = run else {
            run = Run(start: t, lastParked: t, latitude: location.latitude, longitude: location.longitude, count: 1)
            return
        }
        let centre = current.centre
        let distance = Geodesy.distance(
            latitude1: centre.latitude, longitude1: centre.longitude, latitude2: location.latitude,
            longitude2: location.longitude)
        if distance <= rule.leave {
            current.latitude += location.latitude
            current.longitude += location.longitude
            current.count += 1
            // A fix beyond the radius that reports the receiver standing (Doppler speed is not fooled by the
            // position's wander) still dates the departure: the vehicle left after it.
            if distance <= rule.radius || location.speed.map({ $0 < rule.standingSpeed }) == true {
                current.lastParked = t
                current.metresSinceParked = 0
                current.seen = nil
            } else {
                current.metresSinceParked += step
            }
            run = current
            return
        }
        current.metresSinceParked += step
        close(current, departed: true)
        run = Run(start: t, lastParked: t, latitude: location.latitude, longitude: location.longitude, count: 1)
    }

    /// A location the application was given at `t`.
    mutating func delivered(_ t: Double, _ location: Location) {
        if let waiting = awaiting,
            Geodesy.distance(
                latitude1: waiting.latitude, longitude1: waiting.longitude, latitude2: location.latitude,
                longitude2: location.longitude) > rule.radius,
            let departure = parks[waiting.index].departure
        {
            parks[waiting.index].seenAfter = t - departure
            parks[waiting.index].seenAfterMetres = waiting.metres
            awaiting = nil
        }
        guard var current = run, current.seen == nil, t >= current.lastParked,
            current.lastParked - current.start >= rule.minimum
        else { return }
        let centre = current.centre
        if Geodesy.distance(
            latitude1: centre.latitude, longitude1: centre.longitude, latitude2: location.latitude,
            longitude2: location.longitude) > rule.radius
        {
            current.seen = (t - current.lastParked, current.metresSinceParked)
            run = current
        }
    }

    private mutating func close(_ current: Run, departed: Bool) {
        guard current.lastParked - current.start >= rule.minimum else { return }
        let centre = current.centre
        parks.append(
            ParkingFigures.Park(
                start: current.start, departure: departed ? current.lastParked : nil, seenAfter: current.seen?.seconds,
                seenAfterMetres: current.seen?.metres))
        // A departure not seen yet waits for the next location beyond the circle (the one before it, if any, is
        // never seen now).
        awaiting =
            departed && current.seen == nil
            ? (parks.count - 1, centre.latitude, centre.longitude, current.metresSinceParked) : nil
    }

    /// The parks, the track having ended: a park still open has no departure.
    mutating func finish() -> [ParkingFigures.Park] {
        if let current = run {
            run = nil
            close(current, departed: false)
        }
        return parks
    }

    /// Parked stretches for charging: each park to its departure, or to `end`.
    static func stretches(_ parks: [ParkingFigures.Park], end: Double) -> [(start: Double, end: Double)] {
        parks.map { ($0.start, $0.departure ?? end) }
    }

    /// Wakes (a down interval followed by an up one) that began inside `stretches`; both lists in time order.
    static func wakes(_ timeline: [ReceiverInterval], within stretches: [(start: Double, end: Double)]) -> Int {
        var count = 0
        var index = 0
        for (before, after) in zip(timeline, timeline.dropFirst()) where before.state.isDown && !after.state.isDown {
            while index < stretches.count, stretches[index].end < after.start { index += 1 }
            if index < stretches.count, stretches[index].start <= after.start { count += 1 }
        }
        return count
    }
}
