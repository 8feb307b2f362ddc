import GPSModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The checks of docs/contract.md §2 that hold for every consumer: mode, finite coordinates, the receiver's
/// time, order, duplicates. Accuracy is checked per consumer, because each has its own limit.
///
/// Time as receivers really give it (docs/contract.md §2): the newest fix's time, carried forward on the
/// monotonic clock, predicts the next fix's. A fix more than `maximumAge` off that prediction either way is
/// suspect: ahead, it is held as `suspectTime` (a GPS-week rollover, a garbage date after a cold start) and
/// never becomes the newest, so one bad date cannot silence the track; behind, it is `stale` (a cached fix
/// repeated after a wake). Only when `agreeingFixes` such fixes agree with each other, over at least
/// `agreementSpan` of the monotonic clock (a burst of buffered fixes does not count), are they the
/// receiver's new time, in either direction (a receiver whose clock gpsd now dates minutes back): the filter
/// takes it and says so through `takeTimeChange()`. A fix older than the newest used is never used, so what
/// is delivered is always in time order.
struct FixFilter: Sendable {
    var maximumAge: Double
    /// Fixes that must agree on a new time before it is taken.
    static let agreeingFixes = 3
    /// Monotonic seconds the agreeing fixes must span.
    static let agreementSpan = 2.0
    /// How far (seconds) an agreeing fix may be from the time the candidate predicts.
    static let agreementTolerance = 5.0

    /// The newest fix's time and the monotonic instant it arrived. Extrapolating it on the monotonic clock
    /// gives "now" in receiver time without a wall clock, so a cached fix a receiver repeats after a power-up
    /// is seen as old even though it is the newest fix since the wake.
    private var newest: (time: UTCTime, at: Instant)?
    /// The last location a previous run delivered (`restoreLastKnownLocation`): until the receiver's time is
    /// known, nothing at or before it is used, so a restart never delivers out of order.
    var floor: UTCTime?
    /// Fixes off the prediction that agree with each other: the newest of them, when the first arrived, and
    /// how many.
    private var candidate: (time: UTCTime, at: Instant, first: Instant, count: Int)?
    /// The offset (seconds) of a new time taken since the last `takeTimeChange()`.
    private var timeChange: Double?
    /// Timestamps of recently admitted fixes (gpsd sends several reports per NMEA epoch).
    private var recent: [UTCTime] = []
    private static let recentCapacity = 16

    init(maximumAge: Double) {
        self.maximumAge = maximumAge
    }

    /// nil when the fix may be used, else why not. An admitted fix becomes the newest.
    mutating func admit(_ location: Location, now: Instant) -> DiscardReason? {
        guard location.fixMode >= .twoD else { return .noFix }
        guard location.latitude.isFinite, location.longitude.isFinite, abs(location.latitude) <= 90,
            abs(location.longitude) <= 180
        else { return .invalidCoordinate }
        let time = location.timestamp
        if recent.contains(time) { return .duplicate }
        // Seconds ahead (+) of or behind (−) the time the newest fix predicts; behind the floor before any.
        let offset: Double? =
            if let newest { time.interval(since: newest.time.adding(seconds: now - newest.at)) }
            else if let floor, time <= floor { time.interval(since: floor) }
            else { nil }
        if let offset {
            if offset > maximumAge || -offset > maximumAge || (newest == nil && offset <= 0) {
                guard agrees(time, now: now) else {
                    return offset > 0 ? .suspectTime(offset: offset) : .stale(age: -offset)
                }
                // Agreeing fixes: the receiver's time is now this.
                timeChange = offset
                recent = []
            } else if let newest, time < newest.time {
                candidate = nil
                return .outOfOrder(behind: newest.time.interval(since: time))
            } else {
                candidate = nil
            }
        }
        newest = (time, now)
        recent.append(time)
        if recent.count > Self.recentCapacity { recent.removeFirst() }
        return nil
    }

    /// The offset (seconds, + ahead) of the new time the last admitted fixes made the filter take, once.
    mutating func takeTimeChange() -> Double? {
        defer { timeChange = nil }
        return timeChange
    }

    /// Whether `time` agrees with the fixes held as suspect before it enough to be the receiver's time.
    private mutating func agrees(_ time: UTCTime, now: Instant) -> Bool {
        if let held = candidate, time > held.time,
            abs(time.interval(since: held.time.adding(seconds: now - held.at))) <= Self.agreementTolerance
        {
            candidate = (time, now, held.first, held.count + 1)
            if held.count + 1 >= Self.agreeingFixes, now - held.first >= Self.agreementSpan {
                candidate = nil
                return true
            }
            return false
        }
        candidate = (time, now, now, 1)
        return false
    }

    /// The horizontal accuracy if it is a usable number; a non-finite or negative value counts as unknown.
    static func accuracy(of location: Location) -> Double? {
        guard let value = location.horizontalAccuracy, value.isFinite, value >= 0 else { return nil }
        return value
    }

    /// nil when the fix is within `limit` (or its accuracy is unknown: nothing says it is worse).
    static func accuracyProblem(_ location: Location, limit: Double?) -> DiscardReason? {
        guard let limit, let accuracy = accuracy(of: location), accuracy > limit else { return nil }
        return .inaccurate(accuracy: accuracy, limit: limit)
    }
}

/// Judges stationarity from fixes alone (no motion sensor, docs/contract.md §4).
///
/// The anchor is the centroid of the window's fixes, not its first fix: a single noisy first fix would
/// otherwise let the scatter of a stationary receiver keep restarting the window (the "late stop" failure of
/// transistorsoft's cordova#139). The window is evidence of stillness, never elapsed time: it grows only by
/// the time between two fixes that both showed the device still, at most `countedGap` for each such pair.
/// These restart it:
/// - any fix that moves: reporting a speed above the rule's moving speed (set above the ~2 m/s a noisy
///   receiver reports) or lying farther from the centroid than the radius, allowing for its accuracy.
///   Whatever came before, a fix that contradicts stillness is not followed by a pause: a departure's first
///   fix, after a nap that saw nothing, was once taken for an outlier and the car paused while driving off.
///   One exception, which never pauses either: a fix at noise speed out by less than twice its own error is
///   held until the next fix, and restarts the window only if that one is out too (a stray multipath fix of
///   a weak-signal receiver cost a static receiver a whole window);
/// - the mean of the newest few fixes drifting more than the radius from the mean of the first few (a slow
///   crawl, which moves the centroid along with it and so never leaves the radius of it). Averages are used
///   so scatter cancels out while steady movement does not;
/// - a gap without fixes longer than `maximumGap`. A gap up to it keeps the window (the device was seen
///   still on both sides), but only part of it counts: the `countedGap` after the last still fix, for which
///   that fix vouches, and the time the policy itself chose to keep the receiver down (`expectDark`): a nap,
///   or the sleep after a failed wake, each with the start it expected after it. Time the receiver was up and
///   saw nothing is what was not observed, and beyond the vouch it does not count.
struct StationaryDetector: Sendable {
    /// Fixes averaged at each end of the window for the crawl check.
    static let endSpan = 10

    private var origin: Location?
    /// Seconds of observed stillness in the window.
    private(set) var stillFor = 0.0
    private var count = 0
    private var sum = (north: 0.0, east: 0.0)
    private var head: [(north: Double, east: Double)] = []
    private var tail: [(north: Double, east: Double)] = []
    private var last: Location?
    private var lastAt = Instant(seconds: 0)
    /// The previous fix was out of the radius but within its own error of it (a stray, until the next fix says).
    private var suspect = false
    /// Spans since the last fix in which the policy chose to have no fix (`expectDark`), oldest first.
    private var dark: [(from: Instant, to: Instant)] = []
    /// A failure series that never ends is not worth remembering in full: the oldest spans go (counted less).
    private static let darkCapacity = 64

    mutating func reset() {
        origin = nil
        count = 0
        sum = (0, 0)
        head = []
        tail = []
        last = nil
        stillFor = 0
        dark = []
        suspect = false
    }

    /// The policy takes the receiver down until `until` (the end of a nap or of the sleep after a failed
    /// wake, plus the time to first fix it expects then): no fix is expected before, so the lack of one is
    /// the policy's choice, not a sign of movement. A fix moving after it still restarts the window.
    mutating func expectDark(from: Instant, until: Instant) {
        guard origin != nil, until > from else { return }
        dark.append((from, until))
        if dark.count > Self.darkCapacity { dark.removeFirst() }
    }

    /// Seconds of the gap from `lastAt` to `now` that count as stillness: the first `vouch` seconds, and any
    /// dark span after them.
    private func counted(until now: Instant, vouch: Double) -> Double {
        let gap = now - lastAt
        guard gap > vouch else { return max(gap, 0) }
        var covered = vouch
        var reached = lastAt + vouch
        for span in dark {
            let from = max(span.from, reached)
            let to = min(span.to, now)
            if to > from {
                covered += to - from
                reached = to
            }
        }
        return min(covered, gap)
    }

    /// The window's centroid as a location (with the newest fix's other fields), nil before any fix.
    var anchor: Location? {
        guard let origin, let last, count > 0 else { return nil }
        var location = last
        let (latitude, longitude) = Geodesy.coordinate(
            north: sum.north / Double(count), east: sum.east / Double(count), from: origin)
        location.latitude = latitude
        location.longitude = longitude
        return location
    }

    /// Seconds the device has been seen stationary as of this fix: 0 when this fix restarts the window.
    mutating func observe(
        _ location: Location, now: Instant, rule: StationaryRule, maximumGap: Double, countedGap: Double
    ) -> Double {
        guard let origin, count > 0, now - lastAt <= maximumGap else {
            restart(at: location, now: now)
            return 0
        }
        let point = Geodesy.offset(of: location, from: origin)
        let centroid = (north: sum.north / Double(count), east: sum.east / Double(count))
        // The allowance is capped at the radius so a very inaccurate fix cannot count as "within" at any distance.
        let accuracy = FixFilter.accuracy(of: location)
        let allowance = min(accuracy ?? 0, rule.radius)
        let fromCentroid = Self.length(point.north - centroid.north, point.east - centroid.east)
        let fast = (location.speed ?? 0) > rule.movingSpeed
        if fast || fromCentroid - allowance > rule.radius {
            // Out by less than twice its own error (gpsd's error estimates are about 95 %), at noise speed: a
            // multipath jump or an HDOP spike as likely as a departure. It neither counts nor pauses; the next
            // fix tells: back within, the window goes on; out again, it starts from there. A fix of unknown
            // accuracy, too fast, or out by more is movement at once.
            let stray = !fast && accuracy.map { fromCentroid - 2 * $0 <= rule.radius } ?? false
            if stray && !suspect {
                suspect = true
                return 0
            }
            restart(at: location, now: now)
            return 0
        }
        suspect = false
        // A still fix vouches for the time it stays current (`maximumAge`, docs/contract.md §2), and a nap the
        // policy chose between two still fixes hid nothing (a fix after it that moved would have restarted the
        // window above); the rest of a longer gap, up and without a fix, was not observed.
        stillFor += counted(until: now, vouch: countedGap)
        dark = []
        lastAt = now
        add(point, location)
        if head.count == Self.endSpan && tail.count == Self.endSpan && count >= 2 * Self.endSpan {
            let headMean = Self.mean(head)
            let tailMean = Self.mean(tail)
            if Self.length(tailMean.north - headMean.north, tailMean.east - headMean.east) > rule.radius {
                restart(at: location, now: now)
                return 0
            }
        }
        return stillFor
    }

    private mutating func restart(at location: Location, now: Instant) {
        reset()
        origin = location
        lastAt = now
        add((0, 0), location)
    }

    private mutating func add(_ point: (north: Double, east: Double), _ location: Location) {
        count += 1
        sum.north += point.north
        sum.east += point.east
        if head.count < Self.endSpan { head.append(point) }
        tail.append(point)
        if tail.count > Self.endSpan { tail.removeFirst() }
        last = location
    }

    private static func mean(_ points: [(north: Double, east: Double)]) -> (north: Double, east: Double) {
        let n = Double(max(points.count, 1))
        return (points.reduce(0) { $0 + $1.north } / n, points.reduce(0) { $0 + $1.east } / n)
    }

    private static func length(_ north: Double, _ east: Double) -> Double { (north * north + east * east).squareRoot() }
}

/// Words for durations and distances in reasons: "5 min", "45 s", "212 m", "1.2 km".
enum Words {
    static func duration(_ seconds: Double) -> String {
        // The receiver's times make these: NaN or beyond Int64 is said, not converted (which traps).
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "\(seconds) s" }
        let rounded = seconds.rounded()
        if rounded < 120 && rounded.truncatingRemainder(dividingBy: 60) != 0 { return "\(Int(rounded)) s" }
        if rounded < 7200 { return "\(Int((rounded / 60).rounded())) min" }
        let minutes = Int((rounded / 60).rounded())
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }

    static func distance(_ metres: Double) -> String {
        guard metres.isFinite, abs(metres) < 1e15 else { return "\(metres) m" }
        if metres < 1000 { return "\(Int(metres.rounded())) m" }
        let tenths = (metres / 100).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10)) km" : "\(tenths / 10) km"
    }

    /// "8.3 m/s".
    static func speed(_ metresPerSecond: Double) -> String {
        "\((metresPerSecond * 10).rounded() / 10) m/s"
    }

    static func ordinal(_ n: Int) -> String {
        let suffix: String
        switch (n % 10, n % 100) {
        case (1, let h) where h != 11: suffix = "st"
        case (2, let h) where h != 12: suffix = "nd"
        case (3, let h) where h != 13: suffix = "rd"
        default: suffix = "th"
        }
        return "\(n)\(suffix)"
    }
}

/// `reduced` accuracy: coordinates snapped to a fixed grid, so the same place always gives the same answer and
/// nothing finer leaks (Apple's "approximate" location).
enum Coarsening {
    static let metresPerDegree = 111_320.0

    static func coarsen(_ location: Location, grid: Double) -> Location {
        let latitudeStep = grid / metresPerDegree
        let latitude = (location.latitude / latitudeStep).rounded() * latitudeStep
        // The longitude step follows the snapped latitude, so the grid is fixed per band, not per fix.
        let longitudeStep = grid / (metresPerDegree * max(cos(latitude * .pi / 180), 0.01))
        let longitude = (location.longitude / longitudeStep).rounded() * longitudeStep
        return Location(
            timestamp: location.timestamp, latitude: min(max(latitude, -90), 90),
            longitude: min(max(longitude, -180), 180), horizontalAccuracy: grid,
            horizontalAccuracySource: location.horizontalAccuracySource, fixMode: location.fixMode,
            device: location.device, origin: location.origin)
    }
}
