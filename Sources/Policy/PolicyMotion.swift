import GPSModel

// A pause with a motion sensor (`MotionRule`, docs/contract.md §4): the probe schedule and the false alarms.

/// The hints that proved false and until when hints are ignored. Kept in the updates, not the pause: a parked
/// receiver's wander can take a hint's probe for a departure, and the pause that follows a minute later must
/// remember that the hint was false.
struct HintQuiet: Sendable {
    /// False alarms in a row (each within a quiet's length of the last quiet's end).
    var falseAlarms = 0
    /// The last quiet's length, and its end.
    var quiet = 0.0
    var until: Instant?
    /// A hint's probe resumed updates here: a pause soon after, nearby, makes it a false alarm.
    var resumed: (at: Instant, anchor: Location)?
    /// The last hint heard, in any phase.
    var lastHeard: Instant?
    /// The last hint, heard or quieted: whether the sensor heralds starts is not a matter of false alarms.
    var lastFired: Instant?
    /// The first and the last acceptable fix slower than the moving speed, none faster since: the device
    /// stands.
    var standingSince: Instant?
    var lastStanding: Instant?
    /// The device's last starts in a row the sensor fired for: from shortly before the last standing fix to
    /// the first moving one. A stop is napped out on the sensor's word (`considerNap`) only after two: a sensor
    /// that missed the last start, or has not yet shown one, is not trusted to report the next, nor is an
    /// ignition line, which fires for the first start of a trip and for none of its stops.
    var heraldedStarts = 0

    /// How long before the last standing fix a hint still heralds the start: the first seconds of a start are
    /// slower than the moving speed, and the sensor may fire in them.
    static let heraldSlack = 30.0

    /// Whether a hint at `now` is heard: no quiet, or it has ended.
    func heard(at now: Instant) -> Bool { until.map { now >= $0 } ?? true }

    /// Whether the sensor has said within `window` seconds of `now` that the device moves.
    func movingRecently(at now: Instant, window: Double) -> Bool { lastHeard.map { now - $0 <= window } ?? false }

    /// The device stands and the sensor, which fired for its last two starts, has not fired since it stopped:
    /// a sensor that fires at a standstill (an idling engine, a faulty switch) is not taken at its word.
    func vouchesStanding(at now: Instant) -> Bool {
        guard heraldedStarts >= 2, heard(at: now), let since = standingSince else { return false }
        return lastFired.map { $0 < since } ?? true
    }

    /// An acceptable fix at `speed`: the first one at the moving speed after standing ones is a start, which
    /// the sensor heralded or missed.
    mutating func observe(speed: Double, movingSpeed: Double, at now: Instant) {
        guard speed >= movingSpeed else {
            if standingSince == nil { standingSince = now }
            lastStanding = now
            return
        }
        guard let standing = lastStanding else { return }
        standingSince = nil
        lastStanding = nil
        let heralded = lastFired.map { standing - $0 <= Self.heraldSlack } ?? false
        heraldedStarts = heralded ? heraldedStarts + 1 : 0
    }
}

extension Policy {
    /// After a probe that found the device still: the next probe's interval (with a sensor, the fallback; else
    /// grown by the stationary rule) and, for a hint's probe, the false alarm counted. Words for the reason.
    /// The fallback is for a sensor gone silent: one that heralded the device's last two starts was working
    /// when it parked, and its fallback doubles at each such probe up to four times the interval (the car's
    /// day with a sensor, bench/day.sh: 1.28 to 1.24 times the oracle; a dead sensor, which heralds nothing,
    /// keeps the interval and its departures' latency).
    mutating func stillAfterProbe(_ pause: inout Pause, _ hints: inout HintQuiet, rule: StationaryRule, now: Instant)
        -> String
    {
        let fallback = configuration.motion.fallbackProbeInterval
        pause.probeInterval =
            configuration.motion.sensor
            ? (hints.heraldedStarts >= 2 ? min(pause.probeInterval * 2, 4 * fallback) : fallback)
            : min(pause.probeInterval * rule.probeGrowth, rule.maximumProbeInterval)
        return falseAlarm(&pause, &hints, now: now)
    }

    /// A hint's probe showed no movement: hints are ignored for `falseAlarmQuiet`, doubled at each false alarm
    /// that follows the last quiet closely, up to the fallback interval. A sensor that fires all the time so
    /// costs a probe per fallback interval once it has doubled there; one that errs now and then is quiet a
    /// minute after each error (the doubling starts again once a quiet has ended longer ago than it lasted),
    /// and a departure is not ignored for long. Empty words when the probe was not a hint's.
    mutating func falseAlarm(_ pause: inout Pause, _ hints: inout HintQuiet, now: Instant) -> String {
        guard pause.byHint else { return "" }
        pause.byHint = false
        return quietHints(&hints, now: now)
    }

    /// Counts a false alarm and quiets the hints (as `falseAlarm` says); the words for the reason.
    mutating func quietHints(_ hints: inout HintQuiet, now: Instant) -> String {
        let motion = configuration.motion
        if let until = hints.until, now - until > hints.quiet { hints.falseAlarms = 0 }
        let quiet = min(motion.falseAlarmQuiet * Double(1 << min(hints.falseAlarms, 30)), motion.fallbackProbeInterval)
        hints.falseAlarms += 1
        hints.quiet = quiet
        hints.until = now + quiet
        return " after a motion hint (false alarm \(hints.falseAlarms); hints ignored for \(Words.duration(quiet)))"
    }

    /// Whether a pause at `anchor` undoes a hint's resume: it comes within three stationary windows of the
    /// resume and four radii of where the last pause stood (a parked receiver's wander took the hint's probe for
    /// a departure). A real departure drives off and pauses later, elsewhere.
    func falseResume(
        _ resumed: (at: Instant, anchor: Location), anchor: Location, rule: StationaryRule, now: Instant
    ) -> Bool {
        now - resumed.at <= 3 * (rule.window ?? 120) && Geodesy.distance(from: resumed.anchor, to: anchor) <= 4 * rule.radius
    }
}
