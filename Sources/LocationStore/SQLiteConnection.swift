import CSQLite

/// One SQLite connection, used from one thread. Every failure becomes a `StoreError` naming the file and what
/// was being done, with SQLite's own words; damage (SQLITE_CORRUPT, SQLITE_NOTADB, a short read) is told apart
/// so opening can move the file aside.
final class SQLiteConnection {
    let path: String
    private var handle: OpaquePointer?
    /// Prepared once per connection: the statements the daemon runs for every location and every batch.
    private var cached: [String: OpaquePointer] = [:]
    /// The statements of every location's write, prepared once and found by their slot: looking them up by
    /// their text hashed the insert's 400 bytes each time, and `BEGIN`/`COMMIT` through `sqlite3_exec` were
    /// parsed again for every location.
    private var frequent: [OpaquePointer?] = Array(repeating: nil, count: Frequent.allCases.count)

    enum Frequent: Int, CaseIterable {
        case begin, commit, insertLocation

        var sql: String {
            switch self {
            case .begin: "BEGIN IMMEDIATE"
            case .commit: "COMMIT"
            case .insertLocation: StoreSchema.insertLocation
            }
        }
    }

    enum Mode {
        case readOnly
        /// Read-only, and no other process writes the file while it is open: no locks, no -shm (`immutable=1`).
        case immutable
        case readWrite
        /// Read-write, creating the file when missing.
        case create

        var flags: Int32 {
            switch self {
            case .readOnly: SQLITE_OPEN_READONLY
            case .immutable: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            case .readWrite: SQLITE_OPEN_READWRITE
            case .create: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            }
        }
    }

    init(path: String, mode: Mode) throws(StoreError) {
        self.path = path
        var opened: OpaquePointer?
        let name = mode == .immutable ? Self.uri(path) + "?immutable=1" : path
        let status = sqlite3_open_v2(name, &opened, mode.flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(opened)
            throw StoreError(path: path, reason: "cannot open: \(message)", kind: Self.kind(of: status))
        }
        handle = opened
        // Extended codes tell a short read (a truncated file) from other I/O errors.
        sqlite3_extended_result_codes(opened, 1)
        // The page cache of each connection is bounded well below SQLite's default (2,000 KiB). The store
        // appends at the end of its table and reads back its newest rows, so a few dozen pages hold what
        // it uses; at the default the cache filled over a day's fixes and the daemon's private memory grew by
        // 1.6 MiB in 24 h (bench/daemon.sh soak). A page it drops is read again from the kernel's page cache.
        sqlite3_exec(opened, "PRAGMA cache_size = -\(Self.pageCacheKiB)", nil, nil, nil)
    }

    /// The page cache each connection may fill, in KiB.
    static let pageCacheKiB = 256

    deinit { close() }

    /// `file:` and the path with every byte a URI would read otherwise (`?`, `#`, `%`, spaces) escaped.
    static func uri(_ path: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-._~".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes = Array("file:".utf8)
        for byte in path.utf8 {
            if plain.contains(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func close() {
        for statement in cached.values { sqlite3_finalize(statement) }
        cached = [:]
        for case let statement? in frequent { sqlite3_finalize(statement) }
        frequent = Array(repeating: nil, count: Frequent.allCases.count)
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    var isOpen: Bool { handle != nil }

    /// Runs `sql` (one or more statements, no results wanted).
    func execute(_ sql: String, doing what: String) throws(StoreError) {
        let database = try open(doing: what)
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(database, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw failure(status, doing: what, message: text)
        }
    }

    /// The text of every row's first column (`PRAGMA quick_check`, `PRAGMA journal_mode = WAL`).
    func texts(_ sql: String, doing what: String) throws(StoreError) -> [String] {
        let statement = try Statement(prepared: sql, on: self, doing: what)
        defer { statement.finalize() }
        var result: [String] = []
        while try statement.step() { result.append(statement.text(0) ?? "") }
        return result
    }

    /// The first row's first column as an integer (0 with no row or NULL).
    func integer(_ sql: String, doing what: String, _ bind: (Statement) -> Void = { _ in }) throws(StoreError) -> Int64 {
        try withStatement(sql, doing: what) { statement throws(StoreError) in
            bind(statement)
            return try statement.step() ? statement.integer(0) ?? 0 : 0
        }
    }

    /// Runs a cached statement: prepared on first use, reset and unbound after `body`.
    func withStatement<Result>(
        _ sql: String, doing what: String, _ body: (Statement) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        let database = try open(doing: what)
        let raw: OpaquePointer
        if let existing = cached[sql] {
            raw = existing
        } else {
            var prepared: OpaquePointer?
            let status = sqlite3_prepare_v2(database, sql, -1, &prepared, nil)
            guard status == SQLITE_OK, let prepared else { throw failure(status, doing: what) }
            cached[sql] = prepared
            raw = prepared
        }
        let statement = Statement(raw: raw, connection: self, doing: what)
        defer {
            sqlite3_reset(raw)
            sqlite3_clear_bindings(raw)
        }
        return try body(statement)
    }

    /// Runs `body` in a write transaction. BEGIN IMMEDIATE takes the write lock first (waiting up to the busy
    /// timeout): a read that turned into a write could fail at once with SQLITE_BUSY when another connection
    /// wrote in between, and the busy handler does not retry that.
    /// `withStatement` for one of the `Frequent` statements.
    func withStatement<Result>(
        _ which: Frequent, doing what: String, _ body: (Statement) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        let raw = try prepared(which, doing: what)
        let statement = Statement(raw: raw, connection: self, doing: what)
        defer {
            sqlite3_reset(raw)
            sqlite3_clear_bindings(raw)
        }
        return try body(statement)
    }

    private func prepared(_ which: Frequent, doing what: @autoclosure () -> String) throws(StoreError) -> OpaquePointer {
        let database = try open(doing: what())
        if let existing = frequent[which.rawValue] { return existing }
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v2(database, which.sql, -1, &prepared, nil)
        guard status == SQLITE_OK, let prepared else { throw failure(status, doing: what()) }
        frequent[which.rawValue] = prepared
        return prepared
    }

    /// Runs `BEGIN IMMEDIATE` or `COMMIT`; `what` is made only for an error.
    private func run(_ which: Frequent, doing what: () -> String) throws(StoreError) {
        let raw = try prepared(which, doing: what())
        let status = sqlite3_step(raw)
        let error = status == SQLITE_DONE || status == SQLITE_ROW ? nil : failure(status, doing: what())
        sqlite3_reset(raw)
        if let error { throw error }
    }

    func inWriteTransaction<Result>(
        doing what: @autoclosure () -> String, _ body: () throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        try run(.begin, doing: what)
        do {
            let result = try body()
            try run(.commit, doing: what)
            return result
        } catch {
            // A failed COMMIT may have rolled back already; ROLLBACK then says there is no transaction.
            try? execute("ROLLBACK", doing: what())
            throw error
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    var lastInsertedRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Rows this connection has inserted, updated or deleted since it opened.
    var totalChanges: Int64 { handle.map { Int64(sqlite3_total_changes($0)) } ?? 0 }

    func open(doing what: String) throws(StoreError) -> OpaquePointer {
        guard let handle else { throw StoreError(path: path, reason: "cannot \(what): the store is closed") }
        return handle
    }

    func failure(_ status: Int32, doing what: String, message: String? = nil) -> StoreError {
        let text = message ?? handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
        return StoreError(path: path, reason: "cannot \(what): \(text)", kind: Self.kind(of: status))
    }

    /// What an SQLite result code means for the caller: damage (the file is not, or no longer, a database)
    /// against everything else (locked, full, no permission).
    static func kind(of status: Int32) -> StoreError.Kind {
        switch status & 0xff {
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .damaged
        case SQLITE_IOERR where status == shortReadCode: return .damaged
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH: return .unreadable
        default: return .failed
        }
    }

    /// SQLITE_IOERR_SHORT_READ, sqlite3.h's `SQLITE_IOERR | (2<<8)`: a read past the end of a truncated file.
    static let shortReadCode: Int32 = SQLITE_IOERR | (2 << 8)
}

/// One prepared statement: bind by 1-based index, step, read columns by 0-based index.
struct Statement {
    let raw: OpaquePointer
    let connection: SQLiteConnection
    let what: String

    init(raw: OpaquePointer, connection: SQLiteConnection, doing what: String) {
        self.raw = raw
        self.connection = connection
        self.what = what
    }

    /// A statement of its own (not cached), finalized by the caller: for iterations that may run while a cached
    /// statement is in use.
    init(prepared sql: String, on connection: SQLiteConnection, doing what: String) throws(StoreError) {
        let database = try connection.open(doing: what)
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v2(database, sql, -1, &prepared, nil)
        guard status == SQLITE_OK, let prepared else { throw connection.failure(status, doing: what) }
        self.init(raw: prepared, connection: connection, doing: what)
    }

    func finalize() { sqlite3_finalize(raw) }

    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(raw, index, value) } else { sqlite3_bind_null(raw, index) }
    }

    func bind(_ index: Int32, _ value: Int?) {
        bind(index, value.map(Int64.init))
    }

    func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(raw, index, value) } else { sqlite3_bind_null(raw, index) }
    }

    func bind(_ index: Int32, _ value: String?) {
        if let value { sqlite3_bind_text(raw, index, value, -1, csqlite_transient()) } else { sqlite3_bind_null(raw, index) }
    }

    /// True with a row to read, false when done.
    func step() throws(StoreError) -> Bool {
        let status = sqlite3_step(raw)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.failure(status, doing: what)
        }
    }

    /// Steps a statement that returns no rows.
    func run() throws(StoreError) {
        _ = try step()
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    func integer(_ column: Int32) -> Int64? {
        isNull(column) ? nil : sqlite3_column_int64(raw, column)
    }

    func double(_ column: Int32) -> Double? {
        isNull(column) ? nil : sqlite3_column_double(raw, column)
    }

    func text(_ column: Int32) -> String? {
        guard !isNull(column), let bytes = sqlite3_column_text(raw, column) else { return nil }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
