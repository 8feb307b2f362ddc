import Forwarding
import GPSModel
import LocationStore
import Synchronization
import SystemInterface

/// What `lodestar status` shows of one uploader.
public struct UploadStatus: Sendable, Equatable {
    /// The uploader's name in the store and the config (`owntracks`, `traccar`).
    public var name: String
    /// Where it sends: `owntracks mqtt://broker:1883 owntracks/pi/car`.
    public var destination: String
    /// `idle`, `waiting`, `sending`, `backing off`, `held while the receiver sleeps`, `no store`.
    public var state: String
    /// Locations stored and not yet acknowledged by this server.
    public var queueDepth: Int
    /// UTC time of the last batch the server took whole.
    public var lastSuccess: UTCTime?
    public var lastError: String?
    /// Locations acknowledged and connections opened since the service started.
    public var sent: Int = 0
    public var connections: Int = 0
    /// The longest a location waited between being stored and being acknowledged, seconds on the service's
    /// clock, since the service started; nil before the first.
    public var worstLatency: Double?
}

/// The service's clock for store and forward: seconds since the service started at its clock rate, and the
/// UTC time that stands for them (`anchor` plus those seconds), which the store's `stored` column holds.
public struct ForwardingClock: Sendable {
    public var anchor: UTCTime
    public var seconds: @Sendable () -> Double
    /// Seconds of this clock per wall-clock second (1 live; the demo's clock rate).
    public var rate: Double

    public init(anchor: UTCTime, rate: Double = 1, seconds: @escaping @Sendable () -> Double) {
        self.anchor = anchor
        self.rate = rate
        self.seconds = seconds
    }

    public var now: UTCTime { anchor.adding(seconds: seconds()) }

    /// A stored time as seconds on this clock (negative for rows stored by an earlier run).
    public func seconds(of time: UTCTime) -> Double { time.interval(since: anchor) }
}

/// One uploader at work: its own thread, its own connection to the store, a transport, and the
/// `UploadScheduler` that says when a batch goes. The service thread posts what happened (locations stored,
/// the policy paused, the receiver asleep or awake) and reads back log lines and status; the network is never
/// touched on the service thread, so a slow server cannot hold up a fix.
final class UploadWorker: @unchecked Sendable {
    let name: String
    private let storePath: String
    private let durability: LocationStore.Durability
    private let transport: any UploadTransport
    private let clock: ForwardingClock
    private let coordinates: CoordinateSystem
    private let wake = WakeUpPipe()
    private let stopFlag = StopFlag()
    private let finished = StopFlag()
    private let shared: SharedBox

    private struct Shared: Sendable {
        var inputs: [UploadScheduler.Input] = []
        var logs: [LogEntry] = []
        var status: UploadStatus
    }

    /// What the service thread and the worker's thread (and the transport's log) share.
    private final class SharedBox: Sendable {
        private let state: Mutex<Shared>
        init(_ shared: Shared) { state = Mutex(shared) }
        func withLock<T: Sendable>(_ body: (inout Shared) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// `transport` is made with the worker's log, which its thread may write to.
    init(
        name: String, storePath: String, durability: LocationStore.Durability = .everyCommit,
        schedule: UploadSchedule, clock: ForwardingClock, coordinates: CoordinateSystem,
        transport: (@escaping @Sendable (String) -> Void) -> any UploadTransport
    ) {
        let shared = SharedBox(Shared(status: UploadStatus(name: name, destination: "", state: "starting", queueDepth: 0)))
        self.name = name
        self.storePath = storePath
        self.durability = durability
        self.clock = clock
        self.coordinates = coordinates
        scheduler = UploadScheduler(name: name, schedule: schedule)
        self.shared = shared
        // A transport says only what went wrong beside a send (a battery level it cannot read).
        let made = transport { line in shared.withLock { $0.logs.append(LogEntry(.warning, "upload \(name): \(line)")) } }
        self.transport = made
        shared.withLock { $0.status.destination = made.name }
    }

    /// Starts the thread; false when none could be started.
    func start() -> Bool {
        DetachedThread.start { [self] in
            run()
            finished.set()
        }
    }

    func post(_ input: UploadScheduler.Input) {
        shared.withLock { $0.inputs.append(input) }
        wake.signal()
    }

    func takeLogs() -> [LogEntry] {
        shared.withLock { shared in
            defer { shared.logs = [] }
            return shared.logs
        }
    }

    var status: UploadStatus { shared.withLock { $0.status } }

    /// Asks the thread to stop: a send in flight gives up within about a second, and what the server did not
    /// acknowledge is sent again by the next run.
    func requestStop() {
        stopFlag.set()
        wake.signal()
    }

    var isFinished: Bool { finished.isSet }

    // MARK: The thread

    private var scheduler: UploadScheduler
    private var store: LocationStore?
    private var random = SystemRandomNumberGenerator()

    private func log(_ level: Logger.Level, _ line: String) {
        shared.withLock { $0.logs.append(LogEntry(level, line)) }
    }

    private func run() {
        var nextOpen = 0.0
        var storeProblem: String?
        while !stopFlag.isSet {
            if store == nil, monotonicSeconds() >= nextOpen {
                do throws(StoreError) {
                    let opened = try LocationStore(path: storePath, durability: durability)
                    store = opened
                    if storeProblem != nil { log(.notice, "upload \(name): the store opens again") }
                    storeProblem = nil
                    let waiting = try opened.queueDepth(for: name)
                    let oldest = try opened.oldestPending(for: name).map { clock.seconds(of: $0) }
                    handle(.started(waiting: waiting, oldestStored: oldest))
                } catch {
                    store = nil
                    if storeProblem != error.description {
                        log(.error, "upload \(name): cannot open the store: \(error); trying again every 10 s")
                        storeProblem = error.description
                    }
                    updateStatus { $0.state = "no store"; $0.lastError = error.description }
                    nextOpen = monotonicSeconds() + 10
                }
            }
            // Until the store is open, what happened waits in the inbox (and `started` counts what was stored).
            if store != nil {
                let inputs = shared.withLock { shared in
                    defer { shared.inputs = [] }
                    return shared.inputs
                }
                for input in inputs { handle(input) }
                if let deadline = scheduler.nextDeadline, clock.seconds() >= deadline { handle(.tick) }
            }
            // The deadline is on the service's clock, which may run faster than the wall clock (the demo).
            let untilDeadline = scheduler.nextDeadline.map { max($0 - clock.seconds(), 0) / max(clock.rate, 1e-3) }
            wake.wait(seconds: min(untilDeadline ?? 0.5, 0.5))
        }
        store?.close()
        store = nil
    }

    private func handle(_ input: UploadScheduler.Input) {
        var pending = scheduler.handle(input, now: clock.seconds(), random: Double.random(in: 0..<1, using: &random))
        while !pending.isEmpty {
            let action = pending.removeFirst()
            switch action {
            case .log(let line): log(.info, "upload " + line)
            case .trouble(let line): log(.warning, "upload " + line)
            case .send(let limit): pending += send(limit: limit)
            }
        }
        updateStatus { status in
            status.state = scheduler.stateDescription
            status.queueDepth = scheduler.waiting
            status.connections = scheduler.connectionsOpened
        }
    }

    /// One batch: read it, convert it for the server, send it, record what the server took. Returns the
    /// scheduler's actions for the outcome.
    private func send(limit: Int) -> [UploadScheduler.Action] {
        guard let store else { return [] }
        let batch: [StoredLocation]
        do throws(StoreError) {
            // What goes to the server is on the disk first: a power cut does not take back what it has.
            try store.sync()
            batch = try store.pending(for: name, limit: limit)
        } catch {
            return finish(UploadOutcome(acknowledged: 0, connectionsOpened: 0, failure: "cannot read the store: \(error)"), batch: [], store: store)
        }
        let outgoing =
            coordinates == .wgs84
            ? batch : batch.map { stored in
                var converted = stored
                converted.location = stored.location.converted(to: coordinates)
                return converted
            }
        let outcome = outgoing.isEmpty
            ? UploadOutcome(acknowledged: 0, connectionsOpened: 0)
            : transport.send(outgoing, shouldStop: { [stopFlag] in stopFlag.isSet })
        return finish(outcome, batch: batch, store: store)
    }

    private func finish(_ outcome: UploadOutcome, batch: [StoredLocation], store: LocationStore) -> [UploadScheduler.Action] {
        var outcome = outcome
        let acknowledged = min(max(outcome.acknowledged, 0), batch.count)
        if acknowledged > 0 {
            do throws(StoreError) {
                try store.acknowledge(name, through: batch[acknowledged - 1].id)
            } catch {
                // Not recorded: they go again (at-least-once), and the log says why.
                outcome.failure = outcome.failure ?? "cannot record what was sent in the store: \(error)"
                log(.error, "upload \(name): cannot record what was sent in the store: \(error)")
            }
            let now = clock.seconds()
            let latencies = batch[..<acknowledged].map { now - clock.seconds(of: $0.stored) }
            updateStatus { status in
                status.sent += acknowledged
                if outcome.failure == nil { status.lastSuccess = clock.now }
                if let worst = latencies.max() { status.worstLatency = max(status.worstLatency ?? worst, worst) }
            }
        }
        if let failure = outcome.failure { updateStatus { $0.lastError = failure } }
        let waitingAfter = (try? store.queueDepth(for: name)) ?? max(scheduler.waiting - acknowledged, 0)
        return scheduler.handle(
            .sendFinished(outcome, batchSize: batch.count, waitingAfter: waitingAfter), now: clock.seconds(),
            random: Double.random(in: 0..<1, using: &random))
    }

    private func updateStatus(_ change: (inout UploadStatus) -> Void) {
        shared.withLock { change(&$0.status) }
    }
}

extension UploadScheduler {
    /// The state as `lodestar status` words it.
    var stateDescription: String {
        switch state {
        case .idle: "idle"
        case .collecting: "waiting for a batch"
        case .sending: "sending"
        case .backingOff: "backing off"
        case .held: "held while the receiver sleeps"
        }
    }
}
