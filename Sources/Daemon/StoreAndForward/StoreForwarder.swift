import Forwarding
import GPSModel
import HTTPUpload
import Lodestar
import LocationStore
import MQTTUpload
import Policy
import SystemInterface

/// The store and its uploaders as the service runs them. On the service's thread it writes each delivered
/// location (with why it was delivered) and each event to the store and tells every uploader; each uploader
/// sends from the store on its own thread (`UploadWorker`). Bounds are applied every minute.
///
/// Locations delivered one by one are committed together, at most `commitInterval` after the first of them:
/// each commit takes SQLite's locks and writes whole pages to the WAL, and one per fix was most of the
/// daemon's system calls and of its writes to the card (bench/daemon.sh). An event, a location that ends an
/// upload batch (a deferred batch, a significant change, a request's answer), a sync, and an interval of 0
/// commit at once.
final class StoreForwarder {
    /// How long a delivered location may wait in memory before its commit: what a crash of the service (not a
    /// power cut, which loses the sync interval) can cost the store and the uploads.
    static let commitInterval = 5.0
    private let store: LocationStore
    private var workers: [UploadWorker] = []
    private let clock: ForwardingClock
    private let log: Logger
    /// The newest location stored: significant-change's first event repeats the last known location, which
    /// is already in the store.
    private var newestStored: UTCTime?
    /// A `deferredFinished` event comes just before its batch (Core Location's order).
    private var deferralEnded = false
    private var asleep: Bool?
    /// Why the store cannot be written now, nil while it can.
    private(set) var writeProblem: String?
    /// Locations the store could not write (a full disk): they reach no uploader.
    private(set) var lost = 0
    private var nextBounds = 0.0
    private(set) var dropped = 0
    /// `store.syncInterval`: 0 syncs every commit.
    private let syncInterval: Double
    private var nextSync = 0.0
    /// Syncs of the store's commits so far (status and the flash bench).
    var syncCount: Int { store.syncCount }
    /// Delivered and not yet committed, in order, each with when it was delivered.
    private var heldLocations: [(Location, DeliveryReason, stored: UTCTime)] = []
    private var heldEvents: [(kind: String, detail: String, at: UTCTime)] = []
    /// When the oldest held record came, on the forwarder's clock.
    private var heldSince: Double?
    /// Every location goes to the uploaders as it comes (an upload per location): nothing is held.
    private let commitsEachLocation: Bool
    /// The times the store synced something new (at its interval, the receiver going down, a deferred batch),
    /// or was asked to when it syncs each commit or cannot be written: the service syncs its files after each,
    /// so they follow the same rule. A sync with nothing new does not count: parked, the receiver goes down
    /// after each probe with only a regime line written, and the files' own interval covers those.
    private(set) var syncPoints = 0

    /// Opens the store the config names and starts its uploaders; nil (logged) when there is no store or it
    /// cannot be opened, and the service runs on without it.
    init?(
        configuration: DaemonConfiguration, clock: ForwardingClock, newestDelivered: UTCTime?, logger log: Logger
    ) {
        guard let settings = configuration.store else { return nil }
        let path = DaemonConfiguration.resolve(settings.path, under: configuration.stateDirectory)
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex,
            let problem = DaemonService.makeDirectories(String(path[..<slash]))
        {
            log.error("cannot open the store: \(problem); running without it, nothing is uploaded")
            return nil
        }
        let bounds = StoreBounds(maxBytes: settings.maxBytes, maxAge: settings.maxAgeDays.map { Double($0) * 86_400 })
        let durability: LocationStore.Durability = settings.syncInterval > 0 ? .whenSynced : .everyCommit
        syncInterval = settings.syncInterval
        commitsEachLocation = settings.syncInterval <= 0 || (!configuration.upload.names.isEmpty && configuration.upload.maxBatchAge <= 0)
        do throws(StoreError) {
            store = try LocationStore(path: path, bounds: bounds, durability: durability)
            try store.setUploaders(configuration.upload.names)
        } catch {
            log.error("cannot open the store: \(error); running without it, nothing is uploaded")
            return nil
        }
        for notice in store.notices { log.warning("store: \(notice)") }
        self.clock = clock
        self.log = log
        nextSync = clock.seconds() + syncInterval
        newestStored = newestDelivered
        let upload = configuration.upload
        let schedule = UploadSchedule(
            maxBatchAge: upload.maxBatchAge, uploadWhileAsleep: upload.uploadWhileAsleep,
            initialBackoff: upload.initialBackoff, maxBackoff: upload.maxBackoff)
        var transports: [(String, (@escaping @Sendable (String) -> Void) -> any UploadTransport)] = []
        if let owntracks = upload.owntracks { transports.append(("owntracks", { _ in Self.transport(owntracks) })) }
        if let traccar = upload.traccar { transports.append(("traccar", { Self.transport(traccar, log: $0) })) }
        for (name, transport) in transports {
            let worker = UploadWorker(
                name: name, storePath: path, durability: durability, schedule: schedule, clock: clock,
                coordinates: configuration.coordinates, transport: transport)
            if worker.start() {
                workers.append(worker)
                log.info("upload \(name): to \(worker.status.destination)")
            } else {
                log.error("upload \(name): cannot start its thread; not uploading there")
            }
        }
    }

    static func transport(_ settings: DaemonConfiguration.OwnTracksUpload) -> any UploadTransport {
        OwnTracksMQTTTransport(
            settings: OwnTracksMQTTSettings(
                host: settings.host, port: settings.port, user: settings.user, device: settings.device,
                trackerID: settings.trackerID, username: settings.username, password: settings.password,
                tls: settings.tls, caFile: settings.caFile, insecure: settings.insecure, timeout: settings.timeout))
    }

    static func transport(
        _ settings: DaemonConfiguration.TraccarUpload, log: @escaping @Sendable (String) -> Void
    ) -> any UploadTransport {
        TraccarHTTPTransport(
            settings: TraccarHTTPSettings(
                url: settings.url, deviceID: settings.deviceID, method: settings.method == .get ? .get : .post,
                batterySource: settings.batterySource, caFile: settings.caFile, insecure: settings.insecure,
                timeout: settings.timeout, username: settings.username, password: settings.password),
            log: log)
    }

    /// What the service saw, in order.
    func record(_ update: LocationUpdate) {
        switch update {
        case .locations(let locations):
            let reason: DeliveryReason = deferralEnded || locations.count > 1 ? .deferredBatch : .update
            deferralEnded = false
            store(locations, reason: reason)
            // A batch the application waited for is on the disk once it has it.
            if reason == .deferredBatch { sync() }
        case .event(let kind, let detail):
            appendEvent(kind.name, detail)
            switch kind {
            case .deferredFinished: deferralEnded = true
            case .significantChange(let location): store([location], reason: .significantChange)
            case .requestCompleted(_, let location): store([location], reason: .request)
            case .paused:
                // Committed before the trigger: the batch it sends holds them.
                sync()
                post(.paused)
            default: break
            }
        case .regime(let regime, _):
            let sleeping = regime == .off || regime == .standby
            if sleeping != asleep {
                asleep = sleeping
                // Nothing new comes while the receiver sleeps: what came is written down now.
                if sleeping { sync() }
                post(.receiverAsleep(sleeping))
            }
        case .power, .transmitted, .noFix:
            break
        }
    }

    private func store(_ locations: [Location], reason: DeliveryReason) {
        let fresh = locations.filter { location in newestStored.map { location.timestamp > $0 } ?? true }
        guard !fresh.isEmpty else { return }
        let now = clock.now
        heldLocations.append(contentsOf: fresh.map { ($0, reason, now) })
        newestStored = fresh.map(\.timestamp).max()
        hold()
        // A location that ends an upload batch goes to the uploaders at once.
        if reason != .update || commitsEachLocation { commit() }
    }

    /// Events are few (the regime, a receiver lost, a pause) and what one looks for after a crash: committed at
    /// once, with the locations held before them.
    private func appendEvent(_ kind: String, _ detail: String) {
        heldEvents.append((kind, detail, clock.now))
        hold()
        commit()
    }

    private func hold() {
        if heldSince == nil { heldSince = clock.seconds() }
    }

    /// Writes what is held in one transaction and tells the uploaders, a run of locations stored for the same
    /// reason at a time.
    private func commit() {
        guard heldSince != nil else { return }
        let (locations, events) = (heldLocations, heldEvents)
        (heldLocations, heldEvents, heldSince) = ([], [], nil)
        do throws(StoreError) {
            try store.append(locations, events: events)
            recovered()
        } catch {
            lost += locations.count
            failed(error)
            return
        }
        var start = locations.startIndex
        while start < locations.endIndex {
            let reason = locations[start].1
            let end = locations[start...].firstIndex { $0.1 != reason } ?? locations.endIndex
            post(.stored(count: end - start, reason: reason))
            start = end
        }
    }

    /// Syncs what was committed (nothing when nothing was), and counts the next interval from here.
    private func sync() {
        commit()
        nextSync = clock.seconds() + syncInterval
        let synced = store.syncCount
        do throws(StoreError) {
            try store.sync()
            if store.syncCount != synced || store.durability != .whenSynced { syncPoints += 1 }
        } catch {
            syncPoints += 1
            failed(error)
        }
    }

    private func post(_ input: UploadScheduler.Input) {
        for worker in workers { worker.post(input) }
    }

    private func failed(_ error: StoreError) {
        guard writeProblem != error.description else { return }
        writeProblem = error.description
        log.error(
            "cannot write to the store: \(error); the other outputs go on, and status counts the "
                + "locations it loses")
    }

    private func recovered() {
        guard writeProblem != nil else { return }
        writeProblem = nil
        log.notice("the store is written again (\(lost) location\(lost == 1 ? "" : "s") lost since start)")
    }

    /// About once a second: the uploaders' log lines, and the bounds every minute of the service's clock.
    func tick() {
        for worker in workers {
            for entry in worker.takeLogs() { log.log(entry.level, entry.text) }
        }
        let now = clock.seconds()
        if let heldSince, now - heldSince >= Self.commitInterval { commit() }
        if syncInterval > 0, now >= nextSync { sync() }
        guard now >= nextBounds else { return }
        nextBounds = now + 60
        do throws(StoreError) {
            let result = try store.enforceBounds(now: clock.now)
            if result.droppedUnsent > 0 {
                dropped += result.droppedUnsent
                log.warning(
                    "the store is full: dropped the \(result.droppedUnsent) oldest locations not yet "
                        + "uploaded (\(dropped) since start); raise store.maxBytes or check the uploads")
            }
        } catch {
            failed(error)
        }
    }

    var uploads: [UploadStatus] { workers.map(\.status) }

    /// Stops the uploaders (each gives up a send in flight within about a second; the service waits at most
    /// `seconds` in all) and closes the store.
    func close(waitingAtMost seconds: Double) {
        for worker in workers { worker.requestStop() }
        let deadline = monotonicSeconds() + seconds
        while workers.contains(where: { !$0.isFinished }), monotonicSeconds() < deadline { sleepSeconds(0.01) }
        for worker in workers {
            for entry in worker.takeLogs() { log.log(entry.level, entry.text) }
        }
        workers = []
        sync()
        store.close()
    }
}
