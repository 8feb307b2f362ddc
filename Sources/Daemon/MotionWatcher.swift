import GPIOLines
import SystemInterface
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The motion source a setup holds, opened when the setup is made (a line another process holds is refused
/// at start, as a power switch is), and how its activations are debounced.
public struct MotionSetup: Sendable {
    public var source: any MotionEdgeSource
    /// Seconds (`MotionDebounce`).
    public var debounce: Double

    public init(source: any MotionEdgeSource, debounce: Double) { (self.source, self.debounce) = (source, debounce) }
}

/// Watches a motion source on a thread of its own and hands each debounced activation to `hint`, the
/// manager's `motionHint()`: the policy decides what it is worth. The thread sleeps in `poll` on the line's
/// descriptor and a stop pipe, so it costs nothing while the line is still and ends at once when stopped.
final class MotionWatcher: Sendable {
    private let source: any MotionEdgeSource
    private let debounce: Double
    private let hint: @Sendable () -> Void
    private let now: @Sendable () -> Double
    private let stopPipe = WakeUpPipe()
    private let stopped = StopFlag()
    private let ended = StopFlag()
    /// The read failure that ended the watch, taken once by `newFailure`.
    private let failure = Mutex<String?>(nil)

    init(
        _ setup: MotionSetup, now: @escaping @Sendable () -> Double = monotonicSeconds,
        hint: @escaping @Sendable () -> Void
    ) {
        (source, debounce, self.hint, self.now) = (setup.source, setup.debounce, hint, now)
    }

    /// Starts the thread; false when none could be made (the watch is then a failure, as a read error is).
    func start() -> Bool {
        let started = DetachedThread.start { [self] in
            watch()
            ended.set()
        }
        if !started {
            fail("\(source): no thread to watch it (pthread_create failed)")
            ended.set()
        }
        return started
    }

    /// Ends the watch and waits up to a second for the thread to leave.
    func stop() {
        stopped.set()
        stopPipe.signal()
        let deadline = monotonicSeconds() + 1
        while !ended.isSet, monotonicSeconds() < deadline { sleepSeconds(0.005) }
    }

    var isWatching: Bool { !ended.isSet }

    /// The failure that ended the watch, once.
    func newFailure() -> String? { failure.withLock { taken in defer { taken = nil }; return taken } }

    private func watch() {
        var debouncer = MotionDebounce(interval: debounce)
        var pollers = (
            pollfd(fd: source.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopPipe.descriptor, events: Int16(POLLIN), revents: 0)
        )
        while !stopped.isSet {
            // Without a stop pipe, a slice of a second bounds how late a stop is seen.
            let timeout: Int32 = stopPipe.descriptor >= 0 ? -1 : 200
            let ready = withUnsafeMutableBytes(of: &pollers) { raw in
                poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), 2, timeout)
            }
            if stopped.isSet { return }
            if ready < 0 {
                if errno == EINTR { continue }
                fail(SystemError("poll", source.description, code: errno).description)
                return
            }
            // Edges, or an error or hang-up: the read says which.
            guard pollers.0.revents != 0 else { continue }
            do throws(MotionSourceError) {
                if try source.readActivations() > 0, debouncer.activated(at: now()) { hint() }
            } catch {
                fail(error.description)
                return
            }
        }
    }

    private func fail(_ message: String) {
        failure.withLock { $0 = "\(message); no more motion hints: the pauses' fallback probes go on" }
    }
}
