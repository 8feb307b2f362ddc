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
    /// Seconds (`MotionDebounce`; for the ignition, how long the level holds before it is taken).
    public var debounce: Double
    /// The line is the ignition, read for its level (`motion.gpio.ignition`).
    public var ignition: Bool

    public init(source: any MotionEdgeSource, debounce: Double, ignition: Bool = false) {
        (self.source, self.debounce, self.ignition) = (source, debounce, ignition)
    }
}

/// Watches a motion source on a thread of its own and hands each debounced activation to `hint`, the
/// manager's `motionHint()`: the policy decides what it is worth. An ignition line read for its level instead
/// hands `ignition` its level as the watch starts and each new one that has held `debounce` seconds, the
/// manager's `ignition(on:)`. The thread sleeps in `poll` on the line's descriptor and a stop pipe, so it costs
/// nothing while the line is still and ends at once when stopped; a sampled source (an IIO accelerometer) is
/// read each time its interval runs out in that `poll`.
final class MotionWatcher: Sendable {
    private let source: any MotionEdgeSource
    private let debounce: Double
    private let hint: @Sendable () -> Void
    private let ignition: (@Sendable (Bool) -> Void)?
    private let now: @Sendable () -> Double
    private let stopPipe = WakeUpPipe()
    private let stopped = StopFlag()
    private let ended = StopFlag()
    /// The read failure that ended the watch, taken once by `newFailure`.
    private let failure = Mutex<String?>(nil)
    /// The ignition's levels handed over and not yet taken by `newIgnitionLevels`, for the journal.
    private let levels = Mutex<[Bool]>([])

    /// `ignition` is called only when `setup.ignition`.
    init(
        _ setup: MotionSetup, now: @escaping @Sendable () -> Double = monotonicSeconds,
        hint: @escaping @Sendable () -> Void, ignition: @escaping @Sendable (Bool) -> Void = { _ in }
    ) {
        (source, debounce, self.hint, self.now) = (setup.source, setup.debounce, hint, now)
        self.ignition = setup.ignition ? ignition : nil
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

    /// The ignition's levels handed over since the last call, in order: a journal line each lets a user check
    /// the wiring.
    func newIgnitionLevels() -> [String] {
        levels.withLock { taken in defer { taken = [] }; return taken }
            .map { "\(source): ignition \($0 ? "on" : "off")" }
    }

    private func watch() {
        var debouncer = MotionDebounce(interval: debounce)
        var pollers = (
            pollfd(fd: source.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopPipe.descriptor, events: Int16(POLLIN), revents: 0)
        )
        // The ignition: the level last handed over, and when edges since have settled for `debounce` seconds
        // (an engine's crank flickers the line).
        var level: Bool?
        var settledAt: Double? = ignition != nil ? now() : nil
        while !stopped.isSet {
            do throws(MotionSourceError) {
                if let ignition, let at = settledAt, now() >= at {
                    settledAt = nil
                    let on = try source.readLevel()
                    if on != level {
                        ignition(on)
                        levels.withLock { $0.append(on) }
                    }
                    level = on
                }
            } catch {
                fail(error.description)
                return
            }
            // Without a stop pipe, a slice of a second bounds how late a stop is seen; a settling level is
            // looked at again when it is due, or a quarter second on if the clock is not the real one's pace.
            // A sampled source (no descriptor: poll skips it) is read each time its interval runs out.
            var timeout: Int32 = stopPipe.descriptor >= 0 ? -1 : 200
            if let at = settledAt {
                let due = Int32(max(min((at - now()) * 1000, 250), 0).rounded(.up))
                timeout = timeout < 0 ? due : min(timeout, due)
            }
            let sampleEvery = source.sampleInterval.map { Int32(max(1, min($0 * 1000, 3_600_000)).rounded()) }
            if let sampleEvery { timeout = timeout < 0 ? sampleEvery : min(timeout, sampleEvery) }
            let ready = withUnsafeMutableBytes(of: &pollers) { raw in
                poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), 2, timeout)
            }
            if stopped.isSet { return }
            if ready < 0 {
                if errno == EINTR { continue }
                fail(SystemError("poll", source.description, code: errno).description)
                return
            }
            // Edges, or an error or hang-up: the read says which. A sampled source: a sample is due.
            guard pollers.0.revents != 0 || (sampleEvery != nil && ready == 0) else { continue }
            do throws(MotionSourceError) {
                let activations = try source.readActivations()
                if ignition != nil {
                    settledAt = now() + debounce
                } else if activations > 0, debouncer.activated(at: now()) {
                    hint()
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
