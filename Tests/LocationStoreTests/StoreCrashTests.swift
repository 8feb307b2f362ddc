import Forwarding
import GPSModel
import SystemInterface
import Testing

@testable import LocationStore

#if canImport(Glibc)
    import Glibc
#endif

/// A writer killed mid-transaction: another process (the sqlite3 shell) inserts batches of ten locations into
/// a store this code made, one transaction per batch, until SIGKILL stops it wherever it is. Every batch a
/// second connection saw committed before the kill must be there after it, whole, and the file must open
/// without being taken for damaged. (A killed process leaves what it wrote in the kernel's cache; a power cut
/// would also test the disk's syncs, which this cannot.)
@Suite struct StoreCrashTests {
    static let batchSize = 10
    static let baseSeconds: Int64 = 1_780_000_000

    /// The sqlite3 shell's input: `count` batches from batch `first` on. Row k (its id, from 1) has timestamp
    /// base + k and latitude 47 + k·1e-6, so what is read back can be checked row by row.
    static func script(firstBatch first: Int, count: Int) -> String {
        var text = "PRAGMA busy_timeout = 5000;\nPRAGMA synchronous = FULL;\n"
        for number in first..<(first + count) {
            let k = "(\(number * batchSize) + i)"
            text += """
                BEGIN IMMEDIATE;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(batchSize)) \
                INSERT INTO locations (stored_s, stored_ns, reason, time_s, time_ns, latitude, longitude, fix_mode, \
                device, origin) SELECT \(baseSeconds) + \(k), 0, 'update', \(baseSeconds) + \(k), 0, \
                47 + \(k) * 0.000001, 8.5, 3, 'crash', 'live' FROM n;
                COMMIT;

                """
        }
        return text
    }

    static func expected(_ id: Int64) -> StoredLocation {
        let time = UTCTime(seconds: baseSeconds + id)
        return StoredLocation(
            id: id,
            location: Location(
                timestamp: time, latitude: 47 + Double(id) * 0.000001, longitude: 8.5, fixMode: .threeD,
                device: "crash"),
            reason: .update, stored: time)
    }

    @Test func everyCommittedBatchSurvivesAWriterKilledMidway() throws {
        let sqlite3 = try #require(
            findExecutable("sqlite3"), "the sqlite3 shell is not installed: run scripts/setup (apt-get install sqlite3)")
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            let observer = try LocationStore(path: path)
            try observer.setUploaders(["observer"])
            var committed = 0
            for round in 0..<3 {
                let scriptPath = directory + "/round\(round).sql"
                try writeFile(scriptPath, Array(Self.script(firstBatch: committed / Self.batchSize, count: 20_000).utf8))
                let child = try ChildProcess(
                    executable: sqlite3, arguments: ["-bail", path], standardInput: scriptPath,
                    standardError: directory + "/round\(round).err")
                // Let it commit a few hundred rows more than before, as another connection sees them.
                var seen = try observer.queueDepth(for: "observer")
                let deadline = monotonicSeconds() + 60
                while seen < committed + 300 + round * 170, monotonicSeconds() < deadline {
                    sleepSeconds(0.002)
                    seen = try observer.queueDepth(for: "observer")
                }
                #expect(child.isRunning, "round \(round): the writer ended before it was killed")
                child.signal(SIGKILL)
                let status = try #require(child.waitForExit(timeout: 10))
                #expect(status & 0x7f == SIGKILL, "round \(round): wait status \(status)")

                let reopened = try LocationStore(path: path)
                #expect(reopened.notices.isEmpty, "\(reopened.notices)")
                let rows = try allLocations(reopened)
                #expect(rows.count >= seen, "round \(round): \(seen) rows were committed, \(rows.count) are there")
                #expect(rows.count % Self.batchSize == 0, "round \(round): a transaction was torn")
                #expect(rows == (0..<Int64(rows.count)).map { Self.expected($0 + 1) })
                reopened.close()
                committed = rows.count
            }
            let errors = (0..<3).compactMap { readFile(directory + "/round\($0).err") }.filter { !$0.isEmpty }
            #expect(errors.isEmpty, "\(errors.map { String(decoding: $0, as: UTF8.self) })")
        }
    }
}
