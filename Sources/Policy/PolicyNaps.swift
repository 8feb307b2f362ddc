import GPSModel

// Predictive naps: when the policy lets the receiver down between fixes it expects, and how long. Part of `Policy` (Policy.swift holds its state and the standard updates).
extension Policy {
    /// What a continuous level runs the receiver at while tracking.
    func trackingRegime(_ requested: UpdatesConfiguration) -> ReceiverRegime {
        requested.desiredAccuracy == .nearestTenMeters && receiver.reaches(.powerSave)
            ? .powerSave : .continuous
    }

    /// The longest gap between fixes that does not restart the stationary window: naps, and the sleeps after
    /// wakes that found no fix, leave gaps of their own length, and a device still within the radius after
    /// one has not been seen leaving (a weak-signal static receiver was kept from pausing for minutes). Such a
    /// gap counts as stillness only up to `maximumAge` (`StationaryDetector`): what was not observed is not.
    var stationaryGap: Double {
        let prediction = configuration.prediction
        guard prediction.enabled else { return configuration.maximumAge }
        let longestSleep = max(prediction.maximumSleep, configuration.acquisition.maximumBackoff)
        return configuration.maximumAge + longestSleep + receiver.timeToFirstFix.warm
    }

    /// After an acceptable fix while tracking: how long until the position could be `bound` from the location
    /// the application has (the last delivered one: a fix the distance filter held back counts with its
    /// distance from it), at the recent speed and the rule's acceleration. The fix's own error is not allowed
    /// for: it is the same whether the receiver sleeps or not, and the application has it as
    /// `horizontalAccuracy`; staleness is how far the device moved since (docs/contract.md §11).
    /// Sleeps when that leaves room for a nap of at least `minimumSleep` before a wake one time to first fix
    /// early, and the nap (down current, then acquisition current for the time to first fix) costs less
    /// charge than staying up for as long.
    mutating func considerNap(_ state: inout Updates, after location: Location, now: Instant) {
        let rule = configuration.prediction
        guard rule.enabled, let speed = recentSpeed else { return }
        let bound = rule.effectiveBound
        // Just resumed from a pause: no nap until the track has left the anchor by the bound. A nap planned
        // from a standing start lets the car pull away by up to the bound before its wake, so the application
        // learned of the departure that much late (bench/day.sh: 44 m at p50 with a motion sensor, 27 m
        // without those naps); staying up costs the few seconds it takes to leave. A fix slower than the
        // activity's moving speed (a probe that landed out in a parked receiver's wander, a crawl) ends it:
        // staying up for the wander cost a sixth more parked with probes of 1 to 10 minutes.
        // A hint's wake is watched out from its first fix (`Departure.anchor`).
        if state.departure?.anchor == nil { state.departure?.anchor = location }
        if let departure = state.departure, let anchor = departure.anchor {
            let moving = speed >= (stationaryRule?.movingSpeed ?? 0)
            if now - departure.since < Departure.longest, moving, Geodesy.distance(from: anchor, to: location) <= bound
            {
                return
            }
            // A hint's wake that found the device as slow as before: the hints are quieted, as after a pause's
            // false alarm, so a sensor that fires all the time (an idling engine) does not end every nap.
            if departure.byHint, !moving { _ = quietHints(&state.hints, now: now) }
            state.departure = nil
        }
        let offset = state.lastDelivered.map { Geodesy.distance(from: $0, to: location) } ?? 0
        let reach = rule.secondsToReach(bound - offset, speed: speed)
        // Standing, with a motion sensor that fired for the last two starts and is heard: the stop is napped out
        // on its word. Naps sized for a start from standstill (18 s on a u-blox 8) woke three times a minute
        // at each red light to find the car where it was; the sensor's hint keeps the one of them that would
        // have seen the start (`motionHint`), so the track is as without the sensor, less the wakes that found
        // nothing. The nap is sized for a start the sensor misses to be seen within `missedStartBounds` bounds.
        let onSensor = sensorVouchesStanding(state.hints, now: now)
        // The wake's fix comes at the receiver's first epoch after the time to first fix: up to one epoch
        // after `reach`. Not allowed for: the bound is judged at p95, and a second at each wake costs more
        // than the rare overshoot it prevents (bench/policy.sh).
        let horizon = onSensor ? rule.secondsToReach(Self.missedStartBounds * bound - offset, speed: speed) : reach
        // The way down depends on the nap's length, and the start after it on the way down.
        var sleep = min(horizon - receiver.timeToFirstFix.hot, rule.maximumSleep)
        let down = receiver.cheaperDownRegime(forSleepOf: max(sleep, 0))
        let firstFix = receiver.timeToFirstFix(afterDown: max(sleep, 0), in: down)
        sleep = min(horizon - firstFix, rule.maximumSleep)
        guard sleep >= rule.minimumSleep else { return }
        let napCharge = receiver.current(in: down) * sleep + receiver.current.acquisition * firstFix
        let upCharge = receiver.current(in: trackingRegime(state.configuration)) * (sleep + firstFix)
        guard napCharge < upCharge else { return }
        var nap = Nap(since: now, wakeAt: now + sleep)
        if onSensor {
            // The naps this stop would have had without the sensor: their length and their cadence.
            let without = min(reach - firstFix, rule.maximumSleep)
            nap.withoutSensor = (sleep: max(without, 0), firstFix: firstFix, period: max(without, 0) + firstFix)
        }
        state.phase = .napping(nap)
        state.detector.expectDark(from: now, until: now + sleep + firstFix)
        schedule(.predictionWake, at: now + sleep)
        let motion = speed < 0.5 ? "stopped" : "moving \(Words.speed(speed))"
        reason =
            onSensor
            ? "\(motion), the motion sensor fired at the last starts: sleeping \(Words.duration(sleep)) or until it fires"
            : "\(motion): \(Words.distance(bound)) bound not reachable for \(Words.duration(reach)); sleeping \(Words.duration(sleep))"
    }

    /// How many staleness bounds a start the motion sensor misses may go unseen in a stop napped out on its
    /// word: the worst staleness the profiles' goals allow (docs/policy.md, "Motion hints"). An unbounded nap
    /// left a missed start a kilometre stale.
    static let missedStartBounds = 3.0

    mutating func predictionWake(now: Instant) {
        guard var state = updates, case .napping(let nap) = state.phase else { return }
        state.phase = .tracking
        let timeout = wakeTimeout(afterDown: now - nap.since, failures: state.failures, now: now)
        state.wakeExtra = timeout - wakeTimeout(afterDown: now - nap.since, failures: 0, now: now)
        state.napWake = NapWake(start: now, timeout: timeout)
        updates = state
        schedule(.acquisitionTimeout, at: now + timeout)
        reason = "waking after a \(Words.duration(now - nap.since)) nap for the next fix"
    }

    /// A nap's wait ran out. Fixes came, too inaccurate to deliver, and they show the device moving: the
    /// receiver has sky and the track is going stale, so the wake waits on for an accurate fix (a departure
    /// under a bad sky), up to acquisition.timeout in all, rather than back off as from a tunnel.
    mutating func napWakeTimedOut(_ state: inout Updates, _ wake: NapWake, now: Instant) {
        if state.failures == 0, sensorSaysMoving(state, now: now), now - wake.start + wake.timeout <= Self.tunnelWait {
            // The device was last moving and the motion sensor still says so: no sky, not a stop (a tunnel, an
            // underpass, a gap in the recording). Up, as a tracking receiver stays up in a tunnel, until the sky
            // comes back or the sensor falls quiet. Backing off here left Munich's car 977 m stale with a
            // sensor, its wakes falling in a 41 s gap while it drove on (docs/policy.md, "Motion hints"). Only
            // the first wake of a series: a sensor that never stops firing (an idling engine in an underground
            // car park) must not keep every later wake up for as long.
            schedule(.acquisitionTimeout, at: now + wake.timeout)
            reason = "no fix yet, the motion sensor says the device moves: waiting \(Words.duration(wake.timeout)) more"
            return
        }
        guard wake.sawMotion, now - wake.start + wake.timeout <= configuration.acquisition.timeout else {
            napWakeFailed(&state, waited: wake.timeout, now: now)
            return
        }
        state.napWake?.sawMotion = false
        schedule(.acquisitionTimeout, at: now + wake.timeout)
        reason = "fixes show the device moving, none accurate enough yet: waiting \(Words.duration(wake.timeout)) more"
    }

    /// After an acceptable fix while tracking with naps on, the receiver staying up (too fast for a nap, or
    /// watching a departure out). A receiver that tracks gives a fix each epoch. Without a watch, one that
    /// lost the sky stayed up at tracking current for as long as the outage lasted (a whole night parked
    /// underground), since no fix came to nap or pause it: after `lostFixWait` it fails as a nap's wake does
    /// and backs off. One timer, moved on only when it fires early.
    mutating func watchTracking(_ state: inout Updates, now: Instant) {
        guard configuration.prediction.enabled else { return }
        state.stretch.observe(at: now)
        if timers[.acquisitionTimeout] == nil {
            schedule(.acquisitionTimeout, at: now + lostFixWait(state.stretch))
        }
    }

    /// Seconds without an acceptable fix after which a tracking receiver counts as without sky: a wake's whole
    /// `acquisition.timeout` where the device was last seen standing, and `tunnelWait` where it was moving.
    /// A receiver kept up reacquires as soon as the sky comes back; one sent down waits for its next wake
    /// while the vehicle drives on (a 60 s watch left the descent's aircraft still waking as its 72 s without a
    /// fix ended: worst staleness 2,531 m where it was 298 m, docs/policy.md). Twice the receiver's own cadence
    /// if that is longer (a MediaTek's periodic mode gives a fix each 15 s).
    func lostFixWait(_ stretch: TrackingStretch) -> Double {
        let moving = (recentSpeed ?? 0) >= (stationaryRule?.movingSpeed ?? 0)
        return max(moving ? Self.tunnelWait : configuration.acquisition.timeout, 2 * stretch.longestGap)
    }

    /// With a motion sensor: the device was last seen moving and a hint came within `sensorMotionWindow`.
    func sensorSaysMoving(_ state: Updates, now: Instant) -> Bool {
        configuration.motion.sensor && (recentSpeed ?? 0) >= (stationaryRule?.movingSpeed ?? 0)
            && state.hints.movingRecently(at: now, window: Self.sensorMotionWindow)
    }

    /// How long a hint counts as the sensor saying the device moves. A vibration switch on a GPIO line gives a
    /// hint every `debounce` while the motion lasts; a minute allows for one that fires far less often. An
    /// ignition line gives one at the start only, so it never keeps a wake up here.
    static let sensorMotionWindow = 60.0

    /// Longer than a road tunnel takes to drive through (the longest, 25 km, take about 20 min at 80 km/h).
    static let tunnelWait = 1800.0

    /// The lost-fix watch fired: early (fixes came since it was set) it moves on to the last fix's deadline;
    /// else the stretch ends as a nap's wake that found nothing.
    mutating func trackingWatchDue(_ state: inout Updates, now: Instant) {
        guard let last = state.stretch.lastFix else { return }
        let wait = lostFixWait(state.stretch)
        guard now - last >= wait - 0.001 else {
            schedule(.acquisitionTimeout, at: last + wait)
            return
        }
        state.stretch = TrackingStretch()
        state.wakeExtra = 0
        // The series' sleeps grow from what a nap's wake waits, not from the long watch.
        napWakeFailed(
            &state, waited: configuration.acquisition.timeout(expecting: receiver.timeToFirstFix.hot), now: now,
            what: "no fix for \(Words.duration(now - last)) while tracking")
    }

    /// A nap's wake brought no acceptable fix in time: down again as long as the wake waited, doubled at each
    /// failure in a row (up to `acquisition.maximumBackoff`), as a duty cycle backs off (docs/contract.md §3). A short
    /// first sleep: the outage may be a bridge or a burst of bad fixes, and the device may be moving.
    mutating func napWakeFailed(
        _ state: inout Updates, waited: Double, now: Instant, what: String = "no fix after a nap's wake"
    ) {
        state.napWake = nil
        if !receiverUnreachable { state.failures += 1 }
        if state.failures <= 1 { state.napWakeBase = waited }
        // The sleeps grow from the series' first wait; a longer wait for a cold start does not lengthen them.
        var sleep = max(backoff(base: state.napWakeBase ?? waited, failures: state.failures - 1) - state.wakeExtra, 0)
        state.wakeExtra = 0
        // A hint's wake that found no fix quiets the hints, so a sensor that fires all the time does not keep
        // the receiver up where there is no sky.
        if state.departure?.byHint == true {
            _ = quietHints(&state.hints, now: now)
            state.departure = nil
        }
        let stood = (recentSpeed ?? 0) < (stationaryRule?.movingSpeed ?? 0)
        if stood, sensorVouchesStanding(state.hints, now: now) {
            // No sky where the device stands, and a sensor that has earned its word says it has not moved: down
            // as a pause with a sensor is, until its hint (which ends the nap) or the fallback probe. Retrying
            // every two minutes spent a quarter hour's stand on the day with a sensor at acquisition current.
            sleep = max(sleep, configuration.motion.fallbackProbeInterval)
        }
        state.phase = .napping(Nap(since: now, wakeAt: now + sleep, failedWhereItStood: stood))
        let firstFix = receiver.timeToFirstFix(afterDown: sleep, in: receiver.cheaperDownRegime(forSleepOf: sleep))
        state.detector.expectDark(from: now, until: now + sleep + firstFix)
        acquisitionFailed(
            "\(what) (\(failureWords(state.failures))); next attempt in \(Words.duration(sleep))",
            retry: .predictionWake, at: now + sleep)
    }
}
