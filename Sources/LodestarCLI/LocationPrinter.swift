import Daemon
import GPSModel
import JSON

/// Prints locations in one `LocationFormat`, as a stream: `header()` once, `line(for:)` per location,
/// `breakSegment()` when the receiver was lost, `footer()` once at the end. Every call returns one complete
/// piece to write at once (possibly empty), so piped output arrives as it happens.
///
/// jsonl and text are one line per location with an empty header and footer. gpx and geojson are whole
/// documents: the header opens them and the footer closes them, so the output is valid only once the footer
/// is written. The printer keeps the header and footer consistent on its own: `line(for:)` and `footer()`
/// include the header when `header()` was not called, and `footer()` returns "" after the first time.
///
/// Track segments (GPX `trkseg`, GeoJSON `MultiLineString` lines): a new one starts after `breakSegment()`,
/// or when a location's timestamp is more than `segmentGap` seconds after the previous one's, or before it.
public struct LocationPrinter: Sendable {
    /// A longer gap between consecutive locations' timestamps, in seconds, starts a new track segment.
    public static let segmentGap = 10.0

    public let format: LocationFormat
    private var stage = Stage.beforeHeader
    private var previousTime: UTCTime?
    private var breakRequested = false
    /// GPX: a `trkseg` is open.
    private var segmentOpen = false
    /// GeoJSON: a feature was written, so the next one needs a comma.
    private var featureWritten = false
    /// GeoJSON: the track's positions, one array per segment, kept for the footer's line feature.
    private var runs: [[Position]] = []

    private enum Stage { case beforeHeader, body, ended }

    struct Position: Sendable {
        var longitude: Double
        var latitude: Double
        var altitude: Double?
    }

    public init(format: LocationFormat) {
        self.format = format
    }

    /// What opens the output: the XML declaration and `<gpx><trk>`, or the FeatureCollection's opening.
    /// Empty for jsonl and text, and on every call after the first.
    public mutating func header() -> String {
        guard stage == .beforeHeader else { return "" }
        stage = .body
        switch format {
        case .jsonl, .text: return ""
        case .gpx: return GPXText.header
        case .geojson: return GeoJSONText.header
        }
    }

    /// The piece for one location (one line for jsonl and text; for gpx and geojson possibly with the
    /// segment change before it). Empty after `footer()`.
    /// `t` (seconds since the start of a simulated replay) goes on jsonl lines only.
    public mutating func line(for location: Location, t: Double? = nil) -> String {
        switch format {
        case .jsonl: return JSONLine.location(location, t: t)
        case .text: return TextLine.location(location)
        case .gpx, .geojson: break
        }
        if stage == .ended { return "" }
        var bytes = Array(header().utf8)
        let newSegment = startsNewSegment(at: location.timestamp)
        previousTime = location.timestamp
        breakRequested = false
        if format == .gpx {
            if newSegment && segmentOpen { bytes.append(contentsOf: "</trkseg>\n".utf8) }
            if newSegment || !segmentOpen { bytes.append(contentsOf: "<trkseg>\n".utf8) }
            segmentOpen = true
            GPXText.appendTrackPoint(location, to: &bytes)
        } else {
            if featureWritten { bytes.append(UInt8(ascii: ",")) }
            featureWritten = true
            GeoJSONText.appendPointFeature(location, to: &bytes)
            let position = Position(
                longitude: location.longitude, latitude: location.latitude,
                altitude: Precision.altitude(location.altitude))
            if newSegment || runs.isEmpty { runs.append([position]) } else { runs[runs.count - 1].append(position) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The next location starts a new track segment (called when the receiver was lost). No effect on jsonl
    /// and text, nor before the first location.
    public mutating func breakSegment() {
        breakRequested = true
    }

    /// What closes the output: `</trkseg></trk></gpx>`, or the GeoJSON track feature and the collection's
    /// end. Includes the header if it was never written; empty for jsonl and text and after the first call.
    public mutating func footer() -> String {
        guard stage != .ended else { return "" }
        var bytes = Array(header().utf8)
        stage = .ended
        switch format {
        case .jsonl, .text: return ""
        case .gpx:
            if segmentOpen { bytes.append(contentsOf: "</trkseg>\n".utf8) }
            bytes.append(contentsOf: "</trk>\n</gpx>\n".utf8)
        case .geojson:
            GeoJSONText.appendTrackFeature(runs, separated: featureWritten, to: &bytes)
            bytes.append(contentsOf: "]}\n".utf8)
        }
        segmentOpen = false
        runs = []
        return String(decoding: bytes, as: UTF8.self)
    }

    private func startsNewSegment(at time: UTCTime) -> Bool {
        guard let previousTime else { return true }
        if breakRequested { return true }
        let gap = time.interval(since: previousTime)
        return gap < 0 || gap > Self.segmentGap
    }
}

/// GeoJSON (RFC 7946) pieces: a FeatureCollection, one Point feature per location as it comes (one line
/// each), and at the end one track feature: a LineString, or a MultiLineString when the track has several
/// segments. A segment with a single position cannot be a line and is left out of the track (its point is
/// still a feature); with no segment of two or more positions there is no track feature.
enum GeoJSONText {
    static let header = #"{"type":"FeatureCollection","features":["# + "\n"

    static func appendPointFeature(_ location: Location, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"type":"Feature","geometry":{"type":"Point","coordinates":"#.utf8)
        appendPosition(
            LocationPrinter.Position(
                longitude: location.longitude, latitude: location.latitude,
                altitude: Precision.altitude(location.altitude)),
            withAltitude: location.altitude?.isFinite ?? false, to: &bytes)
        bytes.append(contentsOf: #"},"properties":"#.utf8)
        var properties = JSONObject()
        properties.add("timestamp", string: location.timestamp.iso8601)
        JSONLine.addMeasurements(of: location, to: &properties)
        bytes.append(contentsOf: properties.closed)
        bytes.append(contentsOf: "}\n".utf8)
    }

    /// The track feature, if any segment has two or more positions. Positions have an altitude only when
    /// every position of the track has one (mixed dimensions in one geometry confuse readers).
    static func appendTrackFeature(
        _ runs: [[LocationPrinter.Position]], separated: Bool, to bytes: inout [UInt8]
    ) {
        let lines = runs.filter { $0.count >= 2 }
        guard !lines.isEmpty else { return }
        let withAltitude = lines.allSatisfy { $0.allSatisfy { $0.altitude?.isFinite ?? false } }
        if separated { bytes.append(UInt8(ascii: ",")) }
        let type = lines.count == 1 ? "LineString" : "MultiLineString"
        bytes.append(contentsOf: #"{"type":"Feature","geometry":{"type":""#.utf8)
        bytes.append(contentsOf: type.utf8)
        bytes.append(contentsOf: #"","coordinates":"#.utf8)
        if lines.count > 1 { bytes.append(UInt8(ascii: "[")) }
        for (lineIndex, line) in lines.enumerated() {
            if lineIndex > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "["))
            for (index, position) in line.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                appendPosition(position, withAltitude: withAltitude, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        }
        if lines.count > 1 { bytes.append(UInt8(ascii: "]")) }
        bytes.append(contentsOf: #"},"properties":{"type":"track"}}"#.utf8)
        bytes.append(UInt8(ascii: "\n"))
    }

    private static func appendPosition(
        _ position: LocationPrinter.Position, withAltitude: Bool, to bytes: inout [UInt8]
    ) {
        bytes.append(UInt8(ascii: "["))
        JSONWriter.appendNumber(position.longitude, to: &bytes)
        bytes.append(UInt8(ascii: ","))
        JSONWriter.appendNumber(position.latitude, to: &bytes)
        if withAltitude, let altitude = position.altitude {
            bytes.append(UInt8(ascii: ","))
            JSONWriter.appendNumber(altitude, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
