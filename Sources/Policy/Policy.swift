import GPSModel

/// The power policy of docs/contract.md §2–§8 as a sans-I/O state machine: each event comes in stamped with the
/// monotonic `now`, and the answer is a list of actions for the runtime to execute in order. It never reads a
/// clock, sleeps or does I/O, so live and replay run the same code and a replay is deterministic.
///
/// Four activities share one receiver (docs/contract.md §8): standard updates (with deferral), significant-change
/// monitoring and single-shot requests. Each says what it needs; the receiver runs at the most demanding.
public struct Policy: Sendable {
    public let configuration: PolicyConfiguration
    /// The receiver model, its regimes narrowed to those receiver power control offers (`regimesOffered`).
    public internal(set) var receiver: ReceiverModel
    /// The model as configured, before any narrowing.
    public let configuredReceiver: ReceiverModel
    /// The regime last asked for (nil before the first `setRegime`).
    public internal(set) var regime: ReceiverRegime?
    /// The newest fix that passed the checks every mode applies (docs/contract.md §2), unfiltered for accuracy.
    public internal(set) var lastKnownLocation: Location?

    var filter: FixFilter
    var updates: Updates?
    var deferral: Deferral?
    var significantChange: SignificantChange?
    var requests: [RequestID: PendingRequest] = [:]
    /// Deadlines of the timers the runtime holds for us; a firing not matching one is stale and ignored.
    var timers: [TimerID: Instant] = [:]
    /// The previous admitted fix and when it came, to estimate speed when a fix carries none.
    var previousFix: (location: Location, at: Instant)?
    var recentSpeed: Double?
    /// Between `receiverLost` and `receiverBack` (gpsd down, the receiver unplugged): a wake that finds no fix
    /// then says nothing about the sky, so it is not counted as a failure and no backoff grows from it.
    var receiverUnreachable = false
    /// The ignition's level, from a line that says it (`ignition(on:now:)`); nil from a sensor that gives hints
    /// only. Kept across updates: the line's level is read once, as the run starts.
    var engineRunning: Bool?

    // Scratch for one `handle` call.
    var actions: [PolicyAction] = []
    var reason: String?

    public init(configuration: PolicyConfiguration = PolicyConfiguration(), receiver: ReceiverModel = .genericNMEA) {
        self.configuration = configuration
        self.receiver = receiver
        self.configuredReceiver = receiver
        self.filter = FixFilter(maximumAge: configuration.maximumAge)
    }

    /// Whether standard updates are running (paused counts as running, as in Core Location).
    public var isUpdating: Bool { updates != nil }
    /// Whether updates are paused for stationarity.
    public var isPaused: Bool {
        switch updates?.phase {
        case .paused, .pausedUntilRestart: true
        default: false
        }
    }
    /// The running updates' configuration, nil when updates are stopped.
    public var updatesConfiguration: UpdatesConfiguration? { updates?.configuration }
    /// Whether updates are in a predictive nap (`PolicyConfiguration.prediction`): the receiver down until
    /// shortly before the bound could be crossed.
    public var isNapping: Bool {
        if case .napping = updates?.phase { return true }
        return false
    }
    /// Whether significant-change monitoring is on.
    public var isMonitoringSignificantChanges: Bool { significantChange != nil }
    /// Whether a deferral is active.
    public var isDeferring: Bool { deferral != nil }
    /// Locations a deferral holds right now.
    public var heldLocations: [Location] { deferral?.held ?? [] }
    /// Requests not answered yet.
    public var pendingRequests: [RequestID] { requests.keys.sorted() }

    public mutating func handle(_ event: PolicyEvent, now: Instant) -> [PolicyAction] {
        actions = []
        reason = nil
        var forceRegime = false
        switch event {
        case .fix(let location): handleFix(location, now: now)
        case .timerFired(let id): handleTimer(id, now: now)
        case .startUpdates(let requested): startUpdates(requested, now: now)
        case .stopUpdates: stopUpdates(detail: "updates stopped by the application")
        case .requestLocation(let id, let timeout, let desiredAccuracy):
            requestLocation(id, timeout: timeout, desiredAccuracy: desiredAccuracy, now: now)
        case .cancelRequest(let id): finishRequest(id, .requestFailed(id, .canceled), detail: "request \(id) cancelled")
        case .allowDeferredUpdates(let distance, let timeout):
            allowDeferredUpdates(untilTraveled: distance, timeout: timeout, now: now)
        case .disallowDeferredUpdates:
            finishDeferral(.canceled, detail: "deferral disallowed by the application")
        case .startSignificantChange: startSignificantChange(now: now)
        case .stopSignificantChange: stopSignificantChange()
        case .motionHint: motionHint(now: now)
        case .ignition(let on): ignition(on: on, now: now)
        case .flush: flushDeferral()
        case .receiverLost(let detail):
            receiverUnreachable = true
            emit(.receiverLost, detail.isEmpty ? "receiver lost" : detail)
        case .receiverBack:
            receiverUnreachable = false
            emit(.receiverBack, "receiver back")
            // A receiver that was unplugged or whose gpsd restarted is in its power-on state: say again what
            // it should do.
            forceRegime = true
            if let regime { reason = "receiver back: restoring \(regime.rawValue)" }
        case .regimesOffered(let offered):
            // Power control found what this receiver really reaches (identified, or a regime had no effect).
            receiver.supportedRegimes = configuredReceiver.supportedRegimes.intersection(offered)
            reason = "power control offers " + ReceiverRegime.allCases.reversed().filter(offered.contains)
                .map(\.rawValue).joined(separator: ", ")
        case .restoreLastKnownLocation(let location):
            if lastKnownLocation == nil { lastKnownLocation = location }
            filter.floor = max(filter.floor ?? location.timestamp, location.timestamp)
        case .shutdown: shutdown()
        }
        reconcileRegime(now: now, force: forceRegime)
        let result = actions
        actions = []
        reason = nil
        return result
    }

    // MARK: - Fixes

    mutating func handleFix(_ location: Location, now: Instant) {
        if let problem = filter.admit(location, now: now) {
            actions.append(.discard(location, problem))
            return
        }
        if let offset = filter.takeTimeChange() {
            let way = offset > 0 ? "ahead" : "back"
            emit(
                .receiverTimeChanged(offset: offset),
                "the receiver's time moved \(Words.duration(abs(offset))) \(way) of what its earlier fixes and the"
                    + " monotonic clock predicted, and \(FixFilter.agreeingFixes) fixes agree: taken as its time")
        }
        noteSpeed(location, now: now)
        lastKnownLocation = location
        answerRequests(with: location)
        significantChangeFix(location, now: now)
        updatesFix(location, now: now)
    }

    mutating func noteSpeed(_ location: Location, now: Instant) {
        if let speed = location.speed, speed.isFinite, speed >= 0 {
            recentSpeed = speed
        } else if let previous = previousFix {
            let seconds = location.timestamp.interval(since: previous.location.timestamp)
            if seconds > 0 { recentSpeed = Geodesy.distance(from: previous.location, to: location) / seconds }
        }
        previousFix = (location, now)
    }

    // MARK: - Standard updates (docs/contract.md §3, §4)

    enum Phase: Sendable {
        /// Continuous levels: the receiver runs and every acceptable fix is a candidate.
        case tracking
        /// Duty-cycled levels: powered up, waiting for the first acceptable fix.
        case waking
        /// Duty-cycled levels: powered down until `dutyCycleWake`.
        case sleeping
        /// Stationary: powered down, probing for departure.
        case paused(Pause)
        /// Stationary with `autoResume: false`: nothing until updates are started again (Core Location).
        case pausedUntilRestart(anchor: Location)
        /// Continuous levels with prediction on: powered down until `predictionWake`, because the device
        /// cannot have moved the bound before the fix that wake brings.
        case napping(Nap)
    }

    struct Nap: Sendable {
        var since: Instant
        var wakeAt: Instant
        /// After a wake that found no fix, the device last seen slower than the activity's moving speed (no
        /// sky where it stood: a car park, a garage): a motion sensor's hint ends the nap (`motionHint`).
        var failedWhereItStood = false
        /// A stop napped out on the motion sensor's word (`considerNap`): the naps it would have had without
        /// the sensor, whose wake after a hint is kept (`motionHint`).
        var withoutSensor: (sleep: Double, firstFix: Double, period: Double)?
    }

    struct Pause: Sendable {
        var anchor: Location
        var since: Instant
        var probeInterval: Double
        var probing: Bool
        /// The probe's fix was faster than the moving speed but not driving: up for one more fix to tell.
        var confirming = false
        /// Consecutive probes without a fix: each doubles (`acquisition.backoffFactor`) the wait before the next.
        var failures = 0
        /// Seconds the current probe waits for its fix, and of those beyond the usual for a cold start
        /// (`coldRetry`): they come off the wait before the next probe if it fails, keeping the cadence.
        var wait = 0.0
        var extraWait = 0.0
        /// With a motion sensor: this probe was woken by a hint.
        var byHint = false
        /// With a motion sensor: the farthest a hint's probe has found the device from the anchor, less its
        /// accuracy, once past half the radius (`displacedAfterProbe`).
        var displaced = 0.0
    }

    struct Updates: Sendable {
        var configuration: UpdatesConfiguration
        var phase: Phase
        /// The last location delivered (before coarsening), for the distance filter and deferral distance.
        var lastDelivered: Location?
        var detector = StationaryDetector()
        /// nearestTenMeters: the warm-up window's start and its best fix worse than 10 m.
        var warmUpStart: Instant
        var warmUpBest: Location?
        /// Duty cycle, or predictive naps: consecutive wakes without an acceptable fix.
        var failures = 0
        /// Woken from a predictive nap with no acceptable fix yet (`acquisitionTimeout` is running). Nil
        /// otherwise.
        var napWake: NapWake?
        /// Duty cycle: the seconds the current wake waits for its fix.
        var wakeWait = 0.0
        /// Predictive naps: the wait of the first failed wake in a row, which the series' sleeps grow from.
        var napWakeBase: Double?
        /// Seconds the current wake (nap or duty cycle) waits beyond the usual for a cold start (`coldRetry`);
        /// they come off the sleep after it if it fails, so the series' cadence stays as it was.
        var wakeExtra = 0.0
        /// With a motion sensor: the hints that proved false, kept across pauses (a false resume ends one).
        var hints = HintQuiet()
        /// Tracking between naps: the fixes of this stretch up, which the lost-fix watch times from
        /// (`watchTracking`).
        var stretch = TrackingStretch()
        /// Resumed from a pause: where the device stood and when it resumed, until a fix lies the prediction's
        /// bound from there (`considerNap`).
        var departure: Departure?
    }

    /// A predictive nap's wake waiting for its first acceptable fix.
    struct NapWake: Sendable {
        var start: Instant
        /// The seconds each wait lasts.
        var timeout: Double
        /// A fix too inaccurate to deliver showed the device moving since the wait was last set
        /// (`napWakeTimedOut` then waits on instead of failing).
        var sawMotion = false
    }

    /// Tracking with naps on: the acceptable fixes since the receiver last came up, for the lost-fix watch.
    struct TrackingStretch: Sendable {
        var lastFix: Instant?
        /// The longest time between two acceptable fixes of the stretch: the receiver's own cadence (a
        /// MediaTek's periodic mode gives a fix every 15 s).
        var longestGap = 0.0

        mutating func observe(at now: Instant) {
            if let lastFix { longestGap = max(longestGap, now - lastFix) }
            lastFix = now
        }
    }

    /// A departure from a pause, watched out without naps.
    struct Departure: Sendable {
        /// Where the device stood; nil until the first fix after a hint ended a nap (`motionHint`), which is
        /// then the anchor: the last fix came before the outage and may be far off.
        var anchor: Location?
        var since: Instant
        /// A motion hint ended a nap for it: a first fix still slower than the moving speed makes the hint a
        /// false alarm (`considerNap`), and so does a wake that finds no fix (`napWakeFailed`).
        var byHint = false
        /// Seconds the watch lasts at most: a resume that goes nowhere at speed (circling a car park) is left
        /// to the naps and the stationary detector after this.
        static let longest = 60.0
    }

    var stationaryRule: StationaryRule? {
        updates.map { configuration.stationary[$0.configuration.activityType] }
    }

    mutating func startUpdates(_ requested: UpdatesConfiguration, now: Instant) {
        var requested = requested
        // Values the caller should have rejected with `validate()` are read as "not set" rather than trusted.
        if let filter = requested.distanceFilter, !(filter.isFinite && filter > 0) { requested.distanceFilter = nil }
        if let limit = requested.accuracyLimit, !(limit.isFinite && limit > 0) { requested.accuracyLimit = nil }

        let lastDelivered = updates?.lastDelivered
        if let previous = updates {
            cancelUpdatesTimers()
            switch previous.phase {
            case .paused, .pausedUntilRestart: emit(.resumed, "updates started again by the application")
            default: break
            }
        }
        var fresh = Updates(configuration: requested, phase: .tracking, lastDelivered: lastDelivered, warmUpStart: now)
        if requested.desiredAccuracy.isDutyCycled {
            fresh.phase = .waking
            fresh.wakeWait = fullWakeTimeout(afterDown: 0, failures: 0, now: now)
            schedule(.acquisitionTimeout, at: now + fresh.wakeWait)
            reason = "updates started: waking for one \(requested.desiredAccuracy.rawValue) fix"
        } else {
            reason = "updates started at \(requested.desiredAccuracy.rawValue) accuracy"
        }
        updates = fresh
        // A running deferral survives a reconfiguration only if the new settings still allow it (docs/contract.md §5).
        if deferral != nil, let error = deferralError(for: requested) {
            finishDeferral(error.0, detail: "updates reconfigured: \(error.1)")
        }
    }

    mutating func stopUpdates(detail: String) {
        guard updates != nil else { return }
        if deferral != nil { finishDeferral(.notUpdatingLocation, detail: detail) }
        cancelUpdatesTimers()
        updates = nil
        reason = detail
    }

    mutating func cancelUpdatesTimers() {
        for id in [TimerID.dutyCycleWake, .acquisitionTimeout, .probe, .probeTimeout, .predictionWake] {
            cancelTimer(id)
        }
    }

    mutating func updatesFix(_ location: Location, now: Instant) {
        guard var state = updates else { return }
        let limit = state.configuration.effectiveAccuracyLimit
        let accuracyProblem = FixFilter.accuracyProblem(location, limit: limit)
        if accuracyProblem == nil, configuration.motion.sensor, let speed = recentSpeed {
            let rule = configuration.stationary[state.configuration.activityType]
            state.hints.observe(speed: speed, movingSpeed: rule.movingSpeed, at: now)
        }

        // A fix while napping comes because another activity keeps the receiver up (or the receiver was
        // slow to stop): it costs nothing more, so the nap ends early and the fix is used like any other.
        if case .napping = state.phase, accuracyProblem == nil {
            cancelTimer(.predictionWake)
            state.phase = .tracking
        }

        switch state.phase {
        case .tracking:
            guard accuracyProblem == nil else {
                if let speed = location.speed, let rule = stationaryRule, speed >= rule.movingSpeed {
                    state.napWake?.sawMotion = true
                }
                updates = state
                warmUpFallback(location, problem: accuracyProblem, now: now)
                return
            }
            let napWake = state.napWake != nil
            if napWake {
                cancelTimer(.acquisitionTimeout)
                state.napWake = nil
            }
            // The first acceptable fix ends a failure series, also one that came during a nap after a failure.
            state.failures = 0
            state.napWakeBase = nil
            let held = deliver(location, state: &state, now: now)
            if napWake { emitIfHeld(held) }
            if let rule = stationaryRule {
                let stationaryFor = state.detector.observe(
                    location, now: now, rule: rule, maximumGap: stationaryGap, countedGap: configuration.maximumAge)
                if state.configuration.pausesAutomatically, let window = rule.window, stationaryFor >= window,
                    let anchor = state.detector.anchor
                {
                    pause(&state, anchor: anchor, stationaryFor: stationaryFor, rule: rule, now: now)
                }
            }
            if case .tracking = state.phase { considerNap(&state, after: location, now: now) }
            if case .tracking = state.phase {
                watchTracking(&state, now: now)
            } else if state.stretch.lastFix != nil {
                state.stretch = TrackingStretch()
                cancelTimer(.acquisitionTimeout)
            }
        case .waking:
            if let accuracyProblem {
                actions.append(.discard(location, accuracyProblem))
                break
            }
            emitIfHeld(deliver(location, state: &state, now: now))
            cancelTimer(.acquisitionTimeout)
            state.failures = 0
            let interval = dutyCycleInterval(state.configuration)
            state.phase = .sleeping
            schedule(.dutyCycleWake, at: now + interval)
            reason = "got a \(state.configuration.desiredAccuracy.rawValue) fix; next in \(Words.duration(interval))"
        case .sleeping, .pausedUntilRestart, .napping:
            // Fixes taken for another activity: this level asked for none now (an inaccurate one while napping).
            break
        case .paused(var pause):
            guard accuracyProblem == nil else {
                if pause.probing, let accuracyProblem { actions.append(.discard(location, accuracyProblem)) }
                break
            }
            let rule = configuration.stationary[state.configuration.activityType]
            let distance = Geodesy.distance(from: pause.anchor, to: location)
            let allowance = FixFilter.accuracy(of: location) ?? 0
            let outside = distance - allowance > rule.radius
            // A probe can land near the anchor while the device drives (a car turning round, circling a car
            // park): a speed of twice the noise threshold is driving, not the ~2 m/s a still receiver reports.
            // A speed between the two is the first seconds of a departure as often as noise: the receiver
            // stays up for the next fix, and a second one over the moving speed resumes. Waiting for the
            // departure to reach twice the speed, or the radius, cost up to a probe interval more.
            let speed = location.speed ?? 0
            let driving = speed > 2 * rule.movingSpeed || (pause.confirming && speed > rule.movingSpeed)
            if outside || driving {
                let detail =
                    outside
                    ? "probe fix \(Words.distance(distance)) from anchor"
                    : "probe fix moving at \(Words.speed(speed)), \(Words.distance(distance)) from anchor"
                resume(&state, from: pause, detail: detail, now: now)
                reason = detail
                if pause.byHint { state.hints.resumed = (now, pause.anchor) }
                _ = state.detector.observe(
                    location, now: now, rule: rule, maximumGap: stationaryGap, countedGap: configuration.maximumAge)
                deliver(location, state: &state, now: now)
            } else if pause.probing, !pause.confirming, speed > rule.movingSpeed {
                pause.confirming = true
                state.phase = .paused(pause)
                reason =
                    "probe fix moving at \(Words.speed(speed)), \(Words.distance(distance)) from anchor; confirming with the next fix"
            } else if pause.probing {
                cancelTimer(.probeTimeout)
                pause.probing = false
                pause.confirming = false
                pause.failures = 0
                let hint =
                    displacedAfterProbe(&pause, by: distance - allowance, rule: rule)
                    ?? stillAfterProbe(&pause, &state.hints, rule: rule, now: now)
                schedule(.probe, at: now + pause.probeInterval)
                reason =
                    "probe fix \(Words.distance(distance)) from anchor, still stationary\(hint); next probe in \(Words.duration(pause.probeInterval))"
                state.phase = .paused(pause)
            }
        }
        updates = state
    }

    /// nearestTenMeters: a fix worse than 10 m is held as a candidate; when nothing reached 10 m for the
    /// warm-up (30 s), the best candidate is delivered (docs/contract.md §3, "best within 30 s").
    mutating func warmUpFallback(_ location: Location, problem: DiscardReason?, now: Instant) {
        guard var state = updates else { return }
        defer { updates = state }
        guard state.configuration.desiredAccuracy == .nearestTenMeters, state.configuration.accuracyLimit == nil,
            let accuracy = FixFilter.accuracy(of: location), accuracy <= configuration.warmUpAccuracyLimit
        else {
            if let problem { actions.append(.discard(location, problem)) }
            return
        }
        if let best = state.warmUpBest, let bestAccuracy = FixFilter.accuracy(of: best), bestAccuracy <= accuracy {
            if let problem { actions.append(.discard(location, problem)) }
        } else {
            state.warmUpBest = location
        }
        if now - state.warmUpStart >= configuration.warmUp, let best = state.warmUpBest {
            deliver(best, state: &state, now: now)
            // A new window either way: a best fix the distance filter held back must not stay the candidate
            // (it would be tried again at every fix, and newer ones never beat its accuracy).
            state.warmUpStart = now
            state.warmUpBest = nil
        }
    }

    /// A wake's fix held back by the distance filter (`deliver`'s result) is said: the receiver was powered up
    /// for nothing the application sees (docs/contract.md §10).
    mutating func emitIfHeld(_ held: (distance: Double, filter: Double)?) {
        guard let held else { return }
        emit(
            .wakeDeliveredNothing,
            "wake delivered nothing: held by the distance filter (\(Words.distance(held.distance)) < \(Words.distance(held.filter)))")
    }

    /// Hands a location to the application (or to the deferral), after the distance filter. The distance and
    /// the filter when the filter held it back, nil when it was delivered.
    @discardableResult
    mutating func deliver(_ location: Location, state: inout Updates, now: Instant)
        -> (distance: Double, filter: Double)?
    {
        if let filter = state.configuration.distanceFilter, let last = state.lastDelivered {
            let distance = Geodesy.distance(from: last, to: location)
            if distance < filter {
                actions.append(.discard(location, .distanceFiltered(distance: distance, filter: filter)))
                return (distance, filter)
            }
        }
        let previous = state.lastDelivered
        state.lastDelivered = location
        state.warmUpStart = now
        state.warmUpBest = nil
        let outgoing =
            state.configuration.desiredAccuracy == .reduced
            ? Coarsening.coarsen(location, grid: configuration.reducedGridSize) : location
        if deferral != nil {
            hold(outgoing, previous: previous)
        } else {
            actions.append(.deliver([outgoing]))
        }
        return nil
    }

    mutating func pause(
        _ state: inout Updates, anchor: Location, stationaryFor: Double, rule: StationaryRule, now: Instant
    ) {
        let detail = "stationary \(Words.duration(stationaryFor)) within \(Words.distance(rule.radius))"
        emit(.paused(at: anchor), detail)
        reason = detail
        // Nothing held sits through a pause: the application gets what there is before going quiet.
        flushDeferral()
        if let resumed = state.hints.resumed {
            state.hints.resumed = nil
            if falseResume(resumed, anchor: anchor, rule: rule, now: now) { _ = quietHints(&state.hints, now: now) }
        }
        if state.configuration.autoResume {
            // With a motion sensor the probes are only the fallback for a sensor gone silent, once it has
            // shown it sees starts (`pauseTrustsSensor`).
            let interval =
                pauseTrustsSensor(state.hints, pausedFor: 0)
                ? configuration.motion.fallbackProbeInterval : rule.probeInterval
            state.phase = .paused(Pause(anchor: anchor, since: now, probeInterval: interval, probing: false))
            schedule(.probe, at: now + interval)
        } else {
            state.phase = .pausedUntilRestart(anchor: anchor)
        }
    }

    /// Out of a pause, tracking again (a probe's fix or a hint showed movement): the departure is watched out
    /// without naps (`considerNap`).
    mutating func resume(_ state: inout Updates, from pause: Pause, detail: String, now: Instant) {
        cancelTimer(.probe)
        cancelTimer(.probeTimeout)
        emit(.resumed, detail)
        state.departure = Departure(anchor: pause.anchor, since: now)
        state.phase = .tracking
        state.detector.reset()
        state.warmUpStart = now
    }

    /// Seconds until a duty-cycled level's next wake: the time to move `max(distanceFilter, accuracy)` at the
    /// recent speed, clamped to the level's interval (docs/contract.md §3).
    func dutyCycleInterval(_ requested: UpdatesConfiguration) -> Double {
        guard let rule = configuration.dutyCycle[requested.desiredAccuracy] else { return 0 }
        let accuracy = requested.desiredAccuracy.acceptanceThreshold ?? configuration.reducedGridSize
        let distance = max(requested.distanceFilter ?? 0, accuracy)
        guard let speed = recentSpeed else { return rule.minimumInterval }
        guard speed > 0.01 else { return rule.maximumInterval }
        return min(max(distance / speed, rule.minimumInterval), rule.maximumInterval)
    }

    mutating func dutyCycleWake(now: Instant) {
        guard var state = updates, case .sleeping = state.phase else { return }
        state.phase = .waking
        let rule = configuration.dutyCycle[state.configuration.desiredAccuracy]
        let slept = state.failures > 0 ? backoff(base: rule?.minimumInterval ?? 0, failures: state.failures) : 0
        state.wakeWait = fullWakeTimeout(afterDown: slept, failures: state.failures, now: now)
        state.wakeExtra = state.wakeWait - fullWakeTimeout(afterDown: slept, failures: 0, now: now)
        schedule(.acquisitionTimeout, at: now + state.wakeWait)
        reason = "waking for one \(state.configuration.desiredAccuracy.rawValue) fix"
        updates = state
    }

    mutating func acquisitionTimedOut(now: Instant) {
        guard var state = updates else { return }
        if case .tracking = state.phase {
            // A nap's wake waiting for its fix, or the watch over a stretch kept up.
            if let wake = state.napWake {
                napWakeTimedOut(&state, wake, now: now)
            } else if state.stretch.lastFix != nil {
                trackingWatchDue(&state, now: now)
            }
            updates = state
            return
        }
        guard case .waking = state.phase, let rule = configuration.dutyCycle[state.configuration.desiredAccuracy]
        else { return }
        if !receiverUnreachable { state.failures += 1 }
        let delay = max(backoff(base: rule.minimumInterval, failures: state.failures) - state.wakeExtra, 0)
        state.wakeExtra = 0
        state.phase = .sleeping
        acquisitionFailed(
            "no \(state.configuration.desiredAccuracy.rawValue) fix within \(Words.duration(state.wakeWait)) (\(failureWords(state.failures))); next attempt in \(Words.duration(delay))",
            retry: .dutyCycleWake, at: now + delay)
        updates = state
    }

    /// "3rd failure in a row", or why a wake without a fix did not count.
    func failureWords(_ failures: Int) -> String {
        receiverUnreachable
            ? "not counted: gpsd or the receiver is unreachable" : "\(Words.ordinal(failures)) failure in a row"
    }

    /// `base` grown by `backoffFactor` per failure (none for 0 or fewer: a series not counted while the receiver
    /// was unreachable), up to `maximumBackoff`.
    func backoff(base: Double, failures: Int) -> Double {
        var delay = base
        for _ in 0..<max(failures, 0) { delay *= configuration.acquisition.backoffFactor }
        return min(delay, max(configuration.acquisition.maximumBackoff, base))
    }

    /// Seconds a wake after `down` seconds down (in the cheaper way for that long), following `failures` failed
    /// wakes in a row, waits for its first fix (docs/contract.md §3).
    ///
    /// The start it expects is the model's for the time the receiver has really been without a fix, not only
    /// this sleep: a series of failed wakes refreshes nothing, and after the hot window the start is warm. And
    /// once the series has backed off to `acquisition.maximumBackoff` (longer than a bridge: a hole, a receiver
    /// unplugged and back without its backup domain, something the model did not foresee), some wakes wait
    /// for a cold start plus the margin (`coldRetry`). Sized for the short sleep alone, every retry ended
    /// before a cold start could, and the receiver never got a fix again.
    func wakeTimeout(afterDown down: Double, failures: Int, now: Instant) -> Double {
        let acquisition = configuration.acquisition
        let expected = expectedStart(afterDown: down, now: now)
        guard coldRetry(afterDown: down, failures: failures) else { return acquisition.timeout(expecting: expected) }
        return acquisition.timeout(covering: max(expected, receiver.timeToFirstFix.cold))
    }

    /// Seconds a duty-cycled wake waits, after `down` seconds down and `failures` failed wakes in a row: the
    /// whole `acquisition.timeout`, but never less than the start it may need (as `wakeTimeout`).
    func fullWakeTimeout(afterDown down: Double, failures: Int, now: Instant) -> Double {
        let acquisition = configuration.acquisition
        let cold = coldRetry(afterDown: down, failures: failures)
        let start = cold ? receiver.timeToFirstFix.cold : expectedStart(afterDown: down, now: now)
        return max(acquisition.timeout, acquisition.timeout(covering: start))
    }

    /// Whether this wake waits for a cold start: one in `coldRetryEvery` of a failure series whose sleeps have
    /// reached `acquisition.maximumBackoff`. Most long series are a place without sky (a car park, indoors),
    /// where no wait brings a fix: every wake waiting for a cold start there cost 7 % more energy on the Reno
    /// drive (bench/policy.sh); one in four bounds that, and a receiver that is really cold gets its fix within
    /// four maximum backoffs.
    func coldRetry(afterDown down: Double, failures: Int) -> Bool {
        failures > 0 && down >= configuration.acquisition.maximumBackoff && failures % Self.coldRetryEvery == 0
    }

    static let coldRetryEvery = 4

    /// The model's time to first fix after `down` seconds down in the cheaper way for that long, counting the
    /// whole time since the last fix for the hot window: failed wakes refresh no ephemeris.
    func expectedStart(afterDown down: Double, now: Instant) -> Double {
        let withoutFix = previousFix.map { max(down, now - $0.at) } ?? down
        return receiver.timeToFirstFix(afterDown: withoutFix, in: receiver.cheaperDownRegime(forSleepOf: down))
    }

    mutating func probeDue(now: Instant) {
        guard var state = updates, case .paused(var pause) = state.phase else { return }
        pause.probing = true
        pause.wait = wakeTimeout(afterDown: pause.probeInterval, failures: pause.failures, now: now)
        pause.extraWait = pause.wait - wakeTimeout(afterDown: pause.probeInterval, failures: 0, now: now)
        state.phase = .paused(pause)
        updates = state
        schedule(.probeTimeout, at: now + pause.wait)
        reason = "probing for departure after \(Words.duration(now - pause.since)) paused"
    }

    mutating func probeTimedOut(now: Instant) {
        guard var state = updates, case .paused(var pause) = state.phase, pause.probing else { return }
        let rule = configuration.stationary[state.configuration.activityType]
        if pause.confirming {
            // The probe had its fix; no second one came to confirm the movement: still, as far as we know.
            pause.probing = false
            pause.confirming = false
            pause.failures = 0
            let hint = stillAfterProbe(&pause, &state.hints, rule: rule, now: now)
            state.phase = .paused(pause)
            updates = state
            schedule(.probe, at: now + pause.probeInterval)
            reason = "no fix confirmed the probe's movement\(hint); next probe in \(Words.duration(pause.probeInterval))"
            return
        }
        let waited = pause.wait
        let extra = pause.extraWait
        pause.probing = false
        if !receiverUnreachable { pause.failures += 1 }
        // Failures back off like a duty cycle's (a receiver under a roof stays there a while); the interval
        // shrinks back to `maximumProbeInterval` at the next probe that finds a fix.
        if !receiverUnreachable {
            pause.probeInterval = max(
                min(pause.probeInterval * rule.probeGrowth, rule.maximumProbeInterval),
                backoff(base: rule.probeInterval, failures: pause.failures))
            if pauseTrustsSensor(state.hints, pausedFor: now - pause.since) {
                pause.probeInterval = configuration.motion.fallbackProbeInterval
            }
        }
        // A hint's probe without a fix shows no movement either: it counts as a false alarm.
        let hint = falseAlarm(&pause, &state.hints, now: now)
        state.phase = .paused(pause)
        updates = state
        acquisitionFailed(
            "probe found no fix within \(Words.duration(waited)) (\(failureWords(pause.failures)))\(hint); next probe in \(Words.duration(pause.probeInterval))",
            retry: .probe, at: now + max(pause.probeInterval - extra, 0))
    }
}
