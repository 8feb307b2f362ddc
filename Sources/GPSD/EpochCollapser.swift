import GPSModel

/// gpsd sends several TPVs per epoch for NMEA receivers: one per sentence that may end a cycle (RMC, GGA,
/// GSA…), each adding what its sentence carried, the last the most complete. Keeps one per timestamp and
/// device: the epoch's last TPV with a position (or its last TPV when none has one), passed on when the
/// next epoch starts or when the device has been quiet for `quietInterval`. TPVs without a time cannot be
/// matched and pass straight through.
///
/// Generic over what is kept, so the live session can hold an epoch's raw line and decode only the one
/// that is passed on (gpsd's 3 TPVs per NMEA epoch made TPV decoding a third of `watch`'s CPU). Pure: the
/// caller says what time it is (monotonic seconds).
public struct EpochCollapser<Device: Hashable & Sendable, Time: Equatable & Sendable, Payload: Sendable>: Sendable {
    private struct Pending: Sendable {
        var device: Device
        var payload: Payload
        var time: Time
        var hasPosition: Bool
        var lastSeen: Double
    }

    public let quietInterval: Double
    /// One entry per device with an epoch held, in the order they started: a list, not a dictionary, since
    /// there are one or two devices and hashing a key for every TPV cost more than looking through them.
    private var pending: [Pending] = []

    /// The default quiet interval is longer than the gap between two sentences of one epoch at 4800 baud
    /// (an 80-byte sentence takes 0.17 s), shorter than any receiver's epoch.
    public static var defaultQuietInterval: Double { 0.35 }

    public init(quietInterval: Double = defaultQuietInterval) {
        self.quietInterval = quietInterval
    }

    /// Takes one TPV; returns what is now complete (the device's previous epoch, or this TPV if it has no
    /// time).
    public mutating func add(_ payload: Payload, device: Device, time: Time?, hasPosition: Bool, now: Double) -> [Payload] {
        guard let time else { return [payload] }
        guard let index = pending.firstIndex(where: { $0.device == device }) else {
            pending.append(Pending(device: device, payload: payload, time: time, hasPosition: hasPosition, lastSeen: now))
            return []
        }
        if pending[index].time == time {
            if hasPosition || !pending[index].hasPosition {
                pending[index].payload = payload
                pending[index].hasPosition = hasPosition
            }
            pending[index].lastSeen = now
            return []
        }
        let finished = pending[index].payload
        pending[index] = Pending(device: device, payload: payload, time: time, hasPosition: hasPosition, lastSeen: now)
        return [finished]
    }

    /// The epochs whose device has been quiet for `quietInterval`.
    public mutating func flushQuiet(now: Double) -> [Payload] {
        guard pending.contains(where: { now - $0.lastSeen >= quietInterval }) else { return [] }
        var finished: [Payload] = []
        pending.removeAll { entry in
            guard now - entry.lastSeen >= quietInterval else { return false }
            finished.append(entry.payload)
            return true
        }
        return finished
    }

    /// The pending epoch of one device (it closed), or of all (the connection ended).
    public mutating func flush(device: Device? = nil) -> [Payload] {
        if let device {
            guard let index = pending.firstIndex(where: { $0.device == device }) else { return [] }
            return [pending.remove(at: index).payload]
        }
        let finished = pending.map(\.payload)
        pending.removeAll()
        return finished
    }

    public var hasPending: Bool { !pending.isEmpty }

    /// When the earliest pending epoch goes quiet (monotonic seconds), so a reader sleeps until then and
    /// not a moment longer or shorter; nil when nothing is pending.
    public var nextQuietDeadline: Double? {
        pending.lazy.map { $0.lastSeen + self.quietInterval }.min()
    }
}

extension EpochCollapser where Device == String, Time == UTCTime, Payload == Fix {
    /// Collapses decoded fixes (replay, tests).
    public mutating func add(_ fix: Fix, now: Double) -> [Fix] {
        add(fix, device: fix.device ?? "", time: fix.time, hasPosition: fix.hasPosition, now: now)
    }
}
