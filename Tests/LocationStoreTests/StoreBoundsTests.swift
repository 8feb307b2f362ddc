import Forwarding
import GPSModel
import Testing

@testable import LocationStore

@Suite struct StoreBoundsTests {
    static let bound = 256 << 10

    /// What the bound promises, on disk: the database file and its WAL.
    func onDisk(_ path: String) -> Int { diskSize(path) + diskSize(path + "-wal") }

    @Test func aFullStoreStaysWithinMaxBytesOnDisk() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            let store = try LocationStore(path: path, bounds: StoreBounds(maxBytes: Self.bound))
            var deleted = 0
            var lastID: Int64 = 0
            for round in 0..<40 {
                let rows = try store.append(batch((round * 100)..<(round * 100 + 100)), stored: UTCTime(seconds: 1_000))
                lastID = rows.last?.id ?? 0
                try store.appendEvent(kind: "round", detail: "\(round)", at: UTCTime(seconds: 1_000 + Int64(round)))
                let enforcement = try store.enforceBounds(now: UTCTime(seconds: 1_000))
                #expect(enforcement.droppedUnsent == 0, "no uploader: every row counts as uploaded")
                deleted += enforcement.deletedUploaded
                #expect(onDisk(path) <= Self.bound, "round \(round): \(onDisk(path)) bytes on disk")
                #expect(try store.sizeInBytes() <= Self.bound)
            }
            let kept = try allLocations(store)
            // 4000 locations are far more than 256 KiB holds: most went, the newest stayed, in one run of ids.
            #expect(deleted > 1_000)
            #expect(kept.count + deleted == 4_000)
            #expect(kept.last?.id == lastID)
            #expect(kept.count > 500, "only \(kept.count) rows kept in \(Self.bound) bytes")
            #expect(zip(kept, kept.dropFirst()).allSatisfy { $0.id + 1 == $1.id })
            // The file was not left far below the bound either: deletion stops near it.
            #expect(onDisk(path) > Self.bound / 2)
        }
    }

    @Test func anUploaderThatNeverAcknowledgesLosesTheOldestRowsAndIsToldSo() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            let store = try LocationStore(path: path, bounds: StoreBounds(maxBytes: Self.bound))
            try store.setUploaders(["stalled"])
            var dropped = 0
            for round in 0..<30 {
                _ = try store.append(batch((round * 100)..<(round * 100 + 100)), stored: UTCTime(seconds: 1_000))
                let enforcement = try store.enforceBounds(now: UTCTime(seconds: 1_000))
                #expect(enforcement.deletedUploaded == 0)
                dropped += enforcement.droppedUnsent
                #expect(onDisk(path) <= Self.bound)
            }
            #expect(dropped > 0)
            let pending = try store.pending(for: "stalled", limit: 5_000)
            #expect(pending.count == 3_000 - dropped)
            #expect(pending.first?.id == Int64(dropped + 1))
        }
    }

    @Test func acknowledgedRowsGoBeforeAnyUnsentOne() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            // Fill without a bound, then apply one that half the rows exceed.
            let filler = try LocationStore(path: path)
            try filler.setUploaders(["a", "b"])
            let rows = try filler.append(batch(0..<2_000), stored: UTCTime(seconds: 1_000))
            try filler.acknowledge("a", through: rows[1_499].id)
            try filler.acknowledge("b", through: rows[999].id)
            filler.close()
            // Closed, the WAL is gone: what the rows take.
            let full = try LocationStore(readingOnly: path).sizeInBytes()

            let store = try LocationStore(path: path, bounds: StoreBounds(maxBytes: full * 3 / 4))
            let enforcement = try store.enforceBounds(now: UTCTime(seconds: 1_000))
            #expect(enforcement.droppedUnsent == 0)
            #expect(enforcement.deletedUploaded > 0 && enforcement.deletedUploaded <= 1_000)
            // Deleted from the oldest up, and nothing "b" has not acknowledged.
            let kept = try allLocations(store)
            #expect(kept.first?.id == rows[enforcement.deletedUploaded].id)
            #expect(try store.queueDepth(for: "b") == 1_000)
            #expect(try store.sizeInBytes() <= full * 3 / 4)
        }
    }

    @Test func maxAgeDeletesOldRowsOnlyOnceUploaded() throws {
        try withStore(bounds: StoreBounds(maxAge: 3_600)) { store in
            try store.setUploaders(["server"])
            let old = try store.append(batch(0..<10), stored: UTCTime(seconds: 10_000))
            let recent = try store.append(batch(10..<15), stored: UTCTime(seconds: 20_000))
            try store.appendEvent(kind: "old", detail: "", at: UTCTime(seconds: 10_000))
            try store.appendEvent(kind: "recent", detail: "", at: UTCTime(seconds: 20_000))
            try store.acknowledge("server", through: old[5].id)
            let now = UTCTime(seconds: 20_100)
            #expect(try store.enforceBounds(now: now) == BoundsEnforcement(deletedUploaded: 6))
            // The four old rows the server has not taken wait for it, however old.
            #expect(try allLocations(store) == Array(old[6...]) + recent)
            var events: [String] = []
            try store.forEachEvent(since: nil) { events.append($0.kind) }
            #expect(events == ["recent"])
            try store.acknowledge("server", through: recent[4].id)
            #expect(try store.enforceBounds(now: now) == BoundsEnforcement(deletedUploaded: 4))
        }
    }
}
