import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

public struct TimedOut: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` until it holds or `timeout` seconds pass.
public func waitUntil(_ what: String, timeout: Double = 20, _ condition: () -> Bool) throws {
    let deadline = monotonicSeconds() + timeout
    while !condition() {
        if monotonicSeconds() > deadline { throw TimedOut(what: what) }
        usleep(10_000)
    }
}
