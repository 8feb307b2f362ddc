import GPSModel

/// gpsd sends several TPVs per epoch for NMEA receivers: one per sentence that may end a cycle (RMC, GGA,
/// GSA…), each adding what its sentence carried, the last the most complete. Keeps one fix per timestamp
/// and device: the epoch's last TPV with a position (or its last TPV when none has one), passed on when
/// the next epoch starts or when the device has been quiet for `quietInterval`. Fixes without a time
/// cannot be matched and pass straight through.
///
/// Pure: the caller says what time it is (monotonic seconds).
public struct EpochCollapser: Sendable {
    /// Longer than the gap between two sentences of one epoch at 4800 baud (an 80-byte sentence takes
    /// 0.17 s), shorter than any receiver's epoch.
    public static let defaultQuietInterval = 0.35

    private struct Pending {
        var fix: Fix
        var time: UTCTime
        var lastSeen: Double
    }

    public let quietInterval: Double
    private var pending: [String: Pending] = [:]

    public init(quietInterval: Double = EpochCollapser.defaultQuietInterval) {
        self.quietInterval = quietInterval
    }

    /// Takes one TPV; returns the fixes that are now complete (the previous epoch's, or this one if it has
    /// no time).
    public mutating func add(_ fix: Fix, now: Double) -> [Fix] {
        guard let time = fix.time else { return [fix] }
        let key = fix.device ?? ""
        if var current = pending[key], current.time == time {
            if fix.hasPosition || !current.fix.hasPosition { current.fix = fix }
            current.lastSeen = now
            pending[key] = current
            return []
        }
        let finished = pending[key].map { [$0.fix] } ?? []
        pending[key] = Pending(fix: fix, time: time, lastSeen: now)
        return finished
    }

    /// The epochs whose device has been quiet for `quietInterval`.
    public mutating func flushQuiet(now: Double) -> [Fix] {
        var finished: [Fix] = []
        for (key, entry) in pending where now - entry.lastSeen >= quietInterval {
            finished.append(entry.fix)
            pending[key] = nil
        }
        return finished
    }

    /// The pending epoch of one device (it closed), or of all (the connection ended).
    public mutating func flush(device: String? = nil) -> [Fix] {
        if let device {
            guard let entry = pending.removeValue(forKey: device) else { return [] }
            return [entry.fix]
        }
        let finished = pending.values.map(\.fix)
        pending.removeAll()
        return finished
    }

    public var hasPending: Bool { !pending.isEmpty }
}
