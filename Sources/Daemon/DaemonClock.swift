import GPSModel
import SystemInterface

/// The service's time: a monotonic clock for its own timers (status, state, watchdog, the stop's deadline)
/// and the wall clock for what it stamps (status, records, problems). Live it is the system's
/// (`SystemDaemonClock`); a test gives a clock it moves by hand, after NIOEmbedded's
/// `EmbeddedEventLoop.advanceTime` (swift-nio, Sources/NIOEmbedded/Embedded.swift), so reload, stop and the
/// watchdog run in virtual time (Tests/DaemonTests/DaemonVirtualTimeTests.swift).
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
