import GPSModel
import Lodestar
import Synchronization
import SystemInterface

#if canImport(Glibc)
    import Glibc
#endif

/// What the service drives: one run of a setup, whose updates it takes on its own thread, or which hands them
/// over on the run's thread (`deliverDirectly`).
public protocol DaemonRun: AnyObject {
    /// Returns when an update or the end is waiting, or after `seconds`.
    func waitForUpdates(seconds: Double)
    /// The same, and also when one of `descriptors` is readable: true then.
    func waitForUpdates(seconds: Double, watching descriptors: [Int32]) -> Bool
    /// The updates since the last take, and whether the run has ended.
    func take() -> (updates: [LocationUpdate], finished: Bool)
    /// Ended, with every update taken.
    var isFinished: Bool { get }
    /// Puts the receiver in the exit regime and ends the run; updates go on until it has.
    func shutDown()
    /// The failure that ended the run's capture, once; the run goes on without it.
    func newCaptureFailure() -> String?
    /// Closes the capture once the run has ended; what went wrong with it, if anything.
    func finishCapture() -> String?
    /// The failure that ended the watch of the motion source, once.
    func newMotionFailure() -> String?
    /// The ignition line's levels since the last call, a sentence each.
    func newIgnitionLevels() -> [String]
    /// From now on offers each update to `taker` first, on the thread that made it; one it refuses waits for
    /// `take()` as before. A run without a thread of its own ignores it.
    func deliverDirectly(to taker: any UpdateTaker)
}

/// Who a run's thread offers each update to. A class rather than a closure: a closure kept in a generic
/// container (a `Mutex`) is called through reabstraction thunks that copy the update, which cost more than a
/// quarter of `run`'s CPU at 200x (perf, bench/daemon.sh cpu).
public protocol UpdateTaker: AnyObject, Sendable {
    /// True when it took `update`; false leaves it to the run's inbox.
    func take(_ update: LocationUpdate) -> Bool
}

extension DaemonRun {
    public func newMotionFailure() -> String? { nil }
    public func newIgnitionLevels() -> [String] { [] }
    public func waitForUpdates(seconds: Double, watching descriptors: [Int32]) -> Bool {
        waitForUpdates(seconds: seconds)
        return false
    }
    public func deliverDirectly(to taker: any UpdateTaker) {}
}

/// One `LocationManager` running a setup's profile against gpsd, and the updates it gave that the service has
/// not taken.
public final class ManagedRun: DaemonRun {
    let manager: LocationManager
    private let inbox = UpdateInbox()
    /// Who is offered each update before the inbox (`deliverDirectly`).
    private let directTaker = DirectTaker()
    private var shutDownAsked = false

    /// The capture of the run, when the config asks for one.
    let recorder: CaptureRecorder?
    /// The watch of the setup's motion source, for as long as the run lasts.
    private let motionWatcher: MotionWatcher?

    public init(setup: DaemonSetup, restoring location: Location?) {
        let configuration = setup.configuration
        let gpsd = configuration.gpsd
        if let capture = configuration.outputs.capture {
            let path = DaemonConfiguration.resolve(capture.path, under: configuration.stateDirectory)
            // Its folder is made as the track's are; a failure shows as the recorder's own when it opens the file.
            if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
                _ = DaemonService.makeDirectories(String(path[..<slash]))
            }
            var options = CaptureRecorder.Options(path: path)
            options.host = gpsd.host
            options.device = gpsd.device
            options.note = "lodestar run, profile \(setup.profile.name)"
            options.rotation = CaptureRecorder.Rotation(
                maxBytes: capture.rotation.maxBytes, daily: capture.rotation.daily, keep: capture.rotation.keep)
            recorder = CaptureRecorder(options: options)
        } else {
            recorder = nil
        }
        manager = LocationManager(
            source: .gpsd(host: gpsd.host, port: gpsd.port, device: gpsd.device), profile: setup.profile,
            power: setup.power, clockRate: setup.clockRate,
            live: LiveOptions(
                noFixInterval: configuration.status.noFixInterval, recorder: recorder,
                recordsReceiverBytes: configuration.outputs.capture?.raw ?? false))
        let inbox = inbox
        let directTaker = directTaker
        // A callback rather than a task reading `updates`: the service's thread is not the cooperative pool's,
        // and a blocked pool must not hold up the track.
        manager.observeUpdates { update in
            guard let update else { return inbox.finish() }
            if let taker = directTaker.current, taker.take(update) { return }
            inbox.post(update)
        }
        if let location { manager.restoreLastKnownLocation(location) }
        let profile = setup.profile
        if profile.updatesEnabled {
            manager.startUpdatingLocation(profile.updates)
            if let deferred = profile.deferred {
                manager.allowDeferredLocationUpdates(untilTraveled: deferred.untilTraveled, timeout: deferred.timeout)
            }
        }
        if profile.significantChange { manager.startMonitoringSignificantLocationChanges() }
        if let motion = setup.motion {
            let manager = manager
            let watcher = MotionWatcher(motion, hint: { manager.motionHint() }, ignition: { manager.ignition(on: $0) })
            _ = watcher.start()
            motionWatcher = watcher
        } else {
            motionWatcher = nil
        }
    }

    public var isFinished: Bool { inbox.isFinished }

    public func shutDown() {
        guard !shutDownAsked else { return }
        shutDownAsked = true
        // Before the manager's exit regime: a hint now would wake what is being put down.
        motionWatcher?.stop()
        manager.shutdown()
    }

    public func newMotionFailure() -> String? { motionWatcher?.newFailure() }
    public func newIgnitionLevels() -> [String] { motionWatcher?.newIgnitionLevels() ?? [] }

    public func waitForUpdates(seconds: Double) { _ = inbox.wait(seconds: seconds) }

    public func waitForUpdates(seconds: Double, watching descriptors: [Int32]) -> Bool {
        inbox.wait(seconds: seconds, watching: descriptors)
    }

    public func deliverDirectly(to taker: any UpdateTaker) {
        directTaker.current = taker
    }

    public func finishCapture() -> String? {
        guard let recorder, let failure = recorder.finish(), !reportedCaptureFailure else { return nil }
        return "capture \(recorder.options.path): \(failure)"
    }

    private var reportedCaptureFailure = false

    public func newCaptureFailure() -> String? {
        guard !reportedCaptureFailure, let recorder, let failure = recorder.failure else { return nil }
        reportedCaptureFailure = true
        return "capture \(recorder.options.path): \(failure); the run goes on without a capture"
    }
    public func take() -> (updates: [LocationUpdate], finished: Bool) { inbox.take() }
}

/// Who the manager's thread offers each update to first.
final class DirectTaker: Sendable {
    private let slot = Mutex<(any UpdateTaker)?>(nil)

    var current: (any UpdateTaker)? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

/// Updates handed from the manager's sequence to the service's thread, which sleeps until one comes. The
/// manager writes the wake-up byte only when the service's thread is waiting for it (`waiting`): while the
/// service works through what it took, further updates are only appended, and it takes them before it
/// waits again. One byte per wait, not one per update.
final class UpdateInbox: Sendable {
    private struct State {
        var updates: [LocationUpdate] = []
        var finished = false
        /// The service's thread checked that nothing was pending and is (about to be) in `poll`.
        var waiting = false
    }

    private let state = Mutex(State())
    private let wakeUp = WakeUpPipe()

    func post(_ update: LocationUpdate) {
        let wake = state.withLock { state in
            state.updates.append(update)
            defer { state.waiting = false }
            return state.waiting
        }
        if wake { wakeUp.signal() }
    }

    func finish() {
        state.withLock { $0.finished = true }
        wakeUp.signal()
    }

    var isFinished: Bool { state.withLock { $0.finished && $0.updates.isEmpty } }

    /// Returns when an update is waiting, or the end, or one of `descriptors` is readable (true), or after
    /// `seconds`.
    @discardableResult
    func wait(seconds: Double, watching descriptors: [Int32] = []) -> Bool {
        guard wakeUp.descriptor >= 0 else {
            if state.withLock({ $0.updates.isEmpty && !$0.finished }) { sleepSeconds(min(seconds, 0.02)) }
            return false
        }
        // Checked and marked in one lock: an update posted after this sees `waiting` and writes the byte.
        let idle = state.withLock { state in
            state.waiting = state.updates.isEmpty && !state.finished
            return state.waiting
        }
        guard idle else { return false }
        var watched = [pollfd(fd: wakeUp.descriptor, events: Int16(POLLIN), revents: 0)]
        for descriptor in descriptors { watched.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        // NaN or a wait past an hour from a skewed clock: never a trap in the Int32 conversion.
        let ready = poll(&watched, nfds_t(watched.count), Int32((seconds > 0 ? min(seconds, 3600) : 0) * 1000))
        state.withLock { $0.waiting = false }
        // Read only when the byte came: a timeout read nothing but EAGAIN. A byte written after the timeout
        // (its update was posted as the wait ended) wakes the next wait at once and is read then.
        if ready > 0, watched[0].revents != 0 { wakeUp.drain() }
        return ready > 0 && watched.dropFirst().contains { $0.revents != 0 }
    }

    func take() -> (updates: [LocationUpdate], finished: Bool) {
        state.withLock { state in
            defer { state.updates.removeAll() }
            return (state.updates, state.finished)
        }
    }
}
