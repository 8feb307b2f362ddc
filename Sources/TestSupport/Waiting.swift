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

/// Runs `body` on a thread of its own and waits for it without holding one of the test pool's threads. The
/// pool has as many threads as cores: two tests that compute for a minute take them all, and a loop that
/// paces an emulated receiver or stamps what arrived must not wait behind them.
public func onOwnThread<Value: Sendable>(
    _ body: @escaping @Sendable () throws -> Value
) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let started = DetachedThread.start {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        if !started { continuation.resume(throwing: TimedOut(what: "a thread to start")) }
    }
}
