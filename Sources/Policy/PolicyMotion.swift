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

    /// Whether a hint at `now` is heard: no quiet, or it has ended.
    func heard(at now: Instant) -> Bool { until.map { now >= $0 } ?? true }

    /// Whether the sensor has said within `window` seconds of `now` that the device moves.
    func movingRecently(at now: Instant, window: Double) -> Bool { lastHeard.map { now - $0 <= window } ?? false }
}

extension Policy {
    /// After a probe that found the device still: the next probe's interval (with a sensor, the fallback; else
    /// grown by the stationary rule) and, for a hint's probe, the false alarm counted. Words for the reason.
    mutating func stillAfterProbe(_ pause: inout Pause, _ hints: inout HintQuiet, rule: StationaryRule, now: Instant)
        -> String
    {
        pause.probeInterval =
            configuration.motion.sensor
            ? configuration.motion.fallbackProbeInterval
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
