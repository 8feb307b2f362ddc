import GPSModel
import Synchronization
import SystemInterface

/// The service's time: a monotonic clock for its own timers (status, state, watchdog, the stop's deadline)
/// and the wall clock for what it stamps (status, records, problems). Live it is the system's
/// (`SystemDaemonClock`); a test gives a `ManualDaemonClock` and moves it, after NIOEmbedded's
/// `EmbeddedEventLoop.advanceTime` (swift-nio, Sources/NIOEmbedded/Embedded.swift), so reload, stop and the
/// watchdog run in virtual time.
public protocol DaemonClock: Sendable {
    /// Seconds on a monotonic clock; only differences mean anything.
    var monotonicSeconds: Double { get }
    /// The wall clock now.
    var now: UTCTime { get }
}

/// CLOCK_MONOTONIC and CLOCK_REALTIME.
public struct SystemDaemonClock: DaemonClock {
    public init() {}
    public var monotonicSeconds: Double { SystemInterface.monotonicSeconds() }
    public var now: UTCTime { UTCTime.now() }
}

/// A clock that moves only when told: both of its readings advance together, so the wall clock stays the
/// monotonic one plus the start's date.
public final class ManualDaemonClock: DaemonClock {
    private let elapsed = Mutex(0.0)
    private let start: UTCTime

    /// `start` is the wall clock at monotonic second 0.
    public init(start: UTCTime) {
        self.start = start
    }

    public var monotonicSeconds: Double { elapsed.withLock { $0 } }
    public var now: UTCTime { start.adding(seconds: monotonicSeconds) }

    /// Moves both readings `seconds` forward (never back: a monotonic clock does not go back).
    public func advance(by seconds: Double) {
        elapsed.withLock { $0 += max(0, seconds) }
    }

    /// Moves the clock to monotonic second `seconds`, if that is ahead.
    public func advance(to seconds: Double) {
        elapsed.withLock { $0 = max($0, seconds) }
    }
}
