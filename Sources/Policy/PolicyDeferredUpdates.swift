import GPSModel

// Deferred updates (docs/contract.md §5): locations held back and delivered as one batch. Part of `Policy` (Policy.swift holds its state and the standard updates).
extension Policy {
    struct Deferral: Sendable {
        var distance: Double?
        var timeout: Double?
        var held: [Location] = []
        var traveled = 0.0
        var lastPosition: Location?
    }

    func deferralError(for requested: UpdatesConfiguration) -> (DeferredError, String)? {
        requested.deferralRefusal.map { ($0.error, $0.reason) }
    }

    mutating func allowDeferredUpdates(untilTraveled distance: Double?, timeout: Double?, now: Instant) {
        guard let state = updates else {
            emit(.deferredFinished(.notUpdatingLocation), "deferral refused: updates are not running")
            return
        }
        if let refusal = deferralError(for: state.configuration) {
            emit(.deferredFinished(refusal.0), "deferral refused: \(refusal.1)")
            return
        }
        if let distance, !(distance > 0) {
            emit(.deferredFinished(.failed), "deferral refused: the distance must be a positive number of metres")
            return
        }
        if let timeout, !(timeout > 0) {
            emit(.deferredFinished(.failed), "deferral refused: the timeout must be a positive number of seconds")
            return
        }
        if deferral != nil { finishDeferral(.canceled, detail: "replaced by a new deferral request") }
        deferral = Deferral(distance: distance, timeout: timeout, lastPosition: state.lastDelivered)
        if let timeout, timeout.isFinite { schedule(.deferredTimeout, at: now + timeout) }
    }

    mutating func hold(_ location: Location, previous: Location?) {
        guard var batch = deferral else { return }
        if let last = batch.lastPosition ?? previous { batch.traveled += Geodesy.distance(from: last, to: location) }
        batch.lastPosition = location
        batch.held.append(location)
        deferral = batch
        if let distance = batch.distance, batch.traveled >= distance {
            finishDeferral(nil, detail: "travelled \(Words.distance(batch.traveled)) of \(Words.distance(distance))")
        } else if batch.held.count >= configuration.deferredBufferCapacity {
            // Core Location may deliver early when its cache is full; the deferral goes on.
            actions.append(.deliver(batch.held))
            batch.held = []
            deferral = batch
        }
    }

    mutating func flushDeferral() {
        guard var batch = deferral, !batch.held.isEmpty else { return }
        actions.append(.deliver(batch.held))
        batch.held = []
        deferral = batch
    }

    /// Ends the deferral: its one `deferredFinished`, then the batch (Core Location's order).
    mutating func finishDeferral(_ error: DeferredError?, detail: String) {
        guard let batch = deferral else { return }
        deferral = nil
        cancelTimer(.deferredTimeout)
        emit(.deferredFinished(error), detail)
        if !batch.held.isEmpty { actions.append(.deliver(batch.held)) }
    }
}
