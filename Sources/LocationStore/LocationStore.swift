import CSQLite
import Forwarding
import GPSModel
import SystemInterface

#if canImport(Glibc)
    import Glibc
#endif

/// How much the store keeps. nil is no bound.
public struct StoreBounds: Sendable, Equatable {
    /// The database's pages in use plus its WAL, in bytes (`LocationStore.sizeInBytes()`).
    public var maxBytes: Int?
    /// Seconds: rows stored longer ago than this go once every uploader has them.
    public var maxAge: Double?

    public init(maxBytes: Int? = nil, maxAge: Double? = nil) {
        self.maxBytes = maxBytes
        self.maxAge = maxAge
    }
}

/// A store that cannot be opened, read or written: the file and what went wrong, in SQLite's words where it
/// has them. `kind` lets a command pick its exit status.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The file does not exist (a read-only opening; a writable one creates it).
        case missing
        /// It cannot be opened: permission, a directory, a parent that cannot be made.
        case unreadable
        /// A database, but not a store: no schema version, or someone else's tables.
        case notAStore
        /// Written by a newer lodestar, with a schema this one does not know.
        case newerSchema
        /// Not a database, or a damaged one (truncated, overwritten, a failed integrity check).
        case damaged
        /// Anything else: locked past the busy timeout, disk full, an I/O error.
        case failed
    }

    public var path: String
    public var reason: String
    public var kind: Kind

    public init(path: String, reason: String, kind: Kind = .failed) {
        self.path = path
        self.reason = reason
        self.kind = kind
    }

    public var description: String { "\(path): \(reason)" }
}

/// Something the daemon noted in the store besides locations (a regime change, a lost receiver), exported
/// with them.
public struct StoredEvent: Sendable, Equatable {
    public var id: Int64
    public var kind: String
    public var detail: String
    public var at: UTCTime
}

/// What `enforceBounds` deleted.
public struct BoundsEnforcement: Sendable, Equatable {
    /// Locations every uploader had acknowledged (or any location, with no uploader configured).
    public var deletedUploaded: Int = 0
    /// Locations some uploader had not acknowledged yet, dropped to stay within `maxBytes`: lost to it.
    public var droppedUnsent: Int = 0
}

/// The SQLite file of delivered locations and events, and each uploader's position in it (docs/store.md).
///
/// One object is used from one thread; several objects (one per thread) may use the same file at once: the
/// file is in WAL mode, writes take the write lock first (`BEGIN IMMEDIATE`) and wait up to
/// `busyTimeoutMilliseconds` for it. A power cut never damages the file (the WAL is synced before every
/// checkpoint). What it may lose depends on `Durability`: with `.everyCommit` (`synchronous = FULL`) at most
/// the transaction in flight; with `.whenSynced` (`synchronous = NORMAL`) what was committed since the last
/// `sync()`, and a crash of the process alone still loses nothing (the commits are in the kernel's cache).
public final class LocationStore {
    /// When commits reach the disk.
    public enum Durability: Sendable, Equatable {
        /// Each commit is synced: one sync (a flash erase-block's write on an SD card) per commit.
        case everyCommit
        /// Commits are synced by `sync()` and by checkpoints, which the owner calls as often as it can lose.
        case whenSynced
    }

    /// The name of the store in the daemon's state directory.
    public static let fileName = "store.sqlite"
    /// How long a connection waits for another's lock before failing with "database is locked".
    public static let busyTimeoutMilliseconds = 5000

    public let path: String
    public let bounds: StoreBounds
    public let durability: Durability
    /// Syncs `sync()` made (it makes none when nothing was committed since the last).
    public private(set) var syncCount = 0
    /// What the last sync covered: this connection's changes (`total_changes`) and others' (`data_version`).
    private var syncedChanges: Int64 = 0
    private var syncedDataVersion: Int64?
    /// Lines for the log about what opening did: a damaged file moved aside, a new store, a migration.
    public private(set) var notices: [String]
    /// Internal for the tests, which read the pragmas it set.
    let connection: SQLiteConnection

    /// Opens the store at `path` for reading and writing, creating it (and its directory) when missing and
    /// migrating an older schema. A file that is not a database or is damaged is moved aside with its -wal
    /// and -shm to `PATH.corrupt-<UTC stamp>` and a new store takes its place (said in `notices`). Throws
    /// only when the file cannot be used at all: a directory that cannot be written, a newer schema,
    /// someone else's database.
    public init(
        path: String, bounds: StoreBounds = StoreBounds(), durability: Durability = .everyCommit
    ) throws(StoreError) {
        self.path = path
        self.bounds = bounds
        self.durability = durability
        try Self.prepareLocation(of: path)
        var notices: [String] = []
        let connection: SQLiteConnection
        do throws(StoreError) {
            connection = try Self.openForWriting(path, bounds: bounds, durability: durability, notices: &notices)
        } catch {
            guard error.kind == .damaged else { throw error }
            let movedTo = try Self.moveAside(path)
            let what = error.reason.contains("not a database") ? "is not a database" : "is damaged"
            notices.append(
                "\(path) \(what) (\(error.reason)): moved aside to \(movedTo); a new store was created")
            var ignored: [String] = []
            connection = try Self.openForWriting(path, bounds: bounds, durability: durability, notices: &ignored)
        }
        self.connection = connection
        self.notices = notices
    }

    /// Opens an existing store for reading only (`lodestar store export`): nothing is created, migrated or
    /// moved. Throws `.missing` when there is no file, `.damaged` when it fails its integrity check,
    /// `.notAStore` or `.newerSchema` when its schema is not one this code reads.
    public init(readingOnly path: String) throws(StoreError) {
        self.path = path
        bounds = StoreBounds()
        durability = .everyCommit
        notices = []
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            throw StoreError(
                path: path, reason: code == ENOENT ? "no such file" : "cannot be read: \(errnoText(code))",
                kind: code == ENOENT ? .missing : .unreadable)
        }
        guard status.st_mode & S_IFMT != S_IFDIR else {
            throw StoreError(path: path, reason: "is a directory, not a store", kind: .unreadable)
        }
        // SQLite's open() of a FIFO waits for a writer forever, and a device is no database: only a regular
        // file can be a store.
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw StoreError(path: path, reason: "is not a regular file (a FIFO or a device), not a store", kind: .unreadable)
        }
        guard access(path, R_OK) == 0 else {
            throw StoreError(path: path, reason: "cannot be read: \(errnoText(errno))", kind: .unreadable)
        }
        let connection = try SQLiteConnection(path: path, mode: Self.readingMode(path))
        try connection.execute(
            "PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)", doing: "set the busy timeout")
        let version = try connection.integer("PRAGMA user_version", doing: "read the schema version")
        try Self.refuseNewer(version, path: path)
        guard version >= StoreSchema.oldestReadable else {
            throw StoreError(path: path, reason: "is not a lodestar store (no schema version)", kind: .notAStore)
        }
        try Self.checkIntegrity(connection)
        self.connection = connection
    }

    /// How a reader opens a store it may not write. A WAL database is read through its -shm file, which a
    /// read-only connection must create when it is missing, and that needs a directory it may write: a member
    /// of group lodestar may read /var/lib/lodestar but not write it, and got "attempt to write a readonly
    /// database" with the service stopped (SQLite's wal.html, "Read-Only Databases"). No -wal file beside the
    /// store means no connection has it open for writing (the service's last close checkpoints the WAL into
    /// the file and deletes both), so the file alone is the whole database and is read as immutable: no
    /// locks, no -shm. With a -wal the service runs (or died): the usual read-only opening, which reads the
    /// WAL through the -shm the service keeps readable by the group. A service starting during an immutable
    /// export writes into a new WAL the export does not see; the export is the store as it was when it began.
    static func readingMode(_ path: String) -> SQLiteConnection.Mode {
        var status = stat()
        let hasWAL = stat(path + "-wal", &status) == 0
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        return !hasWAL && access(directory, W_OK) != 0 ? .immutable : .readOnly
    }

    deinit { close() }

    /// Closes the connection; every call after this throws.
    public func close() {
        connection.close()
    }

    // MARK: Writing

    /// Makes every commit so far durable, this connection's and others': the WAL, where WAL mode commits, is
    /// synced (`fdatasync` of the file reaches the data whichever descriptor wrote it). Nothing to do when
    /// nothing was committed since the last sync (SQLite's `data_version` tells of other connections'
    /// commits), or with `.everyCommit`.
    public func sync() throws(StoreError) {
        guard durability == .whenSynced else { return }
        let version = try connection.integer("PRAGMA data_version", doing: "read the data version")
        let changes = connection.totalChanges
        guard changes != syncedChanges || version != syncedDataVersion else { return }
        let descriptor = open(path + "-wal", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            // No WAL: the last connection's close checkpointed it into the file, which SQLite synced.
            if errno == ENOENT { (syncedChanges, syncedDataVersion) = (changes, version); return }
            throw StoreError(path: path, reason: "cannot open its WAL to sync it: \(errnoText(errno))")
        }
        defer { Glibc.close(descriptor) }
        guard fdatasync(descriptor) == 0 else {
            throw StoreError(path: path, reason: "cannot sync its WAL: \(errnoText(errno))")
        }
        syncCount += 1
        (syncedChanges, syncedDataVersion) = (changes, version)
    }

    /// Stores `locations` in one transaction and returns the rows as stored, ids increasing in list order.
    public func append(
        _ locations: [(Location, DeliveryReason)], stored: UTCTime
    ) throws(StoreError) -> [StoredLocation] {
        guard !locations.isEmpty else { return [] }
        let connection = connection
        return try connection.inWriteTransaction(doing: "store \(locations.count) locations") {
            () throws(StoreError) -> [StoredLocation] in
            var rows: [StoredLocation] = []
            rows.reserveCapacity(locations.count)
            for (location, reason) in locations {
                try connection.withStatement(.insertLocation, doing: "store a location") {
                    statement throws(StoreError) in
                    Self.bind(location, reason: reason, stored: stored, to: statement)
                    try statement.run()
                }
                rows.append(
                    StoredLocation(id: connection.lastInsertedRowID, location: location, reason: reason, stored: stored))
            }
            return rows
        }
    }

    /// Stores `locations` (each with when it was stored) and `events` in one transaction: one commit for what
    /// a writer held back, where each commit writes its pages to the WAL and takes SQLite's locks again.
    public func append(
        _ locations: [(Location, DeliveryReason, stored: UTCTime)],
        events: [(kind: String, detail: String, at: UTCTime)]
    ) throws(StoreError) {
        guard !locations.isEmpty || !events.isEmpty else { return }
        let connection = connection
        try connection.inWriteTransaction(doing: "store \(locations.count) locations and \(events.count) events") {
            () throws(StoreError) in
            for (location, reason, stored) in locations {
                try connection.withStatement(.insertLocation, doing: "store a location") {
                    statement throws(StoreError) in
                    Self.bind(location, reason: reason, stored: stored, to: statement)
                    try statement.run()
                }
            }
            for event in events { try insertEvent(event.kind, event.detail, at: event.at) }
        }
    }

    public func appendEvent(kind: String, detail: String, at: UTCTime) throws(StoreError) {
        try connection.inWriteTransaction(doing: "store an event") { () throws(StoreError) in
            try insertEvent(kind, detail, at: at)
        }
    }

    private func insertEvent(_ kind: String, _ detail: String, at: UTCTime) throws(StoreError) {
        try connection.withStatement(
            "INSERT INTO events (at_s, at_ns, kind, detail) VALUES (?1, ?2, ?3, ?4)", doing: "store an event"
        ) { statement throws(StoreError) in
            statement.bind(1, at.seconds)
            statement.bind(2, Int64(at.nanoseconds))
            statement.bind(3, kind)
            statement.bind(4, detail)
            try statement.run()
        }
    }

    // MARK: Uploaders

    /// The uploaders deletion waits for. A name not seen before starts at the oldest location still stored
    /// (it gets everything kept; with none stored, everything stored from now on); names not listed are
    /// forgotten, and deletion no longer waits for them.
    public func setUploaders(_ names: [String]) throws(StoreError) {
        let connection = connection
        try connection.inWriteTransaction(doing: "set the uploaders") { () throws(StoreError) in
            var known: [String] = []
            try connection.withStatement("SELECT name FROM uploaders", doing: "read the uploaders") {
                statement throws(StoreError) in
                while try statement.step() { known.append(statement.text(0) ?? "") }
            }
            for name in known where !names.contains(name) {
                try connection.withStatement("DELETE FROM uploaders WHERE name = ?1", doing: "forget uploader \(name)") {
                    statement throws(StoreError) in
                    statement.bind(1, name)
                    try statement.run()
                }
            }
            // With no location stored, the last id ever given (sqlite_sequence): only new rows are pending.
            let insert = """
                INSERT OR IGNORE INTO uploaders (name, acknowledged) VALUES (?1, coalesce(
                (SELECT min(id) - 1 FROM locations), (SELECT seq FROM sqlite_sequence WHERE name = 'locations'), 0))
                """
            for name in names where !known.contains(name) {
                try connection.withStatement(insert, doing: "add uploader \(name)") { statement throws(StoreError) in
                    statement.bind(1, name)
                    try statement.run()
                }
            }
        }
    }

    /// The next `limit` locations `uploader` has not acknowledged, oldest first.
    public func pending(for uploader: String, limit: Int) throws(StoreError) -> [StoredLocation] {
        let position = try acknowledgedPosition(of: uploader)
        return try connection.withStatement(
            "SELECT \(StoreSchema.locationColumns) FROM locations WHERE id > ?1 ORDER BY id LIMIT ?2",
            doing: "read \(uploader)'s pending locations"
        ) { statement throws(StoreError) in
            statement.bind(1, position)
            statement.bind(2, max(0, limit))
            var rows: [StoredLocation] = []
            while try statement.step() { rows.append(try location(from: statement)) }
            return rows
        }
    }

    /// `uploader`'s server took every location up to `id`. A position never moves back.
    public func acknowledge(_ uploader: String, through id: Int64) throws(StoreError) {
        let connection = connection
        let updated = try connection.inWriteTransaction(doing: "acknowledge \(uploader)'s locations") {
            () throws(StoreError) -> Int in
            try connection.withStatement(
                "UPDATE uploaders SET acknowledged = max(acknowledged, ?2) WHERE name = ?1",
                doing: "acknowledge \(uploader)'s locations"
            ) { statement throws(StoreError) in
                statement.bind(1, uploader)
                statement.bind(2, id)
                try statement.run()
            }
            return connection.changes
        }
        if updated == 0 { throw unknownUploader(uploader) }
    }

    /// How many stored locations `uploader` has not acknowledged.
    public func queueDepth(for uploader: String) throws(StoreError) -> Int {
        let position = try acknowledgedPosition(of: uploader)
        return Int(
            try connection.integer(
                "SELECT count(*) FROM locations WHERE id > ?1", doing: "count \(uploader)'s pending locations"
            ) { $0.bind(1, position) })
    }

    /// When the oldest location `uploader` has not acknowledged was stored; nil when it has them all.
    public func oldestPending(for uploader: String) throws(StoreError) -> UTCTime? {
        let position = try acknowledgedPosition(of: uploader)
        return try connection.withStatement(
            "SELECT stored_s, stored_ns FROM locations WHERE id > ?1 ORDER BY id LIMIT 1",
            doing: "read \(uploader)'s oldest pending location"
        ) { statement throws(StoreError) -> UTCTime? in
            statement.bind(1, position)
            guard try statement.step() else { return nil }
            return try time(statement, 0, 1, what: "a location's stored time")
        }
    }

    private func acknowledgedPosition(of uploader: String) throws(StoreError) -> Int64 {
        try connection.withStatement(
            "SELECT acknowledged FROM uploaders WHERE name = ?1", doing: "read \(uploader)'s position"
        ) { statement throws(StoreError) -> Int64 in
            statement.bind(1, uploader)
            guard try statement.step(), let position = statement.integer(0) else { throw unknownUploader(uploader) }
            return position
        }
    }

    private func unknownUploader(_ name: String) -> StoreError {
        StoreError(path: path, reason: "no uploader named '\(name)' (setUploaders has not listed it)")
    }

    // MARK: Bounds

    /// Applies the bounds. First deletes the oldest locations every uploader has acknowledged (with no
    /// uploader configured, every location), with the events older than what is left, while the store is over
    /// `maxBytes`, and those stored more than `maxAge` ago (events too); then, still over `maxBytes`, the
    /// oldest events, and last the oldest locations not yet uploaded (counted in `droppedUnsent`, for the
    /// log). Ends by giving the freed pages back to the file system and emptying the WAL, so the files on disk
    /// shrink to the bound.
    public func enforceBounds(now: UTCTime) throws(StoreError) -> BoundsEnforcement {
        var result = BoundsEnforcement()
        guard bounds.maxBytes != nil || bounds.maxAge != nil else { return result }
        let connection = connection
        let changesBefore = connection.totalChanges
        if let maxAge = bounds.maxAge {
            let cutoff = now.adding(seconds: -maxAge)
            try connection.inWriteTransaction(doing: "delete locations older than the age bound") {
                () throws(StoreError) in
                let floor = try acknowledgedFloor()
                try connection.withStatement(
                    "DELETE FROM locations WHERE id <= ?1 AND (stored_s, stored_ns) < (?2, ?3)",
                    doing: "delete locations older than the age bound"
                ) { statement throws(StoreError) in
                    statement.bind(1, floor)
                    statement.bind(2, cutoff.seconds)
                    statement.bind(3, Int64(cutoff.nanoseconds))
                    try statement.run()
                }
                result.deletedUploaded += connection.changes
                try connection.withStatement(
                    "DELETE FROM events WHERE (at_s, at_ns) < (?1, ?2)", doing: "delete events older than the age bound"
                ) { statement throws(StoreError) in
                    statement.bind(1, cutoff.seconds)
                    statement.bind(2, Int64(cutoff.nanoseconds))
                    try statement.run()
                }
            }
        }
        if let maxBytes = bounds.maxBytes {
            // Each round deletes about the excess, judged by the average row; rows share pages, so a round may
            // free less than it aimed at and another follows. The count only guards against a loop.
            for _ in 0..<1000 {
                let used = try databaseBytes()
                guard used > maxBytes else { break }
                let locations = Int(try connection.integer("SELECT count(*) FROM locations", doing: "count locations"))
                let events = Int(try connection.integer("SELECT count(*) FROM events", doing: "count events"))
                guard locations + events > 0 else { break }
                let bytesPerRow = max(1, used / (locations + events))
                let wanted = (used - maxBytes) / bytesPerRow + 1
                try connection.inWriteTransaction(doing: "delete rows over the size bound") { () throws(StoreError) in
                    let floor = try acknowledgedFloor()
                    let uploaded = Int(
                        try connection.integer(
                            "SELECT count(*) FROM locations WHERE id <= ?1", doing: "count uploaded locations"
                        ) { $0.bind(1, floor) })
                    if uploaded > 0 {
                        result.deletedUploaded += try deleteOldestLocations(min(wanted, uploaded), through: floor)
                        try connection.execute(
                            """
                            DELETE FROM events WHERE (at_s, at_ns) < \
                            (SELECT stored_s, stored_ns FROM locations ORDER BY id LIMIT 1)
                            """, doing: "delete events older than the oldest location")
                    } else if events > 0 {
                        try connection.withStatement(
                            "DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY id LIMIT ?1)",
                            doing: "delete the oldest events"
                        ) { statement throws(StoreError) in
                            statement.bind(1, wanted)
                            try statement.run()
                        }
                    } else {
                        result.droppedUnsent += try deleteOldestLocations(wanted, through: Int64.max)
                    }
                }
                try compact()
            }
        }
        // Only after a deletion, or when the WAL takes the store past its size bound: a checkpoint syncs the WAL
        // and the database and rewrites its pages, and this runs every minute; SQLite's own checkpoint (every
        // sixteenth of the bound, or 1000 pages) keeps the WAL in check otherwise.
        let overBound = try bounds.maxBytes.map { maxBytes throws(StoreError) in try sizeInBytes() > maxBytes } ?? false
        if connection.totalChanges != changesBefore || overBound { try compact() }
        return result
    }

    /// Deletes up to `count` of the oldest locations with ids up to `last`; how many went.
    private func deleteOldestLocations(_ count: Int, through last: Int64) throws(StoreError) -> Int {
        try connection.withStatement(
            "DELETE FROM locations WHERE id IN (SELECT id FROM locations WHERE id <= ?1 ORDER BY id LIMIT ?2)",
            doing: "delete the oldest locations"
        ) { statement throws(StoreError) -> Int in
            statement.bind(1, last)
            statement.bind(2, count)
            try statement.run()
            return connection.changes
        }
    }

    /// The highest id every uploader has acknowledged; every id when there is no uploader.
    private func acknowledgedFloor() throws(StoreError) -> Int64 {
        try connection.withStatement(
            "SELECT count(*), min(acknowledged) FROM uploaders", doing: "read the uploaders' positions"
        ) { statement throws(StoreError) -> Int64 in
            guard try statement.step(), let count = statement.integer(0), count > 0 else { return Int64.max }
            return statement.integer(1) ?? Int64.max
        }
    }

    /// Gives free pages back to the file system (`auto_vacuum = INCREMENTAL`) and copies the WAL into the
    /// database and truncates it, waiting (up to the busy timeout) for readers of an older snapshot; with a
    /// reader still there the WAL is left for the next time.
    private func compact() throws(StoreError) {
        try connection.execute("PRAGMA incremental_vacuum", doing: "free deleted pages")
        _ = try connection.texts("PRAGMA wal_checkpoint(TRUNCATE)", doing: "checkpoint the WAL")
    }

    /// The store's size as the bound counts it: the database's pages in use and the WAL's bytes.
    public func sizeInBytes() throws(StoreError) -> Int {
        let wal = Self.fileSize(path + "-wal") ?? 0
        return try databaseBytes() + wal
    }

    /// The pages in use (all but the free list), in bytes.
    private func databaseBytes() throws(StoreError) -> Int {
        let pages = try connection.integer("PRAGMA page_count", doing: "read the page count")
        let free = try connection.integer("PRAGMA freelist_count", doing: "read the free page count")
        let pageSize = try connection.integer("PRAGMA page_size", doing: "read the page size")
        return Int((pages - free) * pageSize)
    }

    // MARK: Reading everything

    /// Calls `body` with each location whose timestamp is at or after `since` (all when nil), in id order,
    /// one row at a time.
    public func forEachLocation(
        since: UTCTime?, _ body: (StoredLocation) throws(StoreError) -> Void
    ) throws(StoreError) {
        try forEachRow(
            "SELECT \(StoreSchema.locationColumns) FROM locations", timeColumns: "time_s, time_ns", since: since,
            doing: "read the locations"
        ) { statement throws(StoreError) in try body(try location(from: statement)) }
    }

    /// Calls `body` with each event at or after `since` (all when nil), in id order, one row at a time.
    public func forEachEvent(since: UTCTime?, _ body: (StoredEvent) throws(StoreError) -> Void) throws(StoreError) {
        try forEachRow(
            "SELECT id, at_s, at_ns, kind, detail FROM events", timeColumns: "at_s, at_ns", since: since,
            doing: "read the events"
        ) { statement throws(StoreError) in
            guard let id = statement.integer(0), let kind = statement.text(3), let detail = statement.text(4) else {
                throw StoreError(path: path, reason: "an event row has an empty column", kind: .damaged)
            }
            try body(StoredEvent(id: id, kind: kind, detail: detail, at: try time(statement, 1, 2, what: "event \(id)'s time")))
        }
    }

    /// Steps through `select`'s rows whose `timeColumns` (seconds, nanoseconds) are at or after `since` (all
    /// when nil), in id order.
    private func forEachRow(
        _ select: String, timeColumns: String, since: UTCTime?, doing what: String,
        _ row: (Statement) throws(StoreError) -> Void
    ) throws(StoreError) {
        let filter = since == nil ? "" : " WHERE (\(timeColumns)) >= (?1, ?2)"
        let statement = try Statement(prepared: "\(select)\(filter) ORDER BY id", on: connection, doing: what)
        defer { statement.finalize() }
        if let since {
            statement.bind(1, since.seconds)
            statement.bind(2, Int64(since.nanoseconds))
        }
        while try statement.step() { try row(statement) }
    }

    // MARK: Rows

    private static func bind(_ location: Location, reason: DeliveryReason, stored: UTCTime, to statement: Statement) {
        statement.bind(1, stored.seconds)
        statement.bind(2, Int64(stored.nanoseconds))
        statement.bind(3, reason.rawValue)
        statement.bind(4, location.timestamp.seconds)
        statement.bind(5, Int64(location.timestamp.nanoseconds))
        statement.bind(6, location.latitude)
        statement.bind(7, location.longitude)
        statement.bind(8, location.altitude)
        statement.bind(9, location.horizontalAccuracy)
        statement.bind(10, location.horizontalAccuracySource?.rawValue)
        statement.bind(11, location.verticalAccuracy)
        statement.bind(12, location.speed)
        statement.bind(13, location.speedAccuracy)
        statement.bind(14, location.course)
        statement.bind(15, location.courseAccuracy)
        statement.bind(16, location.fixMode.rawValue)
        statement.bind(17, location.satellitesUsed)
        statement.bind(18, location.hdop)
        statement.bind(19, location.device)
        statement.bind(20, location.origin.rawValue)
    }

    /// A row of `StoreSchema.locationColumns`. A value this code cannot read (an unknown reason or fix mode)
    /// is damage.
    private func location(from statement: Statement) throws(StoreError) -> StoredLocation {
        let id = statement.integer(0) ?? 0
        func damaged(_ what: String) -> StoreError {
            StoreError(path: path, reason: "location \(id) has \(what)", kind: .damaged)
        }
        let stored = try time(statement, 1, 2, what: "location \(id)'s stored time")
        let timestamp = try time(statement, 4, 5, what: "location \(id)'s timestamp")
        guard let reason = statement.text(3).flatMap(DeliveryReason.init(rawValue:)) else {
            throw damaged("an unknown reason '\(statement.text(3) ?? "NULL")'")
        }
        guard let latitude = statement.double(6), let longitude = statement.double(7) else {
            throw damaged("no coordinates")
        }
        guard let fixMode = statement.integer(16).flatMap({ Int(exactly: $0) }).flatMap(FixMode.init(rawValue:)) else {
            throw damaged("an unknown fix mode")
        }
        guard let origin = statement.text(20).flatMap(LocationOrigin.init(rawValue:)) else {
            throw damaged("an unknown origin '\(statement.text(20) ?? "NULL")'")
        }
        var source: AccuracySource?
        if let text = statement.text(10) {
            guard let known = AccuracySource(rawValue: text) else { throw damaged("an unknown accuracy source '\(text)'") }
            source = known
        }
        let location = Location(
            timestamp: timestamp, latitude: latitude, longitude: longitude, altitude: statement.double(8),
            horizontalAccuracy: statement.double(9), horizontalAccuracySource: source,
            verticalAccuracy: statement.double(11), speed: statement.double(12), speedAccuracy: statement.double(13),
            course: statement.double(14), courseAccuracy: statement.double(15), fixMode: fixMode,
            satellitesUsed: statement.integer(17).flatMap { Int(exactly: $0) }, hdop: statement.double(18),
            device: statement.text(19), origin: origin)
        return StoredLocation(id: id, location: location, reason: reason, stored: stored)
    }

    private func time(_ statement: Statement, _ secondsColumn: Int32, _ nanosecondsColumn: Int32, what: String)
        throws(StoreError) -> UTCTime
    {
        guard let seconds = statement.integer(secondsColumn),
            let nanoseconds = statement.integer(nanosecondsColumn).flatMap({ Int32(exactly: $0) }),
            (0..<1_000_000_000).contains(nanoseconds)
        else { throw StoreError(path: path, reason: "\(what) cannot be read", kind: .damaged) }
        return UTCTime(seconds: seconds, nanoseconds: nanoseconds)
    }

    // MARK: Opening

    /// Opens (creating) `path` read-write, checks it, sets the connection up and migrates it.
    private static func openForWriting(
        _ path: String, bounds: StoreBounds, durability: Durability, notices: inout [String]
    ) throws(StoreError) -> SQLiteConnection {
        if fileSize(path) != nil {
            // Checked on a read-only connection first: closing it never checkpoints into the file nor deletes
            // the WAL, so a damaged store is moved aside as it was found.
            let checking = try SQLiteConnection(path: path, mode: .readOnly)
            try checking.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)", doing: "set the busy timeout")
            // The first read of the file: a file that is not a database fails here.
            try refuseNewer(
                try checking.integer("PRAGMA user_version", doing: "read the schema version"), path: path)
            try checkIntegrity(checking)
            checking.close()
        }
        let connection = try SQLiteConnection(path: path, mode: .create)
        try connection.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)", doing: "set the busy timeout")
        let version = try connection.integer("PRAGMA user_version", doing: "read the schema version")
        try refuseNewer(version, path: path)
        if version == 0 {
            // Only takes effect before the first table exists: a new store gives freed pages back to the file
            // system on `PRAGMA incremental_vacuum`, so the file shrinks to the size bound.
            try connection.execute("PRAGMA auto_vacuum = INCREMENTAL", doing: "set incremental vacuum")
        }
        let mode = try connection.texts("PRAGMA journal_mode = WAL", doing: "switch to WAL")
        guard mode == ["wal"] else {
            throw StoreError(path: path, reason: "cannot switch to WAL (journal mode stays \(mode.first ?? "unknown"))")
        }
        let pageSize = Int(try connection.integer("PRAGMA page_size", doing: "read the page size"))
        // With a size bound the WAL is kept well inside it: checkpoints every sixteenth of the bound, and a
        // WAL truncated back to that after each (the default, 1000 pages, is 4 MB).
        let checkpointPages = bounds.maxBytes.map { max(8, $0 / max(pageSize, 512) / 16) } ?? 1000
        let walLimit = bounds.maxBytes.map { max(8 * pageSize, $0 / 16) } ?? 4 << 20
        try connection.execute(
            """
            PRAGMA synchronous = \(durability == .everyCommit ? "FULL" : "NORMAL");
            PRAGMA wal_autocheckpoint = \(checkpointPages);
            PRAGMA journal_size_limit = \(walLimit);
            """, doing: "set the connection up")
        let from = try migrate(connection)
        if from == 0 {
            notices.append("\(path): created a new store (schema \(StoreSchema.current))")
        } else if from < StoreSchema.current {
            let steps = StoreSchema.migrations.filter { $0.version > from }.map(\.summary).joined(separator: "; ")
            notices.append("\(path): migrated the store from schema \(from) to \(StoreSchema.current) (\(steps))")
        }
        return connection
    }

    /// Brings the schema to `StoreSchema.current` in one write transaction; the version it had. Another
    /// connection may have migrated it first: the version is read again under the write lock.
    private static func migrate(_ connection: SQLiteConnection) throws(StoreError) -> Int64 {
        try connection.inWriteTransaction(doing: "migrate the schema") { () throws(StoreError) -> Int64 in
            let version = try connection.integer("PRAGMA user_version", doing: "read the schema version")
            try refuseNewer(version, path: connection.path)
            if version == 0 {
                let objects = try connection.integer("SELECT count(*) FROM sqlite_master", doing: "read the schema")
                guard objects == 0 else {
                    throw StoreError(
                        path: connection.path,
                        reason: "is an SQLite database but not a lodestar store (it has tables and no schema version)",
                        kind: .notAStore)
                }
            }
            for migration in StoreSchema.migrations where migration.version > version {
                try connection.execute(migration.sql, doing: "migrate the schema to version \(migration.version)")
            }
            if version < StoreSchema.current {
                try connection.execute(
                    "PRAGMA user_version = \(StoreSchema.current)", doing: "record the schema version")
            }
            return version
        }
    }

    private static func refuseNewer(_ version: Int64, path: String) throws(StoreError) {
        guard version <= StoreSchema.current else {
            throw StoreError(
                path: path,
                reason: "has schema version \(version), newer than this lodestar knows (\(StoreSchema.current)): "
                    + "refusing to use it (a newer lodestar wrote it; move it away to start a new store)",
                kind: .newerSchema)
        }
    }

    /// `PRAGMA quick_check`: every page and b-tree readable and well formed (not the index contents).
    private static func checkIntegrity(_ connection: SQLiteConnection) throws(StoreError) {
        let rows = try connection.texts("PRAGMA quick_check", doing: "check the database")
        guard rows == ["ok"] else {
            let problems = rows.prefix(3).joined(separator: "; ") + (rows.count > 3 ? "; …" : "")
            throw StoreError(path: connection.path, reason: "failed its integrity check: \(problems)", kind: .damaged)
        }
    }

    /// Makes the parent directory when missing; refuses a path that is a directory.
    private static func prepareLocation(of path: String) throws(StoreError) {
        let parent = parentDirectory(of: path)
        do throws(SystemError) {
            try makeDirectories(parent)
        } catch {
            throw StoreError(path: path, reason: "cannot make its directory: \(error)", kind: .unreadable)
        }
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw StoreError(path: path, reason: "is a directory, not a store", kind: .unreadable)
        }
    }

    /// Renames `path` and its -wal and -shm to `PATH.corrupt-<UTC stamp>` (a count after it when that is
    /// taken); the new name of the database file.
    private static func moveAside(_ path: String) throws(StoreError) -> String {
        let stamp = corruptStamp(UTCTime(seconds: Int64(Glibc.time(nil))))
        var target = "\(path).corrupt-\(stamp)"
        var attempt = 1
        while access(target, F_OK) == 0 || access(target + "-wal", F_OK) == 0 {
            attempt += 1
            target = "\(path).corrupt-\(stamp)-\(attempt)"
        }
        for suffix in ["", "-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
            guard rename(path + suffix, target + suffix) == 0 else {
                throw StoreError(
                    path: path + suffix,
                    reason: "is damaged and cannot be moved aside to \(target + suffix): \(errnoText(errno))",
                    kind: .unreadable)
            }
        }
        return target
    }

    /// `20261201T101500Z`: ISO 8601's basic form, which has no colons for a file name.
    static func corruptStamp(_ time: UTCTime) -> String {
        let extended = time.iso8601  // 2026-12-01T10:15:00.000Z
        return String(extended.prefix(19).filter { $0 != "-" && $0 != ":" }) + "Z"
    }

    static func fileSize(_ path: String) -> Int? {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : nil
    }
}
