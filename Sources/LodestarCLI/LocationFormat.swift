import GPSModel
import JSON

/// How `watch` and `demo` print locations; `LocationPrinter` prints them.
public enum LocationFormat: String, Sendable, CaseIterable {
    /// One JSON object per line, the schema in the README.
    case jsonl
    /// One aligned line per fix, for people.
    case text
    /// A GPX 1.1 document: one track, one segment per unbroken run.
    case gpx
    /// A GeoJSON (RFC 7946) FeatureCollection: a Point feature per location and the track as a line.
    case geojson
}

/// Fixed key order, shortest round-trip numbers (full precision coordinates), absent keys for unknown values.
enum JSONLine {
    static func location(_ location: Location) -> String {
        var object = JSONObject()
        object.add("type", string: "location")
        object.add("timestamp", string: location.timestamp.iso8601)
        object.add("latitude", number: location.latitude)
        object.add("longitude", number: location.longitude)
        addMeasurements(of: location, to: &object)
        return object.line
    }

    /// Everything a location says besides where and when, in the order every output writes it (jsonl, and
    /// GeoJSON's properties).
    static func addMeasurements(of location: Location, to object: inout JSONObject) {
        object.add("altitude", number: location.altitude)
        object.add("horizontalAccuracy", number: location.horizontalAccuracy)
        object.add("verticalAccuracy", number: location.verticalAccuracy)
        object.add("speed", number: location.speed)
        object.add("speedAccuracy", number: location.speedAccuracy)
        object.add("course", number: location.course)
        object.add("courseAccuracy", number: location.courseAccuracy)
        object.add("fixMode", string: location.fixMode.name)
        object.add("satellitesUsed", integer: location.satellitesUsed)
        object.add("hdop", number: location.hdop)
        object.add("device", string: location.device)
    }
}

/// Aligned columns: time, mode, position, altitude, accuracy, speed, course, satellites, HDOP, device.
enum TextLine {
    static func location(_ location: Location) -> String {
        let latitude = fixed(abs(location.latitude), decimals: 7, width: 11) + (location.latitude < 0 ? " S" : " N")
        let longitude = fixed(abs(location.longitude), decimals: 7, width: 12)
            + (location.longitude < 0 ? " W" : " E")
        let altitude = location.altitude.map { fixed($0, decimals: 1, width: 7) + " m" } ?? pad("—", 9)
        let accuracy = location.horizontalAccuracy.map { "±" + fixed($0, decimals: 1, width: 6) + " m" } ?? pad("±—", 10)
        let speed = location.speed.map { fixed($0, decimals: 1, width: 6) + " m/s" } ?? pad("—", 10)
        let course = location.course.map { fixed($0, decimals: 1, width: 5) + "°" } ?? pad("—", 6)
        let satellites = location.satellitesUsed.map { pad(String($0), 2) + " sats" } ?? pad("— sats", 7)
        let hdop = location.hdop.map { "hdop " + fixed($0, decimals: 1, width: 4) } ?? "hdop    —"
        let mode = location.fixMode.name.uppercased()
        return [location.timestamp.iso8601, mode, latitude, longitude, altitude, accuracy, speed, course,
                satellites, hdop, location.device ?? ""].joined(separator: "  ") + "\n"
    }

    /// `value` with `decimals` digits after the point, right-aligned in `width` characters.
    static func fixed(_ value: Double, decimals: Int, width: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int64(scaled / scale)
        let fraction = Int64(scaled - Double(whole) * scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: max(0, decimals - digits.count)) + digits
        }
        return pad(text, width)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
