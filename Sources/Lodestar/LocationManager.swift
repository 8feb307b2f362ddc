import SystemInterface
import Receivers
import Capture
import GPSD
import GPSModel
import Policy
import Synchronization

/// Where a `LocationManager`'s fixes and clock come from.
public enum LocationSource: Sendable {
    /// A live gpsd, on the runtime's monotonic clock. `device` nil watches every device gpsd has.
    case gpsd(host: String = GPSDSession.defaultHost, port: String = GPSDSession.defaultPort, device: String? = nil)
    /// A capture replayed with its `t` as a virtual clock: policy timers fire when the capture's time reaches
    /// them, so a replay gives the same updates every time. `speed` 1 is real time, 10 ten times faster, nil
    /// as fast as possible. The receiver is simulated: while the policy has it in standby or off, the capture's
    /// fixes are dropped, and after a wake the first comes only after the receiver model's time to first fix.
    case replay(CaptureContents, speed: Double? = nil)

    var isLive: Bool {
        if case .gpsd = self { true } else { false }
    }
}

/// What a `LocationManager` tells its application, in order.
public enum LocationUpdate: Sendable, Equatable {
    /// Locations: one from standard updates, several from a deferred batch (oldest first).
    case locations([Location])
    /// An event of docs/contract.md §10 (`paused`, `resumed`, `deferredFinished`, `requestCompleted`, …) with a
    /// sentence saying why.
    case event(PolicyEventKind, detail: String)
    /// The receiver regime the policy chose, and why. With receiver power control (`ReceiverPowerSetup`) the
    /// `power` updates say what the receiver really did; without, the receiver is left as it is.
    case regime(ReceiverRegime, reason: String)
    /// What receiver power control did and saw: identification, a regime commanded, the receiver quiet, the
    /// time to first fix after a wake, a command without effect (docs/power-control.md).
    case power(PowerEvent)
    /// Bytes receiver power control had gpsd write to the receiver, and what they were (`CFG-RST GNSS stop`).
    case transmitted([UInt8], description: String)
    /// Live only: the receiver should be navigating (the policy's regime is continuous or power save, past its
    /// time to first fix) yet has had no usable fix for `LiveOptions.noFixInterval`, again every interval; and
    /// once when a fix comes back after that (`fix again after 3 min 10 s`).
    case noFix(NoFixNotice)
}

/// What a live `LocationManager` does besides locations; a replay ignores them.
public struct LiveOptions: Sendable {
    /// Seconds without a fix, while the receiver should be navigating, before a `.noFix` update and between
    /// them; 0 never.
    public var noFixInterval = NoFixReporter.defaultInterval
    /// Receives every line gpsd sends, the bytes power control writes, its events and the policy's regimes.
    /// Its owner calls `finish()` once `updates` have ended.
    public var recorder: CaptureRecorder?
    /// With `recorder`, also the receiver's own bytes through a second gpsd watch (`"raw":2`).
    public var recordsReceiverBytes = false

    public init(noFixInterval: Double = NoFixReporter.defaultInterval, recorder: CaptureRecorder? = nil, recordsReceiverBytes: Bool = false) {
        self.noFixInterval = noFixInterval
        self.recorder = recorder
        self.recordsReceiverBytes = recordsReceiverBytes
    }
}

/// Why `requestLocation` threw.
public enum LocationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Core Location's `locationUnknown`: no usable fix arrived before the timeout.
    case locationUnknown
    /// The manager shut down (or its replay ended) before the request was answered.
    case canceled
    /// The manager had already finished (shut down, or its replay ended) when the request was made.
    case finished

    public var description: String {
        switch self {
        case .locationUnknown: "no usable fix arrived before the timeout"
        case .canceled: "the location manager shut down before the request was answered"
        case .finished: "the location manager has finished; nothing more will come"
        }
    }
}

/// A manager's updates (`LocationManager.updates`): an `AsyncSequence` that starts a replay when first
/// iterated.
public struct LocationUpdates: AsyncSequence, Sendable {
    public typealias Element = LocationUpdate
    let stream: AsyncStream<LocationUpdate>
    let core: ManagerCore

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<LocationUpdate>.AsyncIterator
        let core: ManagerCore
        var begun = false

        public mutating func next() async -> LocationUpdate? {
            if !begun {
                begun = true
                core.begin()
            }
            return await base.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), core: core)
    }
}

/// The library's front door, modelled on Core Location's `CLLocationManager`: standard updates with a desired
/// accuracy, distance filter and automatic pause; deferred updates; significant-change monitoring; single-
/// shot requests. All of them may run at once and share one receiver (docs/contract.md §2–§8).
///
/// ```swift
/// let manager = LocationManager(source: .gpsd())
/// manager.startUpdatingLocation(UpdatesConfiguration(activityType: .automotiveNavigation))
/// for await update in manager.updates {
///     if case .locations(let locations) = update { print(locations) }
/// }
/// ```
///
/// The policy runs on one thread of the manager's own (the runtime), which alone owns the clock, the
/// timers and, live, the connection to gpsd (read between its timers). Every method returns at
/// once and may be called from any thread or task; calls take effect in the order they were made.
///
/// A live source starts at the first call. A replay starts playing when `updates` is first iterated or a
/// location is requested: calls made before that take effect at the capture's start, which makes a replay
/// deterministic. The manager finishes at `shutdown()`, at the end of a replay, or when it is released:
/// keep a reference for as long as you want updates.
public final class LocationManager: Sendable {
    private let core: ManagerCore

    /// `exitRegime` is the regime the receiver is put in when the manager finishes, after the policy has
    /// shut down; nil leaves it in the policy's last regime. `power` makes the manager power a live receiver
    /// itself (docs/power-control.md): the policy's regimes become commands, their effect is checked and
    /// reported as `power` updates. `receiverControl` is for a control of the application's own instead.
    /// `live` sets the no-fix updates' interval and a capture recorder of the whole run.
    public init(
        source: LocationSource, configuration: PolicyConfiguration = PolicyConfiguration(),
        receiver: ReceiverModel = .genericNMEA, receiverControl: any ReceiverControl = NoReceiverControl(),
        power: ReceiverPowerSetup? = nil, exitRegime: ReceiverRegime? = nil, live: LiveOptions = LiveOptions()
    ) {
        core = ManagerCore(
            source: source, configuration: configuration, receiver: receiver, control: receiverControl,
            power: power, exitRegime: exitRegime, live: live)
    }

    /// A manager whose runtime clock runs `clockRate` times the monotonic clock: tests play an emulated
    /// receiver faster than real time and the policy's timers follow.
    package init(
        source: LocationSource, profile: Profile, power: ReceiverPowerSetup?, clockRate: Double,
        live: LiveOptions = LiveOptions()
    ) {
        core = ManagerCore(
            source: source, configuration: profile.effectivePolicy, receiver: profile.receiver,
            control: NoReceiverControl(), power: power, exitRegime: profile.effectiveExitRegime, clockRate: clockRate,
            live: live)
    }

    /// A manager running `profile`'s policy and receiver model (with its staleness bound filled in for
    /// predictive naps) that leaves the receiver in the profile's exit regime when it finishes. Start its
    /// activities with `profile.startEvents`' settings: `startUpdatingLocation(profile.updates)` and so on;
    /// the profile only configures.
    public convenience init(
        source: LocationSource, profile: Profile, receiverControl: any ReceiverControl = NoReceiverControl(),
        power: ReceiverPowerSetup? = nil, live: LiveOptions = LiveOptions()
    ) {
        self.init(
            source: source, configuration: profile.effectivePolicy, receiver: profile.receiver,
            receiverControl: receiverControl, power: power, exitRegime: profile.effectiveExitRegime, live: live)
    }

    deinit {
        core.release()
    }

    /// The manager's updates from now on: locations, events and regime changes, in order. Each read gives a
    /// new sequence (several consumers each get everything); nothing is dropped while a consumer is slow.
    /// The sequence ends when the manager finishes. Reading the property subscribes; a replay starts playing
    /// when the sequence is first iterated (or a location is requested), so commands given in between still
    /// take effect at the capture's start.
    public var updates: LocationUpdates {
        let (stream, continuation) = AsyncStream.makeStream(of: LocationUpdate.self, bufferingPolicy: .unbounded)
        core.subscribe(continuation)
        return LocationUpdates(stream: stream, core: core)
    }

    /// Every update from now on, handed to `handler` on the manager's own thread in order, then nil when the
    /// manager finishes: for a caller with no task to read `updates` from (the service's loop runs on a thread
    /// of its own). The handler must return quickly; it holds up the manager while it runs.
    package func observeUpdates(_ handler: @escaping @Sendable (LocationUpdate?) -> Void) {
        core.observe(handler)
    }

    /// Starts standard updates (Core Location's `startUpdatingLocation`), or reconfigures running ones.
    public func startUpdatingLocation(_ configuration: UpdatesConfiguration = UpdatesConfiguration()) {
        core.send(.startUpdates(configuration))
    }

    public func stopUpdatingLocation() {
        core.send(.stopUpdates)
    }

    /// One location: the first fix meeting `desiredAccuracy` (nil: that of running updates, else best), or
    /// at the timeout the best fix seen. Concurrent requests share one acquisition. Cancelling the task
    /// cancels the request (it then throws `CancellationError`).
    ///
    /// - Parameter timeout: seconds on the runtime's clock (virtual in a replay); nil is the configuration's
    ///   `requestTimeout` (15 s by default).
    /// - Throws: `LocationError.locationUnknown` when no usable fix came in time; `.canceled` or `.finished`
    ///   when the manager shut down.
    public func requestLocation(timeout: Double? = nil, desiredAccuracy: DesiredAccuracy? = nil) async throws
        -> Location
    {
        let id = core.newRequestID()
        let timeout = timeout ?? core.configuration.requestTimeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                core.request(id, timeout: timeout, desiredAccuracy: desiredAccuracy, continuation: continuation)
            }
        } onCancel: {
            core.cancelRequest(id)
        }
    }

    /// Holds locations and delivers them together once the device has travelled `distance` metres or
    /// `timeout` seconds have passed (nil: no limit), Core Location's deferred updates. Ends with exactly one
    /// `deferredFinished` event.
    public func allowDeferredLocationUpdates(untilTraveled distance: Double? = nil, timeout: Double? = nil) {
        core.send(.allowDeferredUpdates(untilTraveled: distance, timeout: timeout))
    }

    public func disallowDeferredLocationUpdates() {
        core.send(.disallowDeferredUpdates)
    }

    /// Delivers what a deferral holds, now, without ending it.
    public func flush() {
        core.send(.flush)
    }

    /// An event whenever the device has moved 500 m, at most one per 5 minutes, at the lowest power.
    public func startMonitoringSignificantLocationChanges() {
        core.send(.startSignificantChange)
    }

    public func stopMonitoringSignificantLocationChanges() {
        core.send(.stopSignificantChange)
    }

    /// An external sensor (accelerometer, ignition line) says the device moves: paused updates resume at once.
    public func motionHint() {
        core.send(.motionHint)
    }

    /// The ignition's level, from a line that says it: the engine on is a hint, and a pause probes as without a
    /// sensor while it runs; off, a pause leaves the departure to the line (docs/contract.md §4, "Ignition").
    public func ignition(on: Bool) {
        core.send(.ignition(on: on))
    }

    /// Hands the manager the last known location from before a restart (a service's saved state), as Core
    /// Location keeps its cached location across relaunches: until a fix arrives it is `lastKnownLocation`
    /// and the anchor significant-change monitoring measures from. It is never delivered as an update.
    public func restoreLastKnownLocation(_ location: Location) {
        core.send(.restoreLastKnownLocation(location))
    }

    /// The newest fix that passed the checks every mode applies (not too old, a real position), whether or
    /// not it was delivered; with `reduced` accuracy, the last (coarsened) location handed out. nil before
    /// the first.
    public var lastKnownLocation: Location? {
        core.lastKnownLocation
    }

    /// Ends the manager: a deferral's held locations are delivered, pending requests answered (they throw
    /// `LocationError.canceled`), the receiver asked to go off (then into the exit regime, when there is one),
    /// and `updates` end. Returns at once.
    public func shutdown() {
        core.send(.shutdown, begins: true)
    }
}

/// How the policy answered a single-shot request.
enum RequestAnswer {
    case location(Location)
    case failed(RequestError)
}

/// The state the application's side and the runtime's thread share, behind one lock; and the runtime's
/// inbox. Lock order: this state, then the inbox (the inbox never takes this lock).
final class ManagerCore: Sendable {
    let source: LocationSource
    let configuration: PolicyConfiguration
    let receiver: ReceiverModel
    let receiverLink: ReceiverLink
    /// The regime `control` is asked for once the policy has shut down; nil leaves the policy's last one.
    let exitRegime: ReceiverRegime?
    /// Receiver power control, live only.
    let power: ReceiverPowerSetup?
    /// Runtime seconds per monotonic second (live).
    let clockRate: Double
    /// No-fix lines and the capture recorder; live only.
    let live: LiveOptions
    let inbox = Inbox()
    private let state = Mutex(SharedState())

    private enum Phase {
        /// No runtime thread yet; commands wait in the inbox.
        case idle
        case running
        case finished
    }

    private enum RequestSlot {
        case waiting(CheckedContinuation<Location, any Error>, cancelled: Bool)
        /// Cancelled before it was registered (the cancellation handler ran first).
        case cancelledEarly
    }

    private struct SharedState {
        var phase = Phase.idle
        var subscribers: [Int: AsyncStream<LocationUpdate>.Continuation] = [:]
        /// Called on the runtime's thread with each update, then nil at the end.
        var handlers: [@Sendable (LocationUpdate?) -> Void] = []
        var nextSubscriber = 0
        var requests: [RequestID: RequestSlot] = [:]
        var nextRequest: UInt64 = 1
        var lastKnownLocation: Location?
    }

    init(
        source: LocationSource, configuration: PolicyConfiguration, receiver: ReceiverModel,
        control: any ReceiverControl, power: ReceiverPowerSetup? = nil, exitRegime: ReceiverRegime? = nil,
        clockRate: Double = 1, live: LiveOptions = LiveOptions()
    ) {
        self.live = live
        self.source = source
        self.configuration = configuration
        self.receiver = receiver
        receiverLink = ReceiverLink(control: control, model: receiver, live: source.isLive)
        self.exitRegime = exitRegime
        self.power = source.isLive ? power : nil
        self.clockRate = clockRate
    }

    // MARK: The application's side

    /// Posts a command for the runtime. A live source starts at the first one; a replay waits for a reader.
    func send(_ event: PolicyEvent, begins: Bool = false) {
        let posted = state.withLock { state in
            guard state.phase != .finished else { return false }
            inbox.post(.command(event))
            return true
        }
        if posted, begins || source.isLive { begin() }
    }

    /// Starts the runtime's thread, once.
    func begin() {
        let starts = state.withLock { state in
            guard state.phase == .idle else { return false }
            state.phase = .running
            return true
        }
        guard starts else { return }
        let started = DetachedThread.start { [self] in
            LocationRuntime(core: self).run()
        }
        if !started {
            broadcast(.event(.receiverLost, detail: "cannot start the location manager's thread"))
            finish()
        }
    }

    /// The manager was released: its runtime shuts down (or, never started, it just ends).
    func release() {
        let running = state.withLock { state in
            if state.phase == .running { inbox.post(.command(.shutdown)) }
            return state.phase == .running
        }
        if !running { finish() }
    }

    func subscribe(_ continuation: AsyncStream<LocationUpdate>.Continuation) {
        let id: Int? = state.withLock { state in
            guard state.phase != .finished else { return nil }
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
    }

    func observe(_ handler: @escaping @Sendable (LocationUpdate?) -> Void) {
        let added = state.withLock { state in
            guard state.phase != .finished else { return false }
            state.handlers.append(handler)
            return true
        }
        if !added { handler(nil) }
    }

    func newRequestID() -> RequestID {
        state.withLock { state in
            defer { state.nextRequest += 1 }
            return RequestID(state.nextRequest)
        }
    }

    func request(
        _ id: RequestID, timeout: Double, desiredAccuracy: DesiredAccuracy?,
        continuation: CheckedContinuation<Location, any Error>
    ) {
        // Registered and posted under the lock, so a cancellation is posted after the request, never before.
        let refusal: (any Error)? = state.withLock { state in
            if case .cancelledEarly = state.requests[id] {
                state.requests[id] = nil
                return CancellationError()
            }
            guard state.phase != .finished else { return LocationError.finished }
            state.requests[id] = .waiting(continuation, cancelled: false)
            inbox.post(.command(.requestLocation(id, timeout: timeout, desiredAccuracy: desiredAccuracy)))
            return nil
        }
        if let refusal {
            continuation.resume(throwing: refusal)
        } else {
            begin()
        }
    }

    func cancelRequest(_ id: RequestID) {
        state.withLock { state in
            switch state.requests[id] {
            case .waiting(let continuation, _):
                state.requests[id] = .waiting(continuation, cancelled: true)
                inbox.post(.command(.cancelRequest(id)))
            case .cancelledEarly:
                break
            case nil:
                state.requests[id] = .cancelledEarly
            }
        }
    }

    var lastKnownLocation: Location? {
        state.withLock { $0.lastKnownLocation }
    }

    // MARK: The runtime's side

    func broadcast(_ update: LocationUpdate) {
        let (subscribers, handlers) = state.withLock { (Array($0.subscribers.values), $0.handlers) }
        for subscriber in subscribers { subscriber.yield(update) }
        for handler in handlers { handler(update) }
    }

    func setLastKnownLocation(_ location: Location?) {
        state.withLock { $0.lastKnownLocation = location }
    }

    /// Answers request `id` (once; later answers are ignored).
    func answer(_ id: RequestID, _ outcome: RequestAnswer) {
        let slot = state.withLock { $0.requests.removeValue(forKey: id) }
        guard case .waiting(let continuation, let cancelled) = slot else { return }
        switch outcome {
        case .location(let location): continuation.resume(returning: location)
        case .failed(.locationUnknown): continuation.resume(throwing: LocationError.locationUnknown)
        case .failed(.canceled):
            continuation.resume(throwing: cancelled ? CancellationError() as any Error : LocationError.canceled)
        }
    }

    /// The end: every consumer's sequence finishes and every request still waiting throws. Continuations are
    /// resumed and finished outside the lock (a finishing stream calls its termination handler, which locks).
    func finish() {
        let (subscribers, requests, handlers) = state.withLock { state in
            state.phase = .finished
            let taken = (Array(state.subscribers.values), Array(state.requests.values), state.handlers)
            state.subscribers.removeAll()
            state.requests.removeAll()
            state.handlers.removeAll()
            return taken
        }
        for handler in handlers { handler(nil) }
        for case .waiting(let continuation, let cancelled) in requests {
            continuation.resume(throwing: cancelled ? CancellationError() as any Error : LocationError.finished)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
