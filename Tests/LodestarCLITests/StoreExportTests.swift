import Forwarding
import Foundation
import GPSModel
import LocationStore
import SystemInterface
import Testing

@testable import LodestarCLI

/// `lodestar store export` on stores made by `LocationStore`, read by JSONSerialization, XMLParser and gpsbabel.
@Suite struct StoreExportTests {
    /// 60 locations a second apart, then 40 after a gap (two track segments), with the reasons in turn, and
    /// three events; the rows as stored.
    static func makeStore(_ path: String) throws -> [StoredLocation] {
        let store = try LocationStore(path: path)
        defer { store.close() }
        var locations = (0..<60).map { trackPoint(Int64($0), latitude: 47.5 + Double($0) * 1e-5) }
        locations += (100..<140).map { trackPoint(Int64($0), latitude: -33.9, longitude: 151.2 + Double($0) * 1e-5) }
        locations[3].altitude = nil
        locations[3].fixMode = .twoD
        locations[5].device = "/dev/odd&<name>"
        let reasons = DeliveryReason.allCases
        var rows: [StoredLocation] = []
        for start in stride(from: 0, to: locations.count, by: 25) {
            let slice = locations[start..<min(start + 25, locations.count)].enumerated().map {
                ($0.element, reasons[(start + $0.offset) % reasons.count])
            }
            rows += try store.append(slice, stored: UTCTime(seconds: 1_700_000_200 + Int64(start)))
        }
        for index in 0..<3 {
            try store.appendEvent(
                kind: "regime", detail: "event \(index)", at: UTCTime(seconds: 1_700_000_000 + Int64(index) * 100))
        }
        return rows
    }

    func withStore(_ body: (String, [StoredLocation]) throws -> Void) throws {
        let directory = try #require(TemporaryDirectory(prefix: "lodestar-export"))
        defer { directory.remove() }
        let path = directory.path + "/store.sqlite"
        try body(path, try Self.makeStore(path))
    }

    func objects(_ jsonl: String) throws -> [[String: Any]] {
        try jsonl.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func jsonlHasEveryLocationAsTheServiceWritesItWithIdReasonAndStoredTime() throws {
        try withStore { (path, rows) throws in
            let (code, output, error) = run(["store", "export", "--store", path])
            #expect(code == 0, "\(error)")
            #expect(error.isEmpty)
            let lines = try objects(output)
            let locations = lines.filter { $0["type"] as? String == "location" }
            try #require(locations.count == rows.count)
            for (line, row) in zip(locations, rows) {
                #expect((line["id"] as? NSNumber)?.int64Value == row.id)
                #expect(line["reason"] as? String == row.reason.rawValue)
                #expect(line["stored"] as? String == row.stored.iso8601)
                // Without the store's keys, the line is the service's jsonl line for the location.
                var service = line
                for key in ["id", "reason", "stored"] { service[key] = nil }
                let expected = try #require(
                    try JSONSerialization.jsonObject(with: Data(JSONLine.location(row.location).utf8)) as? NSDictionary)
                #expect(NSDictionary(dictionary: service) == expected)
            }
            let events = lines.filter { $0["type"] as? String == "event" }
            #expect(events.compactMap { $0["detail"] as? String } == ["event 0", "event 1", "event 2"])
            #expect(lines.count == rows.count + 3)
        }
    }

    @Test func geojsonHasAPointForEveryLocation() throws {
        try withStore { (path, rows) throws in
            let (code, output, error) = run(["store", "export", "--format", "geojson", "--store", path])
            #expect(code == 0, "\(error)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            let features = try #require(document["features"] as? [[String: Any]])
            let points = features.compactMap { $0["geometry"] as? [String: Any] }.filter { $0["type"] as? String == "Point" }
            #expect(points.count == rows.count)
            let coordinates = points.compactMap { $0["coordinates"] as? [Double] }
            try #require(coordinates.count == rows.count)
            // Foundation's parser on Linux can be a few ulps off the shortest round-trip digits written.
            for (position, row) in zip(coordinates, rows) {
                #expect(abs(position[0] - row.location.longitude) < 1e-9 && abs(position[1] - row.location.latitude) < 1e-9)
            }
            #expect(features.contains { ($0["geometry"] as? [String: Any])?["type"] as? String == "MultiLineString" })
        }
    }

    @Test func gpxLoadsInGPSBabelWithEveryPoint() throws {
        try withStore { (path, rows) throws in
            let (code, output, error) = run(["store", "export", "--format", "gpx", "--store", path])
            #expect(code == 0, "\(error)")
            let outline = GPXOutline(output)
            #expect(outline.error == nil)
            #expect(outline.segments == [60, 40])
            #expect(try GPSBabel.pointCount(of: output) == rows.count)
        }
    }

    @Test(arguments: ["jsonl", "gpx", "geojson"])
    func sinceKeepsTheLocationsFromThatTimeOn(format: String) throws {
        try withStore { (path, rows) throws in
            let since = rows[70].location.timestamp
            let expected = rows.filter { $0.location.timestamp >= since }
            #expect(expected.count == 30)
            let (code, output, error) = run(
                ["store", "export", "--format", format, "--since", since.iso8601, "--store", path])
            #expect(code == 0, "\(error)")
            switch format {
            case "jsonl":
                let lines = try objects(output)
                let ids = lines.filter { $0["type"] as? String == "location" }.compactMap { ($0["id"] as? NSNumber)?.int64Value }
                #expect(ids == expected.map(\.id))
                // The events are filtered by the same time: only the last (at +200 s) is after it.
                let events = lines.filter { $0["type"] as? String == "event" }.compactMap { $0["detail"] as? String }
                #expect(events == ["event 2"])
            case "gpx":
                #expect(GPXOutline(output).trackPoints == expected.count)
                #expect(try GPSBabel.pointCount(of: output) == expected.count)
            default:
                let document = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
                let features = try #require(document["features"] as? [[String: Any]])
                let times = features.compactMap { ($0["properties"] as? [String: Any])?["timestamp"] as? String }
                #expect(times == expected.map(\.location.timestamp.iso8601))
            }
        }
    }

    @Test func wgs84IsTheDefaultAndWritesTheCoordinatesAsStored() throws {
        try withStore { (path, _) throws in
            let plain = run(["store", "export", "--store", path])
            let named = run(["store", "export", "--coordinates", "wgs84", "--store", path])
            #expect(plain.0 == 0 && named.0 == 0)
            #expect(plain.1 == named.1)
        }
    }

    @Test func gcj02MovesPointsInMainlandChinaOnly() throws {
        let directory = try #require(TemporaryDirectory(prefix: "lodestar-export"))
        defer { directory.remove() }
        let path = directory.path + "/store.sqlite"
        let store = try LocationStore(path: path)
        // Shanghai (converted) and Hong Kong (left as it is: GCJ-02 is mainland China's).
        let shanghai = trackPoint(0, latitude: 31.2304, longitude: 121.4737)
        let hongKong = trackPoint(1, latitude: 22.3193, longitude: 114.1694)
        _ = try store.append([(shanghai, .update), (hongKong, .update)], stored: UTCTime(seconds: 1_700_000_200))
        store.close()
        let (code, output, error) = run(["store", "export", "--coordinates", "gcj02", "--store", path])
        #expect(code == 0, "\(error)")
        let lines = try objects(output).filter { $0["type"] as? String == "location" }
        try #require(lines.count == 2)
        let expected = GCJ02.fromWGS84(latitude: shanghai.latitude, longitude: shanghai.longitude)
        #expect(abs((lines[0]["latitude"] as? Double ?? 0) - expected.latitude) < 1e-9)
        #expect(abs((lines[0]["longitude"] as? Double ?? 0) - expected.longitude) < 1e-9)
        #expect(abs(expected.longitude - shanghai.longitude) > 1e-3, "the conversion moved Shanghai by nothing")
        #expect(lines[1]["latitude"] as? Double == hongKong.latitude)
        #expect(lines[1]["longitude"] as? Double == hongKong.longitude)
    }

    @Test func aMissingStoreIsExit66NamingIt() throws {
        let directory = try #require(TemporaryDirectory(prefix: "lodestar-export"))
        defer { directory.remove() }
        let path = directory.path + "/none.sqlite"
        let (code, output, error) = run(["store", "export", "--store", path])
        #expect(code == 66)
        #expect(output.isEmpty)
        #expect(error == "lodestar store export: \(path): no such file\n")
        #expect(directoryEntries(directory.path).isEmpty)
    }

    @Test func aDamagedStoreIsExit65NamingItAndIsLeftWhereItIs() throws {
        try withStore { (path, _) throws in
            var bytes = try readWholeFile(path)
            for index in 0..<16 { bytes[index] = 0 }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let (code, output, error) = run(["store", "export", "--format", "gpx", "--store", path])
            #expect(code == 65)
            #expect(output.isEmpty)
            #expect(error.hasPrefix("lodestar store export: \(path): "), "\(error)")
            #expect(try readWholeFile(path) == bytes)
            let folder = (path as NSString).deletingLastPathComponent
            #expect(!directoryEntries(folder).contains { $0.contains("corrupt") })
        }
    }

    @Test func aFailedWriteIsExit74AndAStopClosesTheDocument() throws {
        try withStore { (path, rows) throws in
            let error = MemorySink()
            let failed = LodestarCommand.main(
                arguments: ["store", "export", "--store", path],
                context: CommandContext(standardOutput: RefusingSink(), standardError: error, shouldStop: { false }))
            #expect(failed == 74)
            #expect(error.text.hasPrefix("lodestar store export: cannot write output: "), "\(error.text)")

            // Asked to stop at the 11th location: the document has ten and is closed.
            let output = MemorySink()
            let stopError = MemorySink()
            let asked = NSLock()
            nonisolated(unsafe) var questions = 0
            let stopped = LodestarCommand.main(
                arguments: ["store", "export", "--format", "gpx", "--store", path],
                context: CommandContext(
                    standardOutput: output, standardError: stopError,
                    shouldStop: {
                        asked.withLock {
                            questions += 1
                            return questions > 10
                        }
                    }))
            #expect(stopped == 130)
            #expect(stopError.text == "lodestar store export: stopped by SIGINT after 10 locations; the output ends there\n")
            let outline = GPXOutline(output.text)
            #expect(outline.error == nil)
            #expect(outline.trackPoints == 10)
            #expect(outline.attributes.first?["lat"] == String(rows[0].location.latitude))
        }
    }

    @Test(arguments: [
        ["--since", "yesterday"], ["--since", "2026-12-01 08:00:00"], ["--format", "kml"], ["--coordinates", "bd09"],
    ])
    func badValuesAreUsageErrors(arguments: [String]) {
        let (code, output, error) = run(["store", "export", "--store", "/nonexistent/store.sqlite"] + arguments)
        #expect(code == 64)
        #expect(output.isEmpty)
        #expect(error.contains("'\(arguments[1])'"), "\(error)")
    }
}

/// Refuses every write with EIO.
private final class RefusingSink: TextSink {
    func write(_ text: String) -> WriteOutcome { .failed(errno: EIO) }
}
