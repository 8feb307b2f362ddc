import GPSModel

// Significant-change monitoring (docs/contract.md §6). Part of `Policy` (Policy.swift holds its state and the standard updates).
extension Policy {
    struct SignificantChange: Sendable {
        var lastEvent: (location: Location, at: Instant)?
        var waking: Bool
        var failures = 0
    }

    mutating func startSignificantChange(now: Instant) {
        guard significantChange == nil else { return }
        var state = SignificantChange(waking: true)
        if let cached = lastKnownLocation {
            emit(.significantChange(cached), "first event is the last known location, from \(cached.timestamp.iso8601)")
            state.lastEvent = (cached, now)
        }
        significantChange = state
        schedule(.significantChangeTimeout, at: now + configuration.acquisition.timeout)
        reason = "significant-change monitoring started: waking for a fix"
    }

    mutating func stopSignificantChange() {
        guard significantChange != nil else { return }
        significantChange = nil
        cancelTimer(.significantChangeWake)
        cancelTimer(.significantChangeTimeout)
        reason = "significant-change monitoring stopped"
    }

    mutating func significantChangeFix(_ location: Location, now: Instant) {
        guard var state = significantChange else { return }
        let rule = configuration.significantChange
        guard FixFilter.accuracyProblem(location, limit: rule.accuracyLimit) == nil else { return }
        if let last = state.lastEvent {
            let distance = Geodesy.distance(from: last.location, to: location)
            if distance >= rule.distance && now - last.at >= rule.minimumInterval {
                emit(
                    .significantChange(location),
                    "moved \(Words.distance(distance)) since the last event \(Words.duration(now - last.at)) ago")
                state.lastEvent = (location, now)
            }
        } else {
            emit(.significantChange(location), "first fix since monitoring started")
            state.lastEvent = (location, now)
        }
        if state.waking {
            state.waking = false
            state.failures = 0
            cancelTimer(.significantChangeTimeout)
            let interval = significantChangeInterval(state, now: now)
            schedule(.significantChangeWake, at: now + interval)
            reason = "significant-change fix taken; next wake in \(Words.duration(interval))"
        }
        significantChange = state
    }

    /// The time to move the event distance at the recent speed, clamped to the wake intervals, and never
    /// before the next event is allowed.
    func significantChangeInterval(_ state: SignificantChange, now: Instant) -> Double {
        let rule = configuration.significantChange
        var interval = rule.maximumWakeInterval
        if let speed = recentSpeed, speed > 0.01 {
            interval = min(max(rule.distance / speed, rule.wakeInterval), rule.maximumWakeInterval)
        } else if recentSpeed == nil {
            interval = rule.wakeInterval
        }
        if let last = state.lastEvent { interval = max(interval, last.at + rule.minimumInterval - now) }
        return interval
    }

    mutating func significantChangeWake(now: Instant) {
        guard var state = significantChange, !state.waking else { return }
        state.waking = true
        significantChange = state
        schedule(.significantChangeTimeout, at: now + configuration.acquisition.timeout)
        reason = "significant-change wake"
    }

    mutating func significantChangeTimedOut(now: Instant) {
        guard var state = significantChange, state.waking else { return }
        state.waking = false
        if !receiverUnreachable { state.failures += 1 }
        let delay = backoff(base: configuration.significantChange.wakeInterval, failures: state.failures)
        significantChange = state
        acquisitionFailed(
            "significant-change wake found no fix within \(Words.duration(configuration.acquisition.timeout)); next in \(Words.duration(delay))",
            retry: .significantChangeWake, at: now + delay)
    }
}
