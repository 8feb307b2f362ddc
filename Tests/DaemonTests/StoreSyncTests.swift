import Forwarding
import GPSModel
import Lodestar
import LocationStore
import Policy
import SystemInterface
import Testing

@testable import Daemon

/// When the service syncs the store (`store.syncInterval`): not per fix, but every interval of its clock, when
/// the receiver goes down, after a deferred batch and at stop; every commit with an interval of 0.
@Suite struct StoreSyncTests {
    private final class ManualSeconds: @unchecked Sendable {
        var now = 0.0
    }

    private func inFolder(_ body: (String) throws -> Void) throws {
        let folder = try #require(TemporaryDirectory(prefix: "lodestar-sync"))
        defer { folder.remove() }
        try body(folder.path)
    }

    private func location(_ second: Int64) -> Location {
        Location(
            timestamp: UTCTime(seconds: 1_796_000_000 + second), latitude: 47, longitude: 8.5, horizontalAccuracy: 5,
            fixMode: .threeD)
    }

    private func forwarder(_ folder: String, syncInterval: Double, seconds: ManualSeconds) throws -> StoreForwarder {
        var configuration = DaemonConfiguration()
        configuration.stateDirectory = folder
        var store = DaemonConfiguration.StoreSettings()
        store.syncInterval = syncInterval
        configuration.store = store
        let clock = ForwardingClock(anchor: UTCTime(seconds: 1_796_000_000)) { seconds.now }
        return try #require(StoreForwarder(
                configuration: configuration, clock: clock, newestDelivered: nil,
                logger: .discarding(label: "store sync test")))
    }

    @Test func fixesAreSyncedEveryIntervalAndWhenTheReceiverGoesDownNotEachOne() throws {
        try inFolder { folder in
            let seconds = ManualSeconds()
            let forwarder = try forwarder(folder, syncInterval: 60, seconds: seconds)
            let opened = forwarder.syncCount
            for second in 1...59 {
                seconds.now = Double(second)
                forwarder.record(.locations([location(Int64(second))]))
                forwarder.tick()
            }
            #expect(forwarder.syncCount == opened, "59 fixes inside the interval: no sync")
            seconds.now = 60
            forwarder.record(.locations([location(60)]))
            forwarder.tick()
            #expect(forwarder.syncCount == opened + 1)
            seconds.now = 61
            forwarder.record(.locations([location(61)]))
            forwarder.record(.regime(.standby, reason: "napping"))
            #expect(forwarder.syncCount == opened + 2, "the receiver went down")
            let filesSynced = forwarder.syncPoints
            seconds.now = 200
            forwarder.tick()
            #expect(forwarder.syncCount == opened + 2, "nothing new to sync")
            forwarder.record(.regime(.continuous, reason: "probing"))
            forwarder.record(.regime(.standby, reason: "napping"))
            #expect(forwarder.syncCount == opened + 2, "down again with nothing new")
            #expect(forwarder.syncPoints == filesSynced, "the files are not synced for a store with nothing new")
            forwarder.record(.regime(.continuous, reason: "awake"))
            forwarder.record(.locations([location(201), location(202)]))
            #expect(forwarder.syncCount == opened + 3, "a deferred batch")
            forwarder.record(.locations([location(203)]))
            forwarder.close(waitingAtMost: 1)
            #expect(forwarder.syncCount == opened + 4, "at stop")
        }
    }

    private func storedCount(_ folder: String) throws -> Int {
        let store = try LocationStore(readingOnly: folder + "/store.sqlite")
        defer { store.close() }
        var count = 0
        try store.forEachLocation(since: nil) { _ in count += 1 }
        return count
    }

    @Test func locationsAreCommittedTogetherWithinTheCommitIntervalAndAnEventAtOnce() throws {
        try inFolder { folder in
            let seconds = ManualSeconds()
            let forwarder = try forwarder(folder, syncInterval: 300, seconds: seconds)
            let interval = Int64(StoreForwarder.commitInterval)
            for second in 0..<interval {
                seconds.now = Double(second)
                forwarder.record(.locations([location(second)]))
                forwarder.tick()
            }
            #expect(try storedCount(folder) == 0, "held for less than the commit interval")
            seconds.now = Double(interval)
            forwarder.tick()
            #expect(try storedCount(folder) == Int(interval), "committed once the first had waited the interval")
            forwarder.record(.locations([location(interval + 1)]))
            forwarder.record(.event(.requestCompleted(RequestID(1), location(interval + 2)), detail: "answered"))
            #expect(try storedCount(folder) == Int(interval) + 2, "a request's answer ends a batch: committed at once")
            forwarder.record(.locations([location(interval + 3)]))
            forwarder.record(.event(.receiverLost, detail: "gpsd went away"))
            #expect(try storedCount(folder) == Int(interval) + 3, "an event commits at once, with what was held")
            forwarder.record(.locations([location(interval + 4)]))
            forwarder.close(waitingAtMost: 1)
            #expect(try storedCount(folder) == Int(interval) + 4, "committed at stop")
        }
    }

    @Test func anIntervalOfZeroLeavesEachCommitToSQLite() throws {
        try inFolder { folder in
            let seconds = ManualSeconds()
            let forwarder = try forwarder(folder, syncInterval: 0, seconds: seconds)
            for second in 1...5 {
                seconds.now = Double(second)
                forwarder.record(.locations([location(Int64(second))]))
                forwarder.tick()
            }
            forwarder.record(.regime(.standby, reason: "napping"))
            forwarder.close(waitingAtMost: 1)
            #expect(forwarder.syncCount == 0)
            let store = try LocationStore(readingOnly: folder + "/store.sqlite")
            var count = 0
            try store.forEachLocation(since: nil) { _ in count += 1 }
            #expect(count == 5)
        }
    }
}
