import GPSModel

// Single-shot requests (docs/contract.md §7), the timers and shutdown. Part of `Policy` (Policy.swift holds its state and the standard updates).
extension Policy {
    struct PendingRequest: Sendable {
        var desiredAccuracy: DesiredAccuracy
        var timeout: Double
        var best: Location?
    }

    mutating func requestLocation(
        _ id: RequestID, timeout: Double, desiredAccuracy: DesiredAccuracy?, now: Instant
    ) {
        if requests[id] != nil {
            finishRequest(id, .requestFailed(id, .canceled), detail: "request \(id) replaced by a new one with its id")
        }
        let timeout = timeout.isFinite && timeout > 0 ? timeout : configuration.requestTimeout
        let level = desiredAccuracy ?? updates?.configuration.desiredAccuracy ?? .best
        requests[id] = PendingRequest(desiredAccuracy: level, timeout: timeout)
        schedule(.request(id), at: now + timeout)
        reason = "single-shot request \(id)"
    }

    mutating func answerRequests(with location: Location) {
        for id in requests.keys.sorted() {
            guard var request = requests[id] else { continue }
            // A fix of unknown accuracy meets only the levels that take any valid fix.
            let level = request.desiredAccuracy
            let meets =
                level.isBest || level == .reduced
                ? FixFilter.accuracyProblem(location, limit: level.acceptanceThreshold) == nil
                : FixFilter.accuracy(of: location).map { $0 <= (level.acceptanceThreshold ?? .infinity) } ?? false
            if meets {
                let accuracy = FixFilter.accuracy(of: location).map { " (\(Words.distance($0)))" } ?? ""
                finishRequest(
                    id, .requestCompleted(id, outgoing(location, level: request.desiredAccuracy)),
                    detail: "first fix meeting \(request.desiredAccuracy.rawValue)\(accuracy)")
            } else {
                let better =
                    request.best.map { best in
                        (FixFilter.accuracy(of: location) ?? .infinity) < (FixFilter.accuracy(of: best) ?? .infinity)
                    } ?? true
                if better { request.best = location }
                requests[id] = request
            }
        }
    }

    mutating func requestTimedOut(_ id: RequestID) {
        guard let request = requests[id] else { return }
        if let best = request.best {
            let accuracy = FixFilter.accuracy(of: best).map { Words.distance($0) } ?? "unknown accuracy"
            finishRequest(
                id, .requestCompleted(id, outgoing(best, level: request.desiredAccuracy)),
                detail:
                    "no fix met \(request.desiredAccuracy.rawValue) within \(Words.duration(request.timeout)); best seen (\(accuracy))"
            )
        } else {
            finishRequest(
                id, .requestFailed(id, .locationUnknown),
                detail: "no usable fix within \(Words.duration(request.timeout))")
        }
    }

    mutating func finishRequest(_ id: RequestID, _ kind: PolicyEventKind, detail: String) {
        guard requests.removeValue(forKey: id) != nil else { return }
        cancelTimer(.request(id))
        emit(kind, detail)
        if reason == nil { reason = "single-shot request \(id) answered" }
    }

    func outgoing(_ location: Location, level: DesiredAccuracy) -> Location {
        level == .reduced ? Coarsening.coarsen(location, grid: configuration.reducedGridSize) : location
    }

    // MARK: - Timers

    mutating func handleTimer(_ id: TimerID, now: Instant) {
        // Only a timer we still expect, and not before its time: a late cancel or a replaced deadline is harmless.
        // A millisecond of slack absorbs a runtime clock that rounds the deadline down.
        guard let deadline = timers[id], now.seconds >= deadline.seconds - 0.001 else { return }
        timers[id] = nil
        switch id {
        case .dutyCycleWake: dutyCycleWake(now: now)
        case .acquisitionTimeout: acquisitionTimedOut(now: now)
        case .probe: probeDue(now: now)
        case .probeTimeout: probeTimedOut(now: now)
        case .deferredTimeout:
            let timeout = deferral?.timeout.map { Words.duration($0) } ?? "its time"
            finishDeferral(nil, detail: "deferral timeout of \(timeout) elapsed")
        case .significantChangeWake: significantChangeWake(now: now)
        case .significantChangeTimeout: significantChangeTimedOut(now: now)
        case .request(let requestID): requestTimedOut(requestID)
        case .predictionWake: predictionWake(now: now)
        }
    }

    /// A wake or probe found no fix: the retry is scheduled, the failure told, and it becomes the reason.
    mutating func acquisitionFailed(_ detail: String, retry timer: TimerID, at deadline: Instant) {
        schedule(timer, at: deadline)
        emit(.acquisitionFailed, detail)
        reason = detail
    }

    mutating func schedule(_ id: TimerID, at deadline: Instant) {
        timers[id] = deadline
        actions.append(.schedule(id, at: deadline))
    }

    mutating func cancelTimer(_ id: TimerID) {
        if timers.removeValue(forKey: id) != nil { actions.append(.cancel(id)) }
    }

    // MARK: - Shutdown

    mutating func shutdown() {
        finishDeferral(.canceled, detail: "shutting down; held locations delivered")
        for id in requests.keys.sorted() {
            finishRequest(id, .requestFailed(id, .canceled), detail: "shutting down")
        }
        stopUpdates(detail: "shutting down")
        stopSignificantChange()
        for id in timers.keys.sorted(by: { $0.description < $1.description }) { cancelTimer(id) }
        reason = "shutting down"
    }
}
