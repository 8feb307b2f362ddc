import SystemInterface

/// A capture's clock mapped onto the wall clock: capture time `origin` is the moment the pacer was made, and
/// later capture times are due `speed` times faster than they were recorded. Without a speed (nil, or not
/// a positive finite number: "max") everything is due at once. Every paced replay waits through one.
public struct Pacer {
    /// Wall seconds per capture second is 1 / `speed`; nil: no waiting.
    public let speed: Double?
    /// The capture time that maps to the pacer's start.
    public let origin: Double
    private let start: Double
    private let clock: () -> Double
    private let sleep: (Double) -> Void

    /// Starts now on `clock`. `clock` and `sleep` are the monotonic clock and `sleepSeconds` but for tests.
    public init(
        speed: Double?, origin: Double, clock: @escaping () -> Double = monotonicSeconds,
        sleep: @escaping (Double) -> Void = sleepSeconds
    ) {
        self.speed = speed.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        self.origin = origin
        self.clock = clock
        self.sleep = sleep
        start = clock()
    }

    /// Wall seconds until capture time `t` is due: zero or less when it is (always, without a speed).
    public func secondsUntil(_ t: Double) -> Double {
        guard let speed else { return 0 }
        return start + (t - origin) / speed - clock()
    }

    /// The capture time the wall clock has reached (infinity without a speed).
    public var reached: Double {
        guard let speed else { return .infinity }
        return origin + (clock() - start) * speed
    }

    /// Sleeps until capture time `t` is due, in slices of at most `slice` seconds so that `shouldStop` is
    /// heard; false when it said stop first.
    public func wait(until t: Double, slice: Double = 0.05, shouldStop: () -> Bool) -> Bool {
        guard let speed else { return true }
        let due = start + (t - origin) / speed
        while clock() < due {
            if shouldStop() { return false }
            sleep(min(slice, due - clock()))
        }
        return true
    }
}
