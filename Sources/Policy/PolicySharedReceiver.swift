import GPSModel

// The shared receiver (docs/contract.md §8): the regime the activities need together. Part of `Policy` (Policy.swift holds its state and the standard updates).
extension Policy {
    /// What each activity needs now, with the words for it.
    func demands(now: Instant) -> [(ReceiverRegime, String)] {
        var result: [(ReceiverRegime, String)] = []
        if let state = updates {
            let level = state.configuration.desiredAccuracy.rawValue
            switch state.phase {
            case .tracking:
                if trackingRegime(state.configuration) == .powerSave {
                    result.append((.powerSave, "updating at nearestTenMeters in the receiver's power-save cycling"))
                } else {
                    result.append((.continuous, "updating at \(level) accuracy"))
                }
            case .waking: result.append((.continuous, "waking for one \(level) fix"))
            case .sleeping:
                let sleep = timers[.dutyCycleWake].map { $0 - now } ?? 0
                result.append((receiver.cheaperDownRegime(forSleepOf: sleep), "duty cycle: down until the next fix"))
            case .paused(let pause):
                if pause.probing {
                    result.append((.continuous, "probing for departure"))
                } else {
                    result.append(
                        (
                            receiver.cheaperDownRegime(forSleepOf: pause.probeInterval),
                            "paused: down until the next probe"
                        ))
                }
            case .napping(let nap):
                result.append(
                    (receiver.cheaperDownRegime(forSleepOf: nap.wakeAt - now), "predictive nap: down until the next fix"))
            case .pausedUntilRestart:
                // Standby where possible: the application may start updates again soon and deserves a hot start.
                result.append((receiver.effectiveRegime(.standby), "paused until updates are started again"))
            }
        }
        if !requests.isEmpty {
            result.append(
                (
                    .continuous,
                    "single-shot request \(requests.keys.sorted().map(\.description).joined(separator: ", "))"
                ))
        }
        if let state = significantChange {
            if state.waking {
                result.append((.continuous, "significant-change wake"))
            } else {
                // The lowest power the receiver allows for the sleep ahead (docs/contract.md §6).
                let sleep =
                    timers[.significantChangeWake].map { $0 - now } ?? configuration.significantChange.wakeInterval
                result.append(
                    (receiver.cheaperDownRegime(forSleepOf: sleep), "significant-change monitoring between wakes"))
            }
        }
        return result
    }

    mutating func reconcileRegime(now: Instant, force: Bool) {
        let needs = demands(now: now)
        let top = needs.max { $0.0 < $1.0 }
        let target = receiver.effectiveRegime(top?.0 ?? .off)
        guard force || target != regime else { return }
        // A reconfiguration that leaves the receiver as it is needs no command.
        if !force, regime == nil, needs.isEmpty { return }
        regime = target
        actions.append(.setRegime(target, reason: reason ?? top?.1 ?? "no activity needs the receiver"))
    }

    mutating func emit(_ kind: PolicyEventKind, _ detail: String) {
        actions.append(.emit(kind, detail: detail))
    }
}
