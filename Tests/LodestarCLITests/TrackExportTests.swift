import Foundation
import GPSModel
import TestSupport
import Testing

@testable import LodestarCLI

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A location at `second` seconds after a fixed instant, with everything known.
func trackPoint(_ second: Int64, latitude: Double = 47.5, longitude: Double = 8.25) -> Location {
    Location(
        timestamp: UTCTime(seconds: 1_700_000_000 + second, nanoseconds: 250_000_000), latitude: latitude,
        longitude: longitude, altitude: 412.5, horizontalAccuracy: 3.1, horizontalAccuracySource: .gst,
        verticalAccuracy: 4.2, speed: 12.75, speedAccuracy: 0.4, course: 271.5, courseAccuracy: 2, fixMode: .threeD,
        satellitesUsed: 11, hdop: 0.8, device: "/dev/ttyACM0")
}

/// The whole document for `locations`, with `breakSegment()` called before the indices in `breaks`.
func document(_ format: LocationFormat, _ locations: [Location], breaksBefore breaks: Set<Int> = []) -> String {
    var printer = LocationPrinter(format: format)
    var text = printer.header()
    for (index, location) in locations.enumerated() {
        if breaks.contains(index) { printer.breakSegment() }
        text += printer.line(for: location)
    }
    return text + printer.footer()
}

/// What XMLParser saw: element names in order, the text of each `trkpt` child, and any parse error.
final class GPXOutline: NSObject, XMLParserDelegate {
    var elements: [String] = []
    var segments: [Int] = []
    var texts: [String: [String]] = [:]
    var attributes: [[String: String]] = []
    var error: Error?
    private var text = ""

    init(_ xml: String) {
        super.init()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.shouldProcessNamespaces = true
        parser.delegate = self
        if !parser.parse() { error = parser.parserError ?? CocoaError(.coderReadCorrupt) }
    }

    var trackPoints: Int { segments.reduce(0, +) }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        elements.append(elementName)
        text = ""
        if elementName == "trkseg" { segments.append(0) }
        if elementName == "trkpt" {
            if !segments.isEmpty { segments[segments.count - 1] += 1 }
            attributes.append(attributeDict)
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
    ) {
        texts[elementName, default: []].append(text)
        text = ""
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        error = parseError
    }
}

@Suite struct LocationPrinterTests {
    @Test(arguments: [LocationFormat.jsonl, .text])
    func lineFormatsHaveNoHeaderOrFooter(format: LocationFormat) {
        var printer = LocationPrinter(format: format)
        #expect(printer.header() == "")
        let location = trackPoint(0)
        let expected = format == .jsonl ? JSONLine.location(location) : TextLine.location(location)
        #expect(printer.line(for: location) == expected)
        printer.breakSegment()
        #expect(printer.line(for: trackPoint(100)) == printedLine(format, trackPoint(100)))
        #expect(printer.footer() == "")
    }

    @Test func gpxTrackPointHasTheSchemaOrder() {
        let text = document(.gpx, [trackPoint(0)])
        #expect(text.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<gpx version=\"1.1\" creator=\"lodestar\""))
        #expect(text.contains(#"xmlns="http://www.topografix.com/GPX/1/1""#))
        #expect(text.contains(#"xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2""#))
        #expect(text.contains("""
            <trk>
            <trkseg>
            <trkpt lat="47.5" lon="8.25">
              <ele>412.5</ele>
              <time>2023-11-14T22:13:20.250Z</time>
              <src>/dev/ttyACM0</src>
              <fix>3d</fix>
              <sat>11</sat>
              <hdop>0.8</hdop>
              <extensions><gpxtpx:TrackPointExtension><gpxtpx:speed>12.75</gpxtpx:speed>\
            <gpxtpx:course>271.5</gpxtpx:course></gpxtpx:TrackPointExtension></extensions>
            </trkpt>
            </trkseg>
            </trk>
            </gpx>

            """))
        let outline = GPXOutline(text)
        #expect(outline.error == nil)
        #expect(outline.segments == [1])
    }

    @Test func gpxLeavesOutUnknownValues() {
        let minimal = Location(timestamp: UTCTime(seconds: 0), latitude: -1.5, longitude: 2.25, fixMode: .twoD)
        var printer = LocationPrinter(format: .gpx)
        _ = printer.header()
        #expect(printer.line(for: minimal) == """
            <trkseg>
            <trkpt lat="-1.5" lon="2.25">
              <time>1970-01-01T00:00:00.000Z</time>
              <fix>2d</fix>
            </trkpt>

            """)
        var course = minimal
        course.course = 360
        #expect(printer.line(for: course).contains("<gpxtpx:course>0.0</gpxtpx:course>"))
        #expect(!printer.line(for: course).contains("<gpxtpx:speed>"))
    }

    @Test func gpxStartsASegmentOnAGapOverTenSecondsAndOnTimeGoingBack() {
        let seconds: [Int64] = [0, 1, 2, 12, 23, 24, 20, 21]
        let outline = GPXOutline(document(.gpx, seconds.map { trackPoint($0) }))
        #expect(outline.error == nil)
        // 2 → 12 is exactly the threshold (same segment); 12 → 23 is over it; 24 → 20 goes back.
        #expect(outline.segments == [4, 2, 2])
        #expect(LocationPrinter.segmentGap == 10)
    }

    @Test func gpxStartsASegmentAfterBreakSegment() {
        let locations = (0..<6).map { trackPoint(Int64($0)) }
        let outline = GPXOutline(document(.gpx, locations, breaksBefore: [0, 2, 5]))
        #expect(outline.error == nil)
        // A break before the first point makes no empty segment.
        #expect(outline.segments == [2, 3, 1])
        var printer = LocationPrinter(format: .gpx)
        printer.breakSegment()
        printer.breakSegment()
        #expect(!printer.footer().contains("trkseg"))
    }

    @Test func gpxEscapesText() {
        var odd = trackPoint(0)
        odd.device = "/dev/a&b<c>\"d'\u{01}é"
        let text = document(.gpx, [odd])
        #expect(text.contains("<src>/dev/a&amp;b&lt;c&gt;&quot;d&apos;\u{FFFD}é</src>"))
        let outline = GPXOutline(text)
        #expect(outline.error == nil)
        #expect(outline.texts["src"] == ["/dev/a&b<c>\"d'\u{FFFD}é"])
    }

    @Test func gpxEmptyTrackIsWellFormed() {
        var printer = LocationPrinter(format: .gpx)
        let text = printer.footer()
        #expect(text.hasSuffix("<trk>\n</trk>\n</gpx>\n"))
        #expect(printer.footer() == "")
        #expect(printer.line(for: trackPoint(0)) == "")
        let outline = GPXOutline(text)
        #expect(outline.error == nil)
        #expect(outline.elements == ["gpx", "trk"])
    }

    @Test func gpxNumbersHaveNoExponent() {
        let point = Location(
            timestamp: UTCTime(seconds: 0), latitude: 0.00001, longitude: 180, altitude: -0.0026, fixMode: .threeD,
            hdop: 1e16)
        let outline = GPXOutline(document(.gpx, [point]))
        #expect(outline.attributes == [["lat": "0.00001", "lon": "-180.0"]])
        // Altitude is written to the millimetre (Precision), without an exponent either way.
        #expect(outline.texts["ele"] == ["-0.003"])
        #expect(outline.texts["hdop"] == ["10000000000000000"])
    }

    @Test(arguments: [
        (1e-05, "0.00001"), (1.5e-07, "0.00000015"), (-2.5e-5, "-0.000025"), (1e16, "10000000000000000"),
        (1.2345e17, "123450000000000000"), (47.123456789012344, "47.123456789012344"), (0.0, "0.0"), (-3.0, "-3.0"),
    ])
    func decimalTextExpandsExponents(value: Double, text: String) {
        #expect(DecimalText.plain(value) == text)
        #expect(Double(DecimalText.plain(value)) == value)
    }

    @Test func geojsonIsAFeatureCollectionOfPointsAndTheTrack() throws {
        var second = trackPoint(1, latitude: 47.6, longitude: 8.3)
        second.altitude = nil
        second.speed = nil
        let text = document(.geojson, [trackPoint(0), second])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(root["type"] as? String == "FeatureCollection")
        let features = try #require(root["features"] as? [[String: Any]])
        #expect(features.count == 3)
        let geometries = features.compactMap { $0["geometry"] as? [String: Any] }
        #expect(geometries.map { $0["type"] as? String } == ["Point", "Point", "LineString"])
        #expect(geometries[0]["coordinates"] as? [Double] == [8.25, 47.5, 412.5])
        #expect(geometries[1]["coordinates"] as? [Double] == [8.3, 47.6])
        // One position without altitude: the whole line is 2D.
        #expect(geometries[2]["coordinates"] as? [[Double]] == [[8.25, 47.5], [8.3, 47.6]])
        let properties = try #require(features[0]["properties"] as? [String: Any])
        #expect(properties["timestamp"] as? String == "2023-11-14T22:13:20.250Z")
        #expect(properties["horizontalAccuracy"] as? Double == 3.1)
        #expect(properties["speed"] as? Double == 12.75)
        #expect(properties["course"] as? Double == 271.5)
        #expect(properties["fixMode"] as? String == "3d")
        #expect(properties["satellitesUsed"] as? Int == 11)
        #expect(properties["hdop"] as? Double == 0.8)
        #expect(properties["altitude"] as? Double == 412.5)
        let unknown = try #require(features[1]["properties"] as? [String: Any])
        #expect(unknown["altitude"] == nil)
        #expect(unknown["speed"] == nil)
    }

    @Test func geojsonUsesAMultiLineStringWhenTheTrackIsBroken() throws {
        // Segments: [0, 1, 2] (gap), [30] alone (break), [31, 32]. The lone point is no line.
        let seconds: [Int64] = [0, 1, 2, 30, 31, 32]
        let text = document(.geojson, seconds.map { trackPoint($0) }, breaksBefore: [4])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let features = try #require(root["features"] as? [[String: Any]])
        #expect(features.count == 7)
        let track = try #require(features.last?["geometry"] as? [String: Any])
        #expect(track["type"] as? String == "MultiLineString")
        let lines = try #require(track["coordinates"] as? [[[Double]]])
        #expect(lines.map(\.count) == [3, 2])
        #expect(lines[0][0] == [8.25, 47.5, 412.5])
    }

    @Test(arguments: [0, 1])
    func geojsonWithoutALineIsStillValid(points: Int) throws {
        let text = document(.geojson, (0..<points).map { trackPoint(Int64($0)) })
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let features = try #require(root["features"] as? [[String: Any]])
        #expect(features.count == points)
        #expect(features.allSatisfy { ($0["geometry"] as? [String: Any])?["type"] as? String == "Point" })
    }

    @Test func geojsonEscapesTheDevice() throws {
        var odd = trackPoint(0)
        odd.device = "/dev/odd\"name\\\n"
        let text = document(.geojson, [odd])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let features = try #require(root["features"] as? [[String: Any]])
        #expect((features[0]["properties"] as? [String: Any])?["device"] as? String == "/dev/odd\"name\\\n")
    }
}

/// gpsbabel, the reference GPX reader (Debian package `gpsbabel`, installed by scripts/setup).
enum GPSBabel {
    static let path = ["/usr/bin/gpsbabel", "/usr/local/bin/gpsbabel"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `gpsbabel -t -i gpx -f FILE -o unicsv -F -`: one header line, then one line per track point (`-t`:
    /// tracks; without it only waypoints are converted).
    static func unicsv(of gpx: String) throws -> (status: Int32, output: String, error: String) {
        try run(gpx, ["-t", "-i", "gpx", "-f", "FILE", "-o", "unicsv", "-F", "-"])
    }

    /// gpsbabel with `arguments`, "FILE" standing for a temporary file holding `gpx`.
    static func run(_ gpx: String, _ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let executable = try #require(path, "gpsbabel is not installed: run scripts/setup (apt-get install gpsbabel)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("lodestar-\(UUID().uuidString).gpx")
        try Data(gpx.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments.map { $0 == "FILE" ? file.path : $0 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self),
                String(decoding: errorData, as: UTF8.self))
    }

    static func pointCount(of gpx: String) throws -> Int {
        let (status, output, error) = try unicsv(of: gpx)
        #expect(status == 0, "gpsbabel: \(error)")
        #expect(error.isEmpty, "gpsbabel: \(error)")
        let lines = output.split(whereSeparator: \.isNewline)
        return max(0, lines.count - 1)
    }
}

@Suite struct GPSBabelTests {
    @Test func gpsbabelReadsEveryPrintedPoint() throws {
        // Three segments (a gap, a break), 2D points without altitude, a device needing escapes.
        var locations = (0..<40).map { trackPoint(Int64($0), latitude: 47.5 + Double($0) * 1e-5) }
        locations += (60..<70).map { trackPoint(Int64($0), latitude: -33.9, longitude: 151.2) }
        locations[3].altitude = nil
        locations[3].fixMode = .twoD
        locations[5].device = "/dev/odd&<name>"
        let gpx = document(.gpx, locations, breaksBefore: [20])
        #expect(GPXOutline(gpx).segments == [20, 20, 10])
        #expect(try GPSBabel.pointCount(of: gpx) == locations.count)
        let (_, output, _) = try GPSBabel.unicsv(of: gpx)
        let header = output.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        #expect(header.contains("Latitude"))
    }

    @Test func gpsbabelReadsAnEmptyTrack() throws {
        #expect(try GPSBabel.pointCount(of: document(.gpx, [])) == 0)
    }
}

/// Keeps what is written; from write attempt number `goneAt` on, says the reader is gone and keeps nothing.
final class CountingSink: TextSink, @unchecked Sendable {
    private let lock = NSLock()
    private var pieces: [String] = []
    private var tries = 0
    let goneAt: Int?

    init(goneAt: Int? = nil) {
        self.goneAt = goneAt
    }

    func write(_ text: String) -> WriteOutcome {
        lock.lock()
        defer { lock.unlock() }
        tries += 1
        if let goneAt, tries >= goneAt { return .readerGone }
        pieces.append(text)
        return .written
    }

    var attempts: Int {
        lock.lock()
        defer { lock.unlock() }
        return tries
    }

    var writes: [String] {
        lock.lock()
        defer { lock.unlock() }
        return pieces
    }
}

/// `watch`'s loop end to end through the demo (a private gpsd fed a real capture): the document is complete
/// however the watch ends.
@Suite(.tags(.gpsd)) struct TrackExportEndToEndTests {
    func demo(_ arguments: [String], output: CountingSink, stopAfterWrites: Int? = nil) -> (Int32, String) {
        let error = MemorySink()
        let context = CommandContext(
            standardOutput: output, standardError: error,
            shouldStop: { stopAfterWrites.map { output.writes.count >= $0 } ?? false })
        let code = LodestarCommand.main(arguments: ["demo"] + arguments, context: context)
        return (code, error.text)
    }

    @Test func gpxEndedByCountLoadsInGpsbabelWithEveryPoint() throws {
        let output = CountingSink()
        let (code, error) = demo(
            ["--capture", Fixtures.path("gpsd-quectel-eg25g-moving.nmea"), "--speed", "1000", "--format", "gpx",
             "--count", "7"], output: output)
        #expect(code == 0, "\(error)")
        // Header, one piece per fix, footer.
        #expect(output.writes.count == 9)
        let gpx = output.writes.joined()
        #expect(gpx.hasSuffix("</trkseg>\n</trk>\n</gpx>\n"))
        let outline = GPXOutline(gpx)
        #expect(outline.error == nil)
        #expect(outline.trackPoints == 7)
        #expect(try GPSBabel.pointCount(of: gpx) == 7)
    }

    @Test func geojsonEndedByTheCaptureRunningOutIsComplete() throws {
        let output = CountingSink()
        let (code, error) = demo(
            ["--capture", Fixtures.path("gpsd-sirf4-bu353s4.nmea"), "--speed", "1000", "--format", "geojson"],
            output: output)
        #expect(code == 0, "\(error)")
        let text = output.writes.joined()
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let features = try #require(root["features"] as? [[String: Any]])
        let points = features.filter { ($0["geometry"] as? [String: Any])?["type"] as? String == "Point" }
        // Header and footer around one piece per point.
        #expect(points.count == output.writes.count - 2)
        #expect(points.count > 1)
        #expect(features.count == points.count + 1)
    }

    @Test func gpxEndedByAStopRequestIsComplete() throws {
        let output = CountingSink()
        let (code, error) = demo(
            ["--capture", Fixtures.path("gpsd-quectel-eg25g-moving.nmea"), "--speed", "1000", "--format", "gpx"],
            output: output, stopAfterWrites: 4)
        #expect(code == 0, "\(error)")
        let gpx = output.writes.joined()
        #expect(gpx.hasSuffix("</gpx>\n"))
        let outline = GPXOutline(gpx)
        #expect(outline.error == nil)
        #expect(outline.trackPoints == output.writes.count - 2)
        #expect(try GPSBabel.pointCount(of: gpx) == outline.trackPoints)
    }

    @Test func goneReaderGetsNothingMore() {
        let output = CountingSink(goneAt: 4)
        let (code, error) = demo(
            ["--capture", Fixtures.path("gpsd-quectel-eg25g-moving.nmea"), "--speed", "1000", "--format", "gpx"],
            output: output)
        #expect(code == 0, "\(error)")
        // The header and two points; the refused fourth write ended the watch and no footer was tried after.
        #expect(output.writes.count == 3)
        #expect(output.attempts == 4)
        #expect(!output.writes.joined().contains("</gpx>"))
    }
}
