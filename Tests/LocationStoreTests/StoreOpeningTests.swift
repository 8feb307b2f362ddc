import Forwarding
import GPSModel
import SystemInterface
import Testing

@testable import LocationStore

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct StoreMigrationTests {
    /// A file as the first schema left it: its tables, version 1, a location in it.
    func makeVersionOneStore(_ path: String, location: Location) throws {
        let connection = try SQLiteConnection(path: path, mode: .create)
        defer { connection.close() }
        try connection.execute("PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL", doing: "test")
        try connection.execute(StoreSchema.migrations[0].sql, doing: "test")
        try connection.execute("PRAGMA user_version = 1", doing: "test")
        try connection.withStatement(StoreSchema.insertLocation, doing: "test") { statement throws(StoreError) in
            statement.bind(1, Int64(1_000))
            statement.bind(2, Int64(0))
            statement.bind(3, "update")
            statement.bind(4, location.timestamp.seconds)
            statement.bind(5, Int64(location.timestamp.nanoseconds))
            statement.bind(6, location.latitude)
            statement.bind(7, location.longitude)
            statement.bind(16, location.fixMode.rawValue)
            statement.bind(20, location.origin.rawValue)
            try statement.run()
        }
    }

    @Test func anOlderSchemaIsMigratedKeepingItsRows() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            let location = sparseLocation(3)
            try makeVersionOneStore(path, location: location)
            #expect(throws: StoreError.self) {
                // Version 1 has no uploaders table: the reason for the migration.
                let connection = try SQLiteConnection(path: path, mode: .readWrite)
                try connection.execute("SELECT * FROM uploaders", doing: "test")
            }

            let store = try LocationStore(path: path)
            #expect(store.notices == ["\(path): migrated the store from schema 1 to 2 (each uploader's position in the queue)"])
            #expect(try store.connection.integer("PRAGMA user_version", doing: "test") == 2)
            let expected = StoredLocation(id: 1, location: location, reason: .update, stored: UTCTime(seconds: 1_000))
            #expect(try allLocations(store) == [expected])
            try store.setUploaders(["server"])
            #expect(try store.pending(for: "server", limit: 5) == [expected])
            store.close()

            // Migrated once: the next opening says nothing.
            #expect(try LocationStore(path: path).notices.isEmpty)
        }
    }

    @Test func aNewerSchemaIsRefusedAndLeftInPlace() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            let store = try LocationStore(path: path)
            _ = try store.append(batch(0..<3), stored: UTCTime(seconds: 1))
            try store.connection.execute("PRAGMA user_version = 9", doing: "test")
            store.close()
            let errors = [
                caught { () throws(StoreError) in _ = try LocationStore(path: path) }, caught { () throws(StoreError) in _ = try LocationStore(readingOnly: path) },
            ]
            for error in errors {
                #expect(error?.kind == .newerSchema)
                #expect(error?.path == path)
                #expect(
                    error?.description.hasPrefix("\(path): has schema version 9, newer than this lodestar knows (2)")
                        == true, "\(String(describing: error))")
            }
            #expect(entries(in: directory, startingWith: "store.sqlite.corrupt").isEmpty)
            #expect(diskSize(path) > 0)
        }
    }

    @Test func someoneElsesDatabaseIsRefusedAndLeftAlone() throws {
        try withDirectory { directory in
            let path = directory + "/other.sqlite"
            let other = try SQLiteConnection(path: path, mode: .create)
            try other.execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')", doing: "test")
            other.close()
            #expect(throws: StoreError(
                path: path,
                reason: "is an SQLite database but not a lodestar store (it has tables and no schema version)",
                kind: .notAStore)) { try LocationStore(path: path) }
            #expect(throws: StoreError.self) { try LocationStore(readingOnly: path) }
            #expect(entries(in: directory, startingWith: "other.sqlite.corrupt").isEmpty)
        }
    }
}

@Suite struct StoreCorruptionTests {
    /// A store with enough rows for several pages, closed: its bytes.
    func filledStore(_ path: String) throws -> [StoredLocation] {
        let store = try LocationStore(path: path)
        let rows = try store.append(batch(0..<600), stored: UTCTime(seconds: 1_000))
        store.close()
        return rows
    }

    /// Opens the damaged `path` read-only (refused, nothing moved) and then for writing: not thrown, the file
    /// and its WAL moved aside whole, a notice, and a working empty store in its place.
    func expectMovedAside(_ path: String, directory: String, saying words: String) throws {
        let damaged = try readWholeFile(path)
        let error = try #require(caught { () throws(StoreError) in _ = try LocationStore(readingOnly: path) }, "opened for reading")
        #expect(error.kind == .damaged, "\(error)")
        #expect(error.path == path)
        #expect(entries(in: directory, startingWith: "store.sqlite.corrupt").isEmpty)
        #expect(try readWholeFile(path) == damaged, "the read-only opening changed the file")

        let store = try LocationStore(path: path)
        // The database moved aside, with the -wal and -shm SQLite made beside it when it looked.
        let aside = entries(in: directory, startingWith: "store.sqlite.corrupt-").filter {
            !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
        }
        try #require(aside.count == 1, "\(directoryEntries(directory))")
        let movedTo = directory + "/" + aside[0]
        #expect(try readWholeFile(movedTo) == damaged)
        #expect(aside[0].wholeMatch(of: /store\.sqlite\.corrupt-\d{8}T\d{6}Z/) != nil)
        #expect(store.notices.count == 1)
        let notice = store.notices.first ?? ""
        #expect(notice.hasPrefix("\(path) \(words) ("), "\(notice)")
        #expect(notice.hasSuffix("): moved aside to \(movedTo); a new store was created"), "\(notice)")
        #expect(try allLocations(store).isEmpty)
        let rows = try store.append(batch(0..<3), stored: UTCTime(seconds: 5))
        #expect(try allLocations(store) == rows)
    }

    @Test func aFileOfRandomBytesIsMovedAside() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            var generator = SystemRandomNumberGenerator()
            try writeFile(path, (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            try expectMovedAside(path, directory: directory, saying: "is not a database")
        }
    }

    /// A filled store's file, changed by `damage`, is moved aside with a notice saying `words`.
    func expectMovedAside(damagedBy damage: (inout [UInt8]) throws -> Void, saying words: String) throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            _ = try filledStore(path)
            var bytes = try readWholeFile(path)
            try damage(&bytes)
            try writeFile(path, bytes)
            try expectMovedAside(path, directory: directory, saying: words)
        }
    }

    @Test func aDamagedHeaderIsMovedAside() throws {
        // The magic string "SQLite format 3\0" and the page size after it.
        try expectMovedAside(damagedBy: { bytes in for index in 0..<18 { bytes[index] = 0x5a } }, saying: "is not a database")
    }

    @Test func aTruncatedFileIsMovedAside() throws {
        try expectMovedAside(
            damagedBy: { bytes in
                try #require(bytes.count >= 8 * 4096, "the store is too small to cut: \(bytes.count) bytes")
                bytes.removeLast(bytes.count - bytes.count / 2)
            }, saying: "is damaged")
    }

    @Test func aDamagedFileMovesAsideWithItsWAL() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            try writeFile(path, Array(repeating: 0x41, count: 8_192))
            try writeFile(path + "-wal", Array("not a WAL".utf8))
            let store = try LocationStore(path: path)
            #expect(store.notices.count == 1)
            let wal = entries(in: directory, startingWith: "store.sqlite.corrupt-").filter { $0.hasSuffix("-wal") }
            try #require(wal.count == 1, "\(directoryEntries(directory))")
            #expect(try readWholeFile(directory + "/" + wal[0]) == Array("not a WAL".utf8))
            #expect(try allLocations(store).isEmpty)
        }
    }

    @Test func anEmptyFileBecomesAStoreWithoutBeingMovedAside() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            try writeFile(path, [])
            // Read-only there is nothing to read: not a store.
            #expect(throws: StoreError.self) { try LocationStore(readingOnly: path) }
            let store = try LocationStore(path: path)
            #expect(store.notices == ["\(path): created a new store (schema 2)"])
            #expect(entries(in: directory, startingWith: "store.sqlite.corrupt").isEmpty)
        }
    }

    @Test func onlyAnUnusableLocationThrows() throws {
        try withDirectory { directory in
            try writeFile(directory + "/file", [])
            let path = directory + "/file/store.sqlite"
            let error = try #require(caught { () throws(StoreError) in _ = try LocationStore(path: path) }, "opened under a regular file")
            #expect(error.kind == .unreadable)
            #expect(error.description.hasPrefix("\(path): cannot make its directory"))
            #expect(throws: StoreError.self) { try LocationStore(path: directory) }
        }
    }

    @Test func readingOnlyAMissingFileSaysSoAndCreatesNothing() throws {
        try withDirectory { directory in
            let path = directory + "/store.sqlite"
            #expect(throws: StoreError(path: path, reason: "no such file", kind: .missing)) {
                try LocationStore(readingOnly: path)
            }
            #expect(directoryEntries(directory).isEmpty)
        }
    }

    @Test func theCorruptStampIsISO8601BasicForm() {
        #expect(LocationStore.corruptStamp(UTCTime(seconds: 1_796_120_100, nanoseconds: 999_000_000)) == "20261201T101500Z")
    }

    @Test func aNewDirectoryIsMadeForTheStore() throws {
        try withDirectory { directory in
            let store = try LocationStore(path: directory + "/state/deeper/store.sqlite")
            #expect(try store.append(batch(0..<1), stored: UTCTime(seconds: 1)).count == 1)
        }
    }
}
