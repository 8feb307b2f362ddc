import GPSModel

/// The OsmAnd protocol's query, the one Traccar's OsmAnd port (5055) reads from a query string or a form body:
/// `id`, `timestamp` (epoch seconds), `lat`, `lon`, `speed` (knots), `bearing` (degrees), `altitude` and
/// `accuracy` (metres), `hdop`, `batt` (percent), `valid`, and `lodestarId`, the store's row id, which Traccar
/// keeps as a position attribute so duplicates can be told apart. Values that are not known are left out.
public enum OsmAndRequest {
    /// Knots per metre per second: a knot is one nautical mile (1852 m) an hour.
    public static let knotsPerMetrePerSecond = 3600.0 / 1852.0

    /// The URL-encoded query for `stored` (`id=pi&timestamp=…&lat=…`), usable as a query string or as an
    /// `application/x-www-form-urlencoded` body. `battery` is a percentage.
    public static func query(_ stored: StoredLocation, deviceID: String, battery: Double?) -> String {
        let location = stored.location
        var fields: [(String, String)] = [
            ("id", deviceID),
            // Whole seconds: Traccar reads an integer below 2^31 as seconds and rejects a fraction.
            ("timestamp", String(location.timestamp.seconds)),
            ("lat", decimal(location.latitude, places: 7)),
            ("lon", decimal(location.longitude, places: 7)),
        ]
        if let speed = location.speed { fields.append(("speed", decimal(speed * knotsPerMetrePerSecond, places: 3))) }
        if let course = location.course { fields.append(("bearing", decimal(course, places: 1))) }
        if let altitude = location.altitude { fields.append(("altitude", decimal(altitude, places: 2))) }
        if let accuracy = location.horizontalAccuracy { fields.append(("accuracy", decimal(accuracy, places: 2))) }
        if let hdop = location.hdop { fields.append(("hdop", decimal(hdop, places: 2))) }
        if let battery { fields.append(("batt", decimal(battery, places: 1))) }
        fields.append(("valid", "true"))
        fields.append(("lodestarId", String(stored.id)))
        return fields.map { percentEncoded($0.0) + "=" + percentEncoded($0.1) }.joined(separator: "&")
    }

    /// `value` with at most `places` decimals and no trailing zeros (`19.438`, `-33.8688`, `12`): never the
    /// exponent form (`1e-05`) Swift's own description gives small numbers. Not finite: `0`.
    static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        // Beyond 2^63 no coordinate, speed or altitude lies: print the plain rounded value.
        guard scaled < 9.2e18 else { return String(value.rounded()) }
        let units = UInt64(scaled)
        let whole = units / UInt64(scale)
        var fraction = String(units % UInt64(scale))
        fraction = String(repeating: "0", count: places - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        let sign = value < 0 && units != 0 ? "-" : ""
        return sign + String(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// RFC 3986 percent-encoding: everything but the unreserved characters, so a device id with spaces,
    /// `&` or `=` reaches the server as written.
    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                result += "%"
                result.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0x0F)]))
            }
        }
        return result
    }
}
