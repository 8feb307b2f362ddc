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
    /// Seconds between hints while the line stays at its active level; nil: hints at edges only.
    public var repeatWhileActive: Double?

    public init(source: any MotionEdgeSource, debounce: Double, repeatWhileActive: Double? = nil) {
        (self.source, self.debounce, self.repeatWhileActive) = (source, debounce, repeatWhileActive)
    }
}

/// Watches a motion source on a thread of its own and hands each debounced activation to `hint`, the
/// manager's `motionHint()`: the policy decides what it is worth. The thread sleeps in `poll` on the line's
/// descriptor and a stop pipe, so it costs nothing while the line is still and ends at once when stopped.
/// With `repeatWhileActive`, a line held at its active level (the ignition on, found so at start too) also
/// hints every so often until it lets go: an edge comes only when the engine starts, and the policy's use of a
/// sensor (a wake without a fix waits on while the sensor says the device moves; a stop is slept out only
/// while the sensor is quiet) needs to hear it go on.
final class MotionWatcher: Sendable {
    private let source: any MotionEdgeSource
    private let debounce: Double
    private let repeatWhileActive: Double?
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
        (source, debounce, repeatWhileActive, self.hint, self.now) =
            (setup.source, setup.debounce, setup.repeatWhileActive, hint, now)
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
        // With `repeatWhileActive`, while the line is held active: when it last hinted (or was found held).
        var heldSince: Double?
        if repeatWhileActive != nil {
            do throws(MotionSourceError) {
                if try source.isActive() {
                    heldSince = now()
                    if debouncer.activated(at: now()) { hint() }
                }
            } catch {
                fail(error.description)
                return
            }
        }
        while !stopped.isSet {
            // Without a stop pipe, a slice of a second bounds how late a stop is seen.
            var timeout: Int32 = stopPipe.descriptor >= 0 ? -1 : 200
            if let every = repeatWhileActive, let held = heldSince {
                let due = Int32((min(max(held + every - now(), 0), 3_600) * 1000).rounded(.up))
                timeout = timeout < 0 ? due : min(timeout, due)
            }
            let ready = withUnsafeMutableBytes(of: &pollers) { raw in
                poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), 2, timeout)
            }
            if stopped.isSet { return }
            if ready < 0 {
                if errno == EINTR { continue }
                fail(SystemError("poll", source.description, code: errno).description)
                return
            }
            do throws(MotionSourceError) {
                if pollers.0.revents != 0 {
                    // Edges, or an error or hang-up: the read says which.
                    if try source.readActivations() > 0, debouncer.activated(at: now()) {
                        hint()
                        heldSince = now()
                    }
                    if repeatWhileActive != nil {
                        heldSince = try source.isActive() ? (heldSince ?? now()) : nil
                    }
                } else if let every = repeatWhileActive, let held = heldSince, now() - held >= every {
                    // Still held (its level read again, should an edge have been lost): the next hint.
                    if try source.isActive() {
                        heldSince = now()
                        if debouncer.activated(at: now()) { hint() }
                    } else {
                        heldSince = nil
                    }
                }
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
