/// The store's tables, versioned by `PRAGMA user_version` (docs/store.md). A new store is made by running every
/// migration from 0; an older file runs the ones after its version. A change to the schema is a new entry at
/// the end of `migrations`, never an edit of an old one: files in the field were made by the old ones.
enum StoreSchema {
    struct Migration {
        /// The version the file has after it.
        var version: Int64
        var summary: String
        var sql: String
    }

    static let migrations: [Migration] = [
        Migration(
            version: 1, summary: "locations and events",
            // AUTOINCREMENT: an id is never reused, even after the newest rows were deleted, so a server can
            // drop duplicates by it. Times are whole seconds and nanoseconds, as UTCTime holds them.
            sql: """
                CREATE TABLE locations (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    stored_s INTEGER NOT NULL,
                    stored_ns INTEGER NOT NULL,
                    reason TEXT NOT NULL,
                    time_s INTEGER NOT NULL,
                    time_ns INTEGER NOT NULL,
                    latitude REAL NOT NULL,
                    longitude REAL NOT NULL,
                    altitude REAL,
                    horizontal_accuracy REAL,
                    horizontal_accuracy_source TEXT,
                    vertical_accuracy REAL,
                    speed REAL,
                    speed_accuracy REAL,
                    course REAL,
                    course_accuracy REAL,
                    fix_mode INTEGER NOT NULL,
                    satellites_used INTEGER,
                    hdop REAL,
                    device TEXT,
                    origin TEXT NOT NULL
                );
                CREATE TABLE events (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    at_s INTEGER NOT NULL,
                    at_ns INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    detail TEXT NOT NULL
                );
                """),
        Migration(
            version: 2, summary: "each uploader's position in the queue",
            // `acknowledged`: the highest location id the uploader's server took; it waits for the rows after.
            sql: """
                CREATE TABLE uploaders (
                    name TEXT PRIMARY KEY NOT NULL,
                    acknowledged INTEGER NOT NULL
                );
                """),
    ]

    /// The version this code writes and reads.
    static var current: Int64 { migrations.last?.version ?? 0 }

    /// The oldest version whose `locations` and `events` read as this code reads them: a read-only opening
    /// (`lodestar store export`) cannot migrate, and reads any version from here to `current`.
    static let oldestReadable: Int64 = 1

    /// The columns of a location row, in the order `LocationStore.location(from:)` reads them.
    static let locationColumns = """
        id, stored_s, stored_ns, reason, time_s, time_ns, latitude, longitude, altitude, horizontal_accuracy, \
        horizontal_accuracy_source, vertical_accuracy, speed, speed_accuracy, course, course_accuracy, fix_mode, \
        satellites_used, hdop, device, origin
        """

    static let insertLocation = """
        INSERT INTO locations (stored_s, stored_ns, reason, time_s, time_ns, latitude, longitude, altitude, \
        horizontal_accuracy, horizontal_accuracy_source, vertical_accuracy, speed, speed_accuracy, course, \
        course_accuracy, fix_mode, satellites_used, hdop, device, origin) \
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)
        """
}
