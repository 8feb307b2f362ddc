import Forwarding
import GPSModel
import SystemInterface
import Testing

@testable import LocationStore

#if canImport(Glibc)
    import Glibc
#endif

/// A location with every member set, varied by `index` so no two rows are alike.
func fullLocation(_ index: Int) -> Location {
    let sources: [AccuracySource] = [.gst, .receiver, .gpsdEstimate]
    return Location(
        timestamp: UTCTime(seconds: 1_780_000_000 + Int64(index), nanoseconds: Int32(index % 1000) * 1_000_001),
        latitude: 47.123456789 + Double(index) * 1e-7, longitude: -122.987654321 - Double(index) * 1e-7,
        altitude: 412.5 + Double(index) / 3, horizontalAccuracy: 3.1 + Double(index % 7) / 7,
        horizontalAccuracySource: sources[index % sources.count], verticalAccuracy: 4.2, speed: 12.75 + Double(index) / 9,
        speedAccuracy: 0.4, course: Double(index % 360) + 0.125, courseAccuracy: 2, fixMode: index % 2 == 0 ? .threeD : .twoD,
        satellitesUsed: 4 + index % 20, hdop: 0.8, device: "/dev/ttyACM\(index % 3)", origin: index % 5 == 0 ? .replay : .live)
}

/// A location with every optional member nil.
func sparseLocation(_ index: Int) -> Location {
    Location(
        timestamp: UTCTime(seconds: 1_780_000_000 + Int64(index)), latitude: -33.9 + Double(index) * 1e-6,
        longitude: 151.2, fixMode: .noFix)
}

/// A temporary directory for one test, removed at the end.
func withDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let directory = try #require(TemporaryDirectory(prefix: "lodestar-store"))
    defer { directory.remove() }
    return try body(directory.path)
}

/// A new store in a temporary directory, removed at the end.
func withStore<Result>(bounds: StoreBounds = StoreBounds(), _ body: (LocationStore) throws -> Result) throws -> Result {
    try withDirectory { directory in try body(LocationStore(path: directory + "/store.sqlite", bounds: bounds)) }
}

/// The names in `directory` that start with `prefix`.
func entries(in directory: String, startingWith prefix: String) -> [String] {
    directoryEntries(directory).filter { $0.hasPrefix(prefix) }.sorted()
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    try #require(descriptor >= 0, "cannot create \(path)")
    defer { close(descriptor) }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    try #require(written == bytes.count, "cannot write \(path)")
}

/// Bytes on disk of a file, 0 when there is none.
func diskSize(_ path: String) -> Int {
    LocationStore.fileSize(path) ?? 0
}

/// Every location of the store, in id order.
func allLocations(_ store: LocationStore) throws -> [StoredLocation] {
    var rows: [StoredLocation] = []
    try store.forEachLocation(since: nil) { rows.append($0) }
    return rows
}

/// `count` full locations with the reasons in turn.
func batch(_ range: Range<Int>) -> [(Location, DeliveryReason)] {
    range.map { (fullLocation($0), DeliveryReason.allCases[$0 % DeliveryReason.allCases.count]) }
}

/// The error `body` threw; nil when it did not throw.
func caught(_ body: () throws(StoreError) -> Void) -> StoreError? {
    do throws(StoreError) {
        try body()
        return nil
    } catch {
        return error
    }
}
