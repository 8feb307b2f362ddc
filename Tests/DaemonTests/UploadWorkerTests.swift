import Forwarding
import Foundation
import GPSModel
import LocationStore
import SystemInterface
import TestSupport
import Testing

@testable import Daemon

/// A transport that keeps what it was sent: the worker's wiring of store, scheduler and transport, without a
/// server.
private final class KeepingTransport: UploadTransport, @unchecked Sendable {
    let name = "keeping"
    private let lock = PThreadMutex()
    private var batches: [[StoredLocation]] = []

    func send(_ batch: [StoredLocation], shouldStop: () -> Bool) -> UploadOutcome {
        lock.withLock { batches.append(batch) }
        return UploadOutcome(acknowledged: batch.count, connectionsOpened: 1)
    }

    var sent: [[StoredLocation]] { lock.withLock { batches } }
}

@Suite(.serialized) struct UploadWorkerTests {
    private func location(_ second: Int64, latitude: Double = 31.2304, longitude: Double = 121.4737) -> Location {
        Location(
            timestamp: UTCTime(seconds: 1_796_000_000 + second), latitude: latitude, longitude: longitude,
            horizontalAccuracy: 5, fixMode: .threeD)
    }

    private func worker(
        _ folder: String, schedule: UploadSchedule, coordinates: CoordinateSystem = .wgs84
    ) throws -> (UploadWorker, KeepingTransport, LocationStore) {
        let store = try LocationStore(path: folder + "/store.sqlite")
        try store.setUploaders(["keeping"])
        let transport = KeepingTransport()
        let start = monotonicSeconds()
        let clock = ForwardingClock(anchor: UTCTime(seconds: 1_796_000_000)) { monotonicSeconds() - start }
        let worker = UploadWorker(
            name: "keeping", storePath: folder + "/store.sqlite", schedule: schedule, clock: clock,
            coordinates: coordinates, transport: { _ in transport })
        #expect(worker.start())
        // Rows already stored when the worker opens the store are a backlog, which goes at once: the tests
        // store theirs after.
        try waitFor("the worker to open the store") { worker.status.state != "starting" }
        return (worker, transport, store)
    }

    private func waitFor(_ what: String, timeout: Double = 5, _ condition: () -> Bool) throws {
        let deadline = monotonicSeconds() + timeout
        while !condition() {
            if monotonicSeconds() > deadline { throw TimedOut(what: what) }
            usleep(10_000)
        }
    }

    @Test func aDeferredBatchGoesAtOnceAndAStandardUpdateWaits() throws {
        guard let folder = TemporaryDirectory(prefix: "lodestar-worker") else { throw TimedOut(what: "a folder") }
        defer { folder.remove() }
        let (worker, transport, store) = try worker(folder.path, schedule: UploadSchedule(maxBatchAge: 3600))
        defer { worker.requestStop() }
        _ = try store.append([(location(1), .update)], stored: UTCTime(seconds: 1_796_000_001))
        worker.post(.stored(count: 1, reason: .update))
        usleep(400_000)
        #expect(transport.sent.isEmpty, "a standard update went before its batch was due")
        _ = try store.append([(location(2), .deferredBatch), (location(3), .deferredBatch)], stored: UTCTime(seconds: 1_796_000_002))
        worker.post(.stored(count: 2, reason: .deferredBatch))
        try waitFor("the batch") { transport.sent.count == 1 }
        #expect(transport.sent.first?.map(\.id) == [1, 2, 3])
        try waitFor("the store to record it") { (try? store.queueDepth(for: "keeping")) == 0 }
        // The worker publishes its counters after the store's acknowledgement, the connections at the end of
        // its turn: waited for, not raced (under qemu-user the gap is wide enough to read them before).
        try waitFor("the worker's status") { worker.status.sent == 3 && worker.status.connections >= 1 }
        #expect(worker.status.sent == 3)
        #expect(worker.status.connections == 1)
    }

    @Test func nothingGoesWhileTheReceiverSleepsWhenUploadsWaitForIt() throws {
        guard let folder = TemporaryDirectory(prefix: "lodestar-worker") else { throw TimedOut(what: "a folder") }
        defer { folder.remove() }
        let (worker, transport, store) = try worker(
            folder.path, schedule: UploadSchedule(maxBatchAge: 0, uploadWhileAsleep: false))
        defer { worker.requestStop() }
        worker.post(.receiverAsleep(true))
        _ = try store.append([(location(1), .significantChange)], stored: UTCTime(seconds: 1_796_000_001))
        worker.post(.stored(count: 1, reason: .significantChange))
        usleep(500_000)
        #expect(transport.sent.isEmpty, "sent while the receiver slept")
        #expect(worker.status.state == "held while the receiver sleeps")
        worker.post(.receiverAsleep(false))
        try waitFor("the held batch") { transport.sent.count == 1 }
    }

    @Test func uploadsInGCJ02AreConvertedAndTheStoreKeepsWGS84() throws {
        guard let folder = TemporaryDirectory(prefix: "lodestar-worker") else { throw TimedOut(what: "a folder") }
        defer { folder.remove() }
        let (worker, transport, store) = try worker(folder.path, schedule: UploadSchedule(maxBatchAge: 0), coordinates: .gcj02)
        defer { worker.requestStop() }
        let shanghai = location(1)
        let london = location(2, latitude: 51.5074, longitude: -0.1278)
        _ = try store.append([(shanghai, .update), (london, .update)], stored: UTCTime(seconds: 1_796_000_001))
        worker.post(.stored(count: 2, reason: .update))
        try waitFor("the batch") { transport.sent.flatMap { $0 }.count == 2 }
        let sent = transport.sent.flatMap { $0 }
        let expected = GCJ02.fromWGS84(latitude: shanghai.latitude, longitude: shanghai.longitude)
        #expect(sent[0].location.latitude == expected.latitude && sent[0].location.longitude == expected.longitude)
        #expect(Geodesy.distance(from: sent[0].location, to: shanghai) > 100, "Shanghai was not moved to GCJ-02")
        #expect(sent[1].location == london, "a point outside mainland China was changed")
        var kept: [Location] = []
        try store.forEachLocation(since: nil) { kept.append($0.location) }
        #expect(kept == [shanghai, london])
    }
}
