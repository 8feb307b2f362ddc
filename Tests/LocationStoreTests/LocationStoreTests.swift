import Forwarding
import GPSModel
import SystemInterface
import Testing

@testable import LocationStore

@Suite struct LocationStoreRowTests {
    @Test func everyFieldReadsBackIdentical() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            let store = try LocationStore(path: path)
            let input: [(Location, DeliveryReason)] =
                batch(0..<12) + (0..<4).map { (sparseLocation($0), DeliveryReason.allCases[$0]) }
            let stored = UTCTime(seconds: 1_780_000_100, nanoseconds: 123_456_789)
            let rows = try store.append(input, stored: stored)
            #expect(rows.count == input.count)
            #expect(rows.map(\.location) == input.map(\.0))
            #expect(rows.map(\.reason) == input.map(\.1))
            #expect(rows.allSatisfy { $0.stored == stored })
            #expect(zip(rows, rows.dropFirst()).allSatisfy { $0.id < $1.id })
            #expect(try allLocations(store) == rows)
            store.close()

            // Another connection, after the first closed: what is on disk.
            let again = try LocationStore(path: path)
            #expect(again.notices.isEmpty)
            #expect(try allLocations(again) == rows)
            try again.setUploaders(["server"])
            #expect(try again.pending(for: "server", limit: 100) == rows)
        }
    }

    @Test func idsAreNeverReusedAfterTheNewestRowsAreDeleted() throws {
        try withStore(bounds: StoreBounds(maxAge: 1)) { store in
            let first = try store.append(batch(0..<5), stored: UTCTime(seconds: 1_000))
            _ = try store.enforceBounds(now: UTCTime(seconds: 2_000))
            #expect(try allLocations(store).isEmpty)
            let second = try store.append(batch(5..<6), stored: UTCTime(seconds: 2_000))
            #expect(second.first?.id == (first.last?.id ?? 0) + 1)
        }
    }

    @Test func eventsReadBackAndSinceFilters() throws {
        try withStore { store in
            for index in 0..<6 {
                try store.appendEvent(
                    kind: "regime", detail: "tracking → paused, \"quoted\" #\(index)",
                    at: UTCTime(seconds: 1_780_000_000 + Int64(index) * 10, nanoseconds: 5))
            }
            var events: [StoredEvent] = []
            try store.forEachEvent(since: nil) { events.append($0) }
            #expect(events.map(\.detail) == (0..<6).map { "tracking → paused, \"quoted\" #\($0)" })
            #expect(events.map(\.at.seconds) == (0..<6).map { 1_780_000_000 + Int64($0) * 10 })
            #expect(events.allSatisfy { $0.kind == "regime" && $0.at.nanoseconds == 5 })

            var later: [StoredEvent] = []
            try store.forEachEvent(since: UTCTime(seconds: 1_780_000_030, nanoseconds: 5)) { later.append($0) }
            #expect(later == Array(events.suffix(3)))

            let rows = try store.append(batch(0..<20), stored: UTCTime(seconds: 1_780_001_000))
            let since = fullLocation(12).timestamp
            var recent: [StoredLocation] = []
            try store.forEachLocation(since: since) { recent.append($0) }
            #expect(recent == Array(rows.suffix(8)))
        }
    }

    @Test func theFileIsWALWithIncrementalVacuumAndFullSync() throws {
        try withDirectory { directory in
            let store = try LocationStore(path: directory + "/store.sqlite")
            #expect(store.notices == ["\(directory)/store.sqlite: created a new store (schema 2)"])
            let connection = store.connection
            #expect(try connection.texts("PRAGMA journal_mode", doing: "test") == ["wal"])
            #expect(try connection.integer("PRAGMA auto_vacuum", doing: "test") == 2)
            #expect(try connection.integer("PRAGMA synchronous", doing: "test") == 2)
            // A bounded page cache, so the daemon's memory stays flat over days of fixes.
            #expect(try connection.integer("PRAGMA cache_size", doing: "test") == -256)
            #expect(try connection.integer("PRAGMA user_version", doing: "test") == StoreSchema.current)
            #expect(StoreSchema.current == 2)
        }
    }

    @Test func aClosedStoreThrowsNamingTheFile() throws {
        try withDirectory { directory in
            let store = try LocationStore(path: directory + "/store.sqlite")
            store.close()
            #expect(throws: StoreError.self) { try store.append(batch(0..<1), stored: UTCTime(seconds: 1)) }
            let error = caught { () throws(StoreError) in _ = try store.sizeInBytes() }
            #expect(error?.description.hasPrefix(directory + "/store.sqlite: ") == true)
        }
    }
}

@Suite struct LocationStoreUploaderTests {
    @Test func eachUploaderReadsFromItsOwnPosition() throws {
        try withStore { store in
            let rows = try store.append(batch(0..<10), stored: UTCTime(seconds: 1_000))
            try store.setUploaders(["mqtt", "http"])
            #expect(try store.pending(for: "mqtt", limit: 4) == Array(rows[0..<4]))
            #expect(try store.queueDepth(for: "mqtt") == 10)
            try store.acknowledge("mqtt", through: rows[3].id)
            #expect(try store.pending(for: "mqtt", limit: 4) == Array(rows[4..<8]))
            #expect(try store.queueDepth(for: "mqtt") == 6)
            #expect(try store.queueDepth(for: "http") == 10)

            // A position never moves back.
            try store.acknowledge("mqtt", through: rows[1].id)
            #expect(try store.queueDepth(for: "mqtt") == 6)

            let later = try store.append(batch(10..<12), stored: UTCTime(seconds: 2_000, nanoseconds: 7))
            try store.acknowledge("mqtt", through: rows[9].id)
            #expect(try store.oldestPending(for: "mqtt") == UTCTime(seconds: 2_000, nanoseconds: 7))
            #expect(try store.oldestPending(for: "http") == UTCTime(seconds: 1_000))
            try store.acknowledge("mqtt", through: later[1].id)
            #expect(try store.oldestPending(for: "mqtt") == nil)
            #expect(try store.pending(for: "mqtt", limit: 10).isEmpty)
        }
    }

    @Test func aNewUploaderStartsAtTheOldestLocationKeptAndUnlistedOnesAreForgotten() throws {
        try withStore(bounds: StoreBounds(maxAge: 100)) { store in
            try store.setUploaders(["old"])
            let early = try store.append(batch(0..<5), stored: UTCTime(seconds: 1_000))
            let late = try store.append(batch(5..<8), stored: UTCTime(seconds: 1_500))
            try store.acknowledge("old", through: late[2].id)
            // The first five are past the age bound and acknowledged: deleted.
            #expect(try store.enforceBounds(now: UTCTime(seconds: 1_550)) == BoundsEnforcement(deletedUploaded: 5))
            try store.setUploaders(["old", "new"])
            #expect(try store.pending(for: "new", limit: 10) == late)
            #expect(early.count == 5)

            // Keeping "new" alone forgets "old": its position is gone, and deletion no longer waits for it.
            try store.setUploaders(["new"])
            #expect(throws: StoreError.self) { try store.pending(for: "old", limit: 1) }
            #expect(throws: StoreError.self) { try store.acknowledge("old", through: 1) }
            #expect(try store.queueDepth(for: "new") == 3)
        }
    }

    @Test func anUploaderAddedToAnEmptiedStoreGetsOnlyNewLocations() throws {
        try withStore(bounds: StoreBounds(maxAge: 10)) { store in
            _ = try store.append(batch(0..<4), stored: UTCTime(seconds: 1_000))
            _ = try store.enforceBounds(now: UTCTime(seconds: 2_000))
            try store.setUploaders(["late"])
            #expect(try store.queueDepth(for: "late") == 0)
            let next = try store.append(batch(4..<6), stored: UTCTime(seconds: 2_000))
            #expect(try store.pending(for: "late", limit: 10) == next)
        }
    }

    /// The daemon's pattern: one thread stores, another reads pending rows and acknowledges them, each with its
    /// own connection to the same file. Every row arrives once, in order, and neither side fails with a lock.
    @Test func aWriterAndAnUploaderOnTwoConnectionsSeeEveryRowOnce() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            let writer = try LocationStore(path: path, bounds: StoreBounds(maxBytes: 4 << 20))
            try writer.setUploaders(["uploader"])
            let total = 3_000
            let finished = StopFlag()
            let outcome = PThreadMutex()
            nonisolated(unsafe) var received: [Int64] = []
            nonisolated(unsafe) var readerError: String?
            let started = DetachedThread.start {
                do {
                    let reader = try LocationStore(path: path)
                    let deadline = monotonicSeconds() + 60
                    while monotonicSeconds() < deadline {
                        let rows = try reader.pending(for: "uploader", limit: 50)
                        if let last = rows.last {
                            try reader.acknowledge("uploader", through: last.id)
                            outcome.withLock { received += rows.map(\.id) }
                        } else if outcome.withLock({ received.count }) >= total {
                            break
                        }
                    }
                } catch {
                    outcome.withLock { readerError = "\(error)" }
                }
                finished.set()
            }
            try #require(started)
            var written: [Int64] = []
            var index = 0
            while index < total {
                let size = min(7, total - index)
                written += try writer.append(batch(index..<(index + size)), stored: UTCTime(seconds: 1_000)).map(\.id)
                index += size
                if index % 700 == 0 { _ = try writer.enforceBounds(now: UTCTime(seconds: 1_000)) }
            }
            while !finished.isSet { sleepSeconds(0.01) }
            outcome.withLock {
                #expect(readerError == nil)
                #expect(received == written)
            }
            #expect(try writer.queueDepth(for: "uploader") == 0)
        }
    }
}

/// `Durability.whenSynced`: commits go to the WAL without a sync (`synchronous = NORMAL`), and `sync()` syncs
/// them, this connection's and another's, once each: what flash wears on is the count of syncs.
@Suite struct LocationStoreDurabilityTests {
    @Test func commitsAreSyncedWhenAskedAndOnlyWhenSomethingWasCommitted() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            let store = try LocationStore(path: path, durability: .whenSynced)
            #expect(try store.connection.integer("PRAGMA synchronous", doing: "test") == 1)
            try store.sync()
            let afterOpening = store.syncCount
            try store.sync()
            #expect(store.syncCount == afterOpening, "nothing committed since")
            _ = try store.append(batch(0..<3), stored: UTCTime(seconds: 1_000))
            try store.sync()
            #expect(store.syncCount == afterOpening + 1)
            try store.sync()
            #expect(store.syncCount == afterOpening + 1)

            // Another connection's commit (an uploader's acknowledgement) is synced too.
            let other = try LocationStore(path: path, durability: .whenSynced)
            try other.setUploaders(["server"])
            try store.sync()
            #expect(store.syncCount == afterOpening + 2)
            other.close()
            store.close()
            let again = try LocationStore(readingOnly: path)
            #expect(try allLocations(again).count == 3)
        }
    }

    @Test func everyCommitIsSyncedBySQLiteAndSyncHasNothingToDo() throws {
        try withDirectory { directory in
            let store = try LocationStore(path: directory + "/store.sqlite", durability: .everyCommit)
            #expect(try store.connection.integer("PRAGMA synchronous", doing: "test") == 2)
            _ = try store.append(batch(0..<3), stored: UTCTime(seconds: 1_000))
            try store.sync()
            #expect(store.syncCount == 0)
        }
    }
}
