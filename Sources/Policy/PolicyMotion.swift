import GPSModel

// Motion hints (docs/contract.md §4): what a hint does in each phase, what a sensor has shown (`HintQuiet`),
// and a pause with a sensor's probe schedule and false alarms.

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
    /// A motion hint (docs/contract.md §4, "Motion hint"): what it is worth depends on the phase, and with a
    /// sensor on what the sensor has shown (`HintQuiet`).
    mutating func motionHint(now: Instant) {
        guard var state = updates else { return }
        if state.hints.heard(at: now) { state.hints.lastHeard = now }
        state.hints.lastFired = now
        switch state.phase {
        case .paused(var pause) where configuration.motion.sensor:
            // A hint is not truth: it wakes a probe, and the probe's fix decides. Ignored while a probe runs
            // and for a while after hints that found the device still.
            guard !pause.probing, state.hints.heard(at: now) else { break }
            pause.byHint = true
            state.phase = .paused(pause)
            updates = state
            cancelTimer(.probe)
            probeDue(now: now)
            reason = "motion hint: probing for departure"
            return
        case .paused(let pause):
            resume(&state, from: pause, detail: "motion hint from an external sensor", now: now)
            reason = "motion hint: resuming updates"
        case .napping(var nap) where configuration.motion.sensor && nap.withoutSensor != nil:
            // The start the sensor vouched for. No false alarm is counted: a hint at a standstill ends the
            // sensor's word for this stop (`HintQuiet.vouchesStanding`), and a car slowing again after a start is
            // not one. A stop as long as a pause's window is a park without sky to pause in: up at once, and
            // the departure is watched out as a pause's is (`considerNap`).
            guard let without = nap.withoutSensor else { break }
            nap.withoutSensor = nil
            let longStop = state.hints.standingSince.map { now - $0 >= stationaryRule?.window ?? .infinity } ?? false
            // Else the wake is the first one the naps without the sensor would have had whose fix is still to
            // come: the track is as without the sensor. Waking at the hint instead cost a wake at each light; a
            // wake planned from the hint with the profile's acceleration came late (Munich's p95 staleness 131 m
            // against a 100 m bound), as cars pull away faster than they are planned to drive.
            let late = now - nap.since - without.firstFix - without.sleep
            let missed = without.period > 0 ? max((late / without.period).rounded(.up), 0) : 0
            let wake = nap.since + without.sleep + missed * without.period
            if longStop || wake <= now {
                if longStop { state.departure = Departure(anchor: nil, since: now) }
                wakeFromNap(state, now: now, reason: "motion hint: waking from a stop napped out on the sensor's word")
                return
            }
            if wake < nap.wakeAt {
                nap.wakeAt = wake
                schedule(.predictionWake, at: wake)
                reason = "motion hint: the stop's nap ends in \(Words.duration(wake - now))"
            }
            state.phase = .napping(nap)
        case .napping(let nap) where configuration.motion.sensor && nap.failedWhereItStood:
            // Where a stop had no sky the failed wakes back off to `maximumBackoff`, and the car drove off
            // before the next: on the day with a sensor (bench/day.sh) it was 76 m gone when the application
            // heard. The hint ends such a nap, as it wakes a pause's probe, and the departure is watched out
            // from the first fix. Naps planned from a fix are left alone: they are short at a standstill (18 s
            // on a u-blox 8) and already allow for a start, and ending them at each hint cost 2 % more on the
            // day for no departure seen sooner.
            guard state.hints.heard(at: now) else { break }
            state.departure = Departure(anchor: nil, since: now, byHint: true)
            wakeFromNap(state, now: now, reason: "motion hint: waking from a nap where no fix was found")
            return
        case .tracking where configuration.motion.sensor, .napping where configuration.motion.sensor:
            // A sensor's hints wake a pause; while up, the fixes decide. Restarting the window at each hint
            // kept a receiver whose sensor fires all the time (an idling engine, a faulty switch) from ever
            // pausing.
            break
        case .tracking, .napping:
            // Movement the fixes may not show yet (smooth, slow): start the stationary window again rather
            // than pause during it (the "deaf period" of Tracelet#85). A nap already assumes movement.
            state.detector.reset()
        case .waking, .sleeping, .pausedUntilRestart:
            // Core Location's exact behaviour when autoResume is off; duty cycles keep their own schedule.
            break
        }
        updates = state
    }

    /// The ignition's level from a line that says it (docs/contract.md §4, "Ignition"). Turned on, it is a hint
    /// (a probe at once, unless false alarms have quieted the hints), and a pause probes as without a sensor
    /// from then on, its next probe no later than the stationary rule's first interval: a line that flaps (a
    /// loose wire) costs what no sensor would, and a key turned during a quiet is still found. Turned off, the
    /// vehicle is parked: a pause leaves the departure to the line at once, probing only at the fallback
    /// interval. A pause with the engine running probes as without a sensor however long it lasts (a queue, a
    /// ferry's ramp), since the line will not tell when it moves on.
    mutating func ignition(on: Bool, now: Instant) {
        guard engineRunning != on else { return }
        engineRunning = on
        guard updates != nil else { return }
        if on {
            motionHint(now: now)
            reason = "ignition on" + (reason.map { ", \($0)" } ?? "")
        } else {
            reason = "ignition off"
        }
        guard configuration.motion.sensor, var state = updates, case .paused(var pause) = state.phase, !pause.probing
        else { return }
        let rule = configuration.stationary[state.configuration.activityType]
        let interval = on ? rule.probeInterval : configuration.motion.fallbackProbeInterval
        guard on ? pause.probeInterval > interval : pause.probeInterval < interval else { return }
        pause.probeInterval = interval
        state.phase = .paused(pause)
        updates = state
        schedule(.probe, at: now + interval)
        reason = (on ? "ignition on, hints quiet after false alarms" : "ignition off: the departure is left to the line")
            + "; next probe in \(Words.duration(interval))"
    }

    /// Whether the sensor says the device still stands, so a stop may be napped out on its word: the engine
    /// off, or else a sensor that heralded the last two starts and has not fired since (`HintQuiet`). With the
    /// engine running, never: the line will not tell when the vehicle pulls away.
    func sensorVouchesStanding(_ hints: HintQuiet, now: Instant) -> Bool {
        guard configuration.motion.sensor else { return false }
        if let engineRunning { return !engineRunning && hints.standingSince != nil }
        return hints.vouchesStanding(at: now)
    }

    /// A hint ends the nap in `state`: the receiver wakes now, as at the nap's own end.
    private mutating func wakeFromNap(_ state: Updates, now: Instant, reason: String) {
        cancelTimer(.predictionWake)
        updates = state
        predictionWake(now: now)
        self.reason = reason
    }

    /// After a probe that found the device still: the next probe's interval (with a sensor, the fallback; else
    /// grown by the stationary rule) and, for a hint's probe, the false alarm counted. Words for the reason.
    /// The fallback is for a sensor gone silent: one that heralded the device's last two starts was working
    /// when it parked, as is an ignition line that says the engine is off, and the fallback doubles at each such
    /// probe up to four times the interval (the car's day with a sensor, bench/day.sh: 1.28 to 1.24 times the
    /// oracle; a dead sensor, which heralds nothing, keeps the interval and its departures' latency).
    mutating func stillAfterProbe(_ pause: inout Pause, _ hints: inout HintQuiet, rule: StationaryRule, now: Instant)
        -> String
    {
        let fallback = configuration.motion.fallbackProbeInterval
        pause.probeInterval =
            pauseTrustsSensor(hints, pausedFor: now - pause.since)
            ? (hints.heraldedStarts >= 2 || engineRunning == false
                ? min(pause.probeInterval * 2, 4 * fallback) : fallback)
            : min(pause.probeInterval * rule.probeGrowth, rule.maximumProbeInterval)
        return falseAlarm(&pause, &hints, now: now)
    }

    /// Whether a pause leaves the departure to the sensor, probing only at its fallback interval: when the
    /// sensor heralded the device's last two starts (as for a stop slept out on its word), or once the pause is
    /// `unheraldedPauseProbing` old. Until then a pause probes as without a sensor. With the ignition's level
    /// known, the engine alone decides (`ignition(on:now:)`). An ignition line read for its edges fires as
    /// the engine starts and not at a trip's lights, so a pause in a queue with the engine running follows a
    /// start it never saw, and its departure gives no hint: with an ignition modelled on the car's day
    /// (bench/day.sh --sensor ignition:2:180), Munich's queue was left unseen for 1.4 km (5.6 km with the
    /// engine taken to run through 10 min stands). A sensor that heralds the starts costs nothing more.
    func pauseTrustsSensor(_ hints: HintQuiet, pausedFor: Double) -> Bool {
        guard configuration.motion.sensor else { return false }
        if let engineRunning { return !engineRunning }
        return hints.heraldedStarts >= 2 || pausedFor >= Self.unheraldedPauseProbing
    }

    /// Seconds a pause after a start the sensor did not herald probes as without a sensor: queues, road works
    /// and level crossings are over within it; a park outlasts it.
    static let unheraldedPauseProbing = 600.0

    /// A hint's probe that found the device inside the radius but past half of it from the anchor, and farther
    /// than any hint's probe of this pause before: a creep the radius has not yet told from wander (an aircraft
    /// taxiing at walking pace, a queue at a ferry). The hint was no false alarm, so hints stay heard and the
    /// next one probes again. Wander does not keep growing: a still receiver's next probe counts a false alarm
    /// as before, and a sensor that always fires pays a probe more for each new farthest wander (the car's day
    /// with one, bench/day.sh --sensor 2:0:3600: parked 2.54 to 3.00 mAh). With a sensor 2 s late, the aircraft
    /// descent's taxi (bench/day.sh --drive) was found only when the plane left the radius, its hints quieted:
    /// staleness p95 189 m, over the 100 m bound; 80 m with this rule. Nil when the probe showed no such movement.
    mutating func displacedAfterProbe(_ pause: inout Pause, by distance: Double, rule: StationaryRule) -> String? {
        guard pause.byHint, distance > rule.radius / 2, distance > pause.displaced else { return nil }
        pause.displaced = distance
        pause.byHint = false
        return ", but \(Words.distance(distance)) from where it paused: hints stay heard"
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
