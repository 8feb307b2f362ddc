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
    public mutating func line(for location: Location) -> String {
        switch format {
        case .jsonl: return JSONLine.location(location)
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
                longitude: location.longitude, latitude: location.latitude, altitude: location.altitude)
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

/// GPX 1.1 pieces. Element order follows the schema's `wptType` sequence (ele, time, …, src, …, fix, sat,
/// hdop, …, extensions); speed and course go in Garmin's TrackPointExtension v2 (its sequence: …, speed,
/// course, …). Numbers are written as xsd:decimal, which has no exponent form.
enum GPXText {
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="lodestar" xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2" \
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
        xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
        http://www.garmin.com/xmlschemas/TrackPointExtension/v2 \
        http://www.garmin.com/xmlschemas/TrackPointExtensionv2.xsd">
        <trk>

        """

    static func appendTrackPoint(_ location: Location, to bytes: inout [UInt8]) {
        // longitudeType is [-180, 180): 180° east is written as the same meridian, -180.
        let longitude = location.longitude == 180 ? -180 : location.longitude
        append("<trkpt lat=\"", DecimalText.plain(location.latitude), "\" lon=\"", DecimalText.plain(longitude),
               "\">\n", to: &bytes)
        if let altitude = location.altitude, altitude.isFinite {
            append("  <ele>", DecimalText.plain(altitude), "</ele>\n", to: &bytes)
        }
        append("  <time>", location.timestamp.iso8601, "</time>\n", to: &bytes)
        if let device = location.device {
            append("  <src>", to: &bytes)
            appendEscaped(device, to: &bytes)
            append("</src>\n", to: &bytes)
        }
        if location.fixMode == .twoD || location.fixMode == .threeD {
            append("  <fix>", location.fixMode.name, "</fix>\n", to: &bytes)
        }
        if let satellites = location.satellitesUsed, satellites >= 0 {
            append("  <sat>", String(satellites), "</sat>\n", to: &bytes)
        }
        if let hdop = location.hdop, hdop.isFinite {
            append("  <hdop>", DecimalText.plain(hdop), "</hdop>\n", to: &bytes)
        }
        let speed = location.speed.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let course = location.course.flatMap { course -> Double? in
            guard course.isFinite else { return nil }
            // DegreesTrue_t is [0, 360).
            let normalized = course.truncatingRemainder(dividingBy: 360)
            let positive = normalized < 0 ? normalized + 360 : normalized
            return positive >= 360 ? 0 : positive
        }
        if speed != nil || course != nil {
            append("  <extensions><gpxtpx:TrackPointExtension>", to: &bytes)
            if let speed { append("<gpxtpx:speed>", DecimalText.plain(speed), "</gpxtpx:speed>", to: &bytes) }
            if let course {
                append("<gpxtpx:course>", DecimalText.plain(course), "</gpxtpx:course>", to: &bytes)
            }
            append("</gpxtpx:TrackPointExtension></extensions>\n", to: &bytes)
        }
        append("</trkpt>\n", to: &bytes)
    }

    private static func append(_ pieces: String..., to bytes: inout [UInt8]) {
        for piece in pieces { bytes.append(contentsOf: piece.utf8) }
    }

    /// XML character data: `&`, `<`, `>` and quotes escaped; control characters XML 1.0 cannot carry
    /// (everything below 0x20 but tab, newline and carriage return) become U+FFFD.
    static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): bytes.append(contentsOf: "&apos;".utf8)
            case 0x09, 0x0A, 0x0D: bytes.append(byte)
            case 0..<0x20: bytes.append(contentsOf: [0xEF, 0xBF, 0xBD])
            default: bytes.append(byte)
            }
        }
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
                longitude: location.longitude, latitude: location.latitude, altitude: location.altitude),
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

/// Shortest round-trip decimal digits (`Double.description`) without the exponent form, for formats whose
/// numbers cannot have one (xsd:decimal): `1e-05` is written `0.00001`, `1e+16` `10000000000000000`.
enum DecimalText {
    static func plain(_ value: Double) -> String {
        let text = value.description
        guard value.isFinite, let marker = text.firstIndex(where: { $0 == "e" || $0 == "E" }),
            let exponent = Int(text[text.index(after: marker)...])
        else { return text }
        var mantissa = text[..<marker]
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa = mantissa.dropFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let whole = parts.first ?? ""
        let fraction = parts.count > 1 ? parts[1] : ""
        var digits = String(whole) + String(fraction)
        var point = whole.count + exponent
        // Leading zeros in the digits move nothing but the point.
        while digits.count > 1, digits.hasPrefix("0") {
            digits.removeFirst()
            point -= 1
        }
        while digits.count > 1, digits.hasSuffix("0"), digits.count > max(point, 1) { digits.removeLast() }
        let sign = negative ? "-" : ""
        if point <= 0 { return sign + "0." + String(repeating: "0", count: -point) + digits }
        if point >= digits.count { return sign + digits + String(repeating: "0", count: point - digits.count) }
        let splitAt = digits.index(digits.startIndex, offsetBy: point)
        return sign + digits[..<splitAt] + "." + digits[splitAt...]
    }
}
