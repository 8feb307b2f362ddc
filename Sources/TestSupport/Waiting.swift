import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

public struct TimedOut: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// What `body` returned and the monotonic seconds it took: for the tests that bound how long a call blocks.
public func timed<Value>(_ body: () throws -> Value) rethrows -> (value: Value, seconds: Double) {
    let start = monotonicSeconds()
    let value = try body()
    return (value, monotonicSeconds() - start)
}

/// Polls `condition` until it holds or `timeout` seconds pass.
public func waitUntil(_ what: String, timeout: Double = 20, _ condition: () -> Bool) throws {
    let deadline = monotonicSeconds() + timeout
    while !condition() {
        if monotonicSeconds() > deadline { throw TimedOut(what: what) }
        usleep(10_000)
    }
}
