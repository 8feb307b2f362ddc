import GPSModel
import JSON
import Policy
import Receivers

// The one encoder of locations and of the policy's regime, event and power lines: the daemon's outputs and the
// commands (`watch`, `demo`, `replay`, `record`) write the same bytes through these.

/// Fixed key order, shortest round-trip numbers (full precision coordinates), absent keys for unknown values.
package enum JSONLine {
    /// `t`, when given (a simulated replay), is the seconds since the start of the capture, as the replay's
    /// regime and event lines carry it: every line of one output then has both `t` and `timestamp`.
    package static func location(_ location: Location, t: Double? = nil) -> String {
        String(decoding: locationBytes(location, t: t), as: UTF8.self)
    }

    /// `location(_:t:)`'s line as bytes, for the outputs that write bytes (the jsonl file, the socket).
    package static func locationBytes(_ location: Location, t: Double? = nil) -> [UInt8] {
        var object = JSONObject()
        object.add("type", string: "location")
        object.add("t", number: t.map(RecordLine.rounded))
        object.add("timestamp", string: location.timestamp.iso8601)
        object.add("latitude", number: location.latitude)
        object.add("longitude", number: location.longitude)
        addMeasurements(of: location, to: &object)
        return object.lineBytes()
    }

    /// Everything a location says besides where and when, in the order every output writes it (jsonl, and
    /// GeoJSON's properties).
    package static func addMeasurements(of location: Location, to object: inout JSONObject) {
        object.add("altitude", number: Precision.altitude(location.altitude))
        object.add("horizontalAccuracy", number: Precision.accuracy(location.horizontalAccuracy))
        object.add("verticalAccuracy", number: Precision.accuracy(location.verticalAccuracy))
        object.add("speed", number: Precision.speed(location.speed))
        object.add("speedAccuracy", number: Precision.accuracy(location.speedAccuracy))
        object.add("course", number: Precision.course(location.course))
        object.add("courseAccuracy", number: Precision.accuracy(location.courseAccuracy))
        object.add("fixMode", string: location.fixMode.name)
        object.add("satellitesUsed", integer: location.satellitesUsed)
        object.add("hdop", number: Precision.dop(location.hdop))
        object.add("device", string: location.device)
    }
}

/// The precision every output writes a location's measurements with (jsonl, GeoJSON, GPX, the socket), so
/// a figure derived by scaling (gpsd's 95 % `eph` × 0.58) reads `152.17`, not `152.17057142857143`. About
/// gpsd's own: accuracies and DOPs to 0.01, altitude to the millimetre, speed to 0.001 m/s, course to 0.001°.
/// Latitude and longitude are written in full (1e-9° is 0.1 mm; rounding them could only lose).
package enum Precision {
    package static func accuracy(_ value: Double?) -> Double? { rounded(value, 100) }
    package static func dop(_ value: Double?) -> Double? { rounded(value, 100) }
    package static func altitude(_ value: Double?) -> Double? { rounded(value, 1000) }
    package static func speed(_ value: Double?) -> Double? { rounded(value, 1000) }
    package static func course(_ value: Double?) -> Double? { rounded(value, 1000) }

    private static func rounded(_ value: Double?, _ scale: Double) -> Double? {
        guard let value, value.isFinite else { return value }
        // + 0 turns a tiny negative that rounds away (-0.0) into 0.
        return (value * scale).rounded() / scale + 0
    }
}

/// Aligned columns: time, mode, position, altitude, accuracy, speed, course, satellites, HDOP, device.
package enum TextLine {
    package static func location(_ location: Location) -> String {
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
    /// A value beyond what Int64 holds (NaN, inf, 1e300 from a receiver or a file) is written as Swift
    /// prints it rather than trapping in the conversion.
    package static func fixed(_ value: Double, decimals: Int, width: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled.isFinite, scaled < 9e15 else { return pad("\(value)", width) }
        let whole = Int64(scaled / scale)
        let fraction = Int64(scaled - Double(whole) * scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: max(0, decimals - digits.count)) + digits
        }
        return pad(text, width)
    }

    package static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}

/// GPX 1.1 pieces. Element order follows the schema's `wptType` sequence (ele, time, …, src, …, fix, sat,
/// hdop, …, extensions); speed and course go in Garmin's TrackPointExtension v2 (its sequence: …, speed,
/// course, …). Numbers are written as xsd:decimal, which has no exponent form.
package enum GPXText {
    package static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="lodestar" xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2" \
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
        xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
        http://www.garmin.com/xmlschemas/TrackPointExtension/v2 \
        http://www.garmin.com/xmlschemas/TrackPointExtensionv2.xsd">
        <trk>

        """

    package static func appendTrackPoint(_ location: Location, to bytes: inout [UInt8]) {
        // Appended piece by piece, numbers and the time straight into `bytes`: this runs for every fix of the
        // daily GPX output, and the Strings in between were most of its cost (bench/daemon.sh callgrind).
        bytes.reserveCapacity(bytes.count + 320)
        // longitudeType is [-180, 180): 180° east is written as the same meridian, -180.
        let longitude = location.longitude == 180 ? -180 : location.longitude
        append("<trkpt lat=\"", to: &bytes)
        DecimalText.appendPlain(location.latitude, to: &bytes)
        append("\" lon=\"", to: &bytes)
        DecimalText.appendPlain(longitude, to: &bytes)
        append("\">\n", to: &bytes)
        if let altitude = Precision.altitude(location.altitude), altitude.isFinite {
            append("  <ele>", to: &bytes)
            DecimalText.appendPlain(altitude, to: &bytes)
            append("</ele>\n", to: &bytes)
        }
        append("  <time>", to: &bytes)
        location.timestamp.appendISO8601(to: &bytes)
        append("</time>\n", to: &bytes)
        if let device = location.device {
            append("  <src>", to: &bytes)
            appendEscaped(device, to: &bytes)
            append("</src>\n", to: &bytes)
        }
        if location.fixMode == .twoD || location.fixMode == .threeD {
            append("  <fix>", to: &bytes)
            bytes.append(contentsOf: location.fixMode.name.utf8)
            append("</fix>\n", to: &bytes)
        }
        if let satellites = location.satellitesUsed, satellites >= 0 {
            append("  <sat>", to: &bytes)
            bytes.append(contentsOf: String(satellites).utf8)
            append("</sat>\n", to: &bytes)
        }
        if let hdop = Precision.dop(location.hdop), hdop.isFinite {
            append("  <hdop>", to: &bytes)
            DecimalText.appendPlain(hdop, to: &bytes)
            append("</hdop>\n", to: &bytes)
        }
        let speed = Precision.speed(location.speed).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let course = Precision.course(location.course).flatMap { course -> Double? in
            guard course.isFinite else { return nil }
            // DegreesTrue_t is [0, 360).
            let normalized = course.truncatingRemainder(dividingBy: 360)
            let positive = normalized < 0 ? normalized + 360 : normalized
            return positive >= 360 ? 0 : positive
        }
        if speed != nil || course != nil {
            append("  <extensions><gpxtpx:TrackPointExtension>", to: &bytes)
            if let speed {
                append("<gpxtpx:speed>", to: &bytes)
                DecimalText.appendPlain(speed, to: &bytes)
                append("</gpxtpx:speed>", to: &bytes)
            }
            if let course {
                append("<gpxtpx:course>", to: &bytes)
                DecimalText.appendPlain(course, to: &bytes)
                append("</gpxtpx:course>", to: &bytes)
            }
            append("</gpxtpx:TrackPointExtension></extensions>\n", to: &bytes)
        }
        append("</trkpt>\n", to: &bytes)
    }

    /// A literal's bytes, without a String or an array of pieces in between.
    private static func append(_ piece: StaticString, to bytes: inout [UInt8]) {
        piece.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// XML character data: `&`, `<`, `>` and quotes escaped; control characters XML 1.0 cannot carry
    /// (everything below 0x20 but tab, newline and carriage return) become U+FFFD.
    package static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
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

/// Shortest round-trip decimal digits (`Double.description`) without the exponent form, for formats whose
/// numbers cannot have one (xsd:decimal): `1e-05` is written `0.00001`, `1e+16` `10000000000000000`.
package enum DecimalText {
    /// `plain(value)`'s bytes appended to `bytes`; the shortest digits as they are when they have no exponent.
    package static func appendPlain(_ value: Double, to bytes: inout [UInt8]) {
        let text = value.description
        if value.isFinite, text.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            bytes.append(contentsOf: plain(value).utf8)
        } else {
            bytes.append(contentsOf: text.utf8)
        }
    }

    package static func plain(_ value: Double) -> String {
        let text = value.description
        // Bytes, not Characters, are searched: most numbers have no exponent and are returned as they are.
        guard value.isFinite, text.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
            let marker = text.firstIndex(where: { $0 == "e" || $0 == "E" }),
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

/// The lines of what happened besides locations: the regime the policy chose, a policy event, a power event.
/// In text: `# +12.0 s  TEXT`. In jsonl: `{"type":TYPE,"t":T,` then the record's own keys.
///
/// `at` is the UTC time it happened. The daemon writes it (text: after the `#`; jsonl: `"timestamp"` after
/// `"t"`); a simulated replay has no wall clock and passes nil, which keeps its lines as they were. An event
/// that carries a location names the location's time `"timestamp"` when `at` is nil (replay) and
/// `"locationTimestamp"` when `at` is given, so no line has the key twice.
package enum RecordLine {
    package enum Style: Sendable { case jsonl, text }

    package static func regime(
        t: Double, at: UTCTime? = nil, _ regime: ReceiverRegime, reason: String, style: Style
    ) -> String {
        line(
            t: t, at: at, type: "regime", text: "regime \(regime.rawValue): \(reason)",
            strings: ["regime": regime.rawValue, "reason": reason], style: style)
    }

    package static func event(
        t: Double, at: UTCTime? = nil, _ kind: PolicyEventKind, detail: String, style: Style
    ) -> String {
        let locationTimeKey: StaticString = at == nil ? "timestamp" : "locationTimestamp"
        return line(
            t: t, at: at, type: "event", text: "\(kind.name): \(detail)",
            strings: ["kind": kind.name, "detail": detail], style: style,
            more: { fields(of: kind, locationTimeKey: locationTimeKey, into: &$0) })
    }

    /// What receiver power control did and saw:
    /// `{"type":"power",…,"kind":…,"regime":…,"seconds":…,"detail":…}`.
    package static func power(t: Double, at: UTCTime? = nil, _ event: PowerEvent, style: Style) -> String {
        line(
            t: t, at: at, type: "power", text: "power \(event.kind.rawValue): \(event.detail)",
            strings: ["kind": event.kind.rawValue], style: style,
            more: { object in
                object.add("regime", string: event.regime?.rawValue)
                object.add("seconds", number: event.seconds)
                object.add("detail", string: event.detail)
            })
    }

    private static func line(
        t: Double, at: UTCTime?, type: String, text: String, strings: KeyValuePairs<StaticString, String>,
        style: Style, more: (inout JSONObject) -> Void = { _ in }
    ) -> String {
        if style == .text {
            let when = at.map { "\($0.iso8601)  " } ?? ""
            return "# \(when)\(time(t))  \(text)\n"
        }
        var object = JSONObject()
        object.add("type", string: type)
        object.add("t", number: rounded(t))
        object.add("timestamp", string: at?.iso8601)
        for (key, value) in strings { object.add(key, string: value) }
        more(&object)
        return object.line
    }

    /// What an event adds to its JSON line: where it happened, its request or its error.
    private static func fields(
        of kind: PolicyEventKind, locationTimeKey: StaticString, into object: inout JSONObject
    ) {
        switch kind {
        case .paused(let location), .significantChange(let location):
            object.add(locationTimeKey, string: location.timestamp.iso8601)
            object.add("latitude", number: location.latitude)
            object.add("longitude", number: location.longitude)
        case .deferredFinished(let error):
            object.add("error", string: error?.rawValue)
        case .requestCompleted(let id, let location):
            object.add("request", integer: Int(clamping: id.rawValue))
            object.add(locationTimeKey, string: location.timestamp.iso8601)
            object.add("latitude", number: location.latitude)
            object.add("longitude", number: location.longitude)
        case .requestFailed(let id, let error):
            object.add("request", integer: Int(clamping: id.rawValue))
            object.add("error", string: error.rawValue)
        case .receiverTimeChanged(let offset):
            object.add("offset", number: offset)
        case .resumed, .acquisitionFailed, .receiverLost, .receiverBack, .wakeDeliveredNothing:
            break
        }
    }

    /// `t` to the millisecond, as captures write it: the same input gives the same bytes.
    package static func rounded(_ t: Double) -> Double {
        (t * 1000).rounded() / 1000
    }

    /// `t` as `+1234.5 s` for people.
    private static func time(_ t: Double) -> String {
        "+" + TextLine.fixed(t, decimals: 1, width: 1) + " s"
    }
}

/// A track record in one line style: what the jsonl file, stdout and the socket write for it.
package enum TrackRecordLine {
    /// `line(for:style:)` as bytes; a jsonl location is built as bytes from the start.
    package static func lineBytes(for record: TrackRecord, style: RecordLine.Style) -> [UInt8] {
        if style == .jsonl, case .location(let location) = record { return JSONLine.locationBytes(location) }
        return Array(line(for: record, style: style).utf8)
    }

    /// The line for `record`; a location is its jsonl or text line.
    package static func line(for record: TrackRecord, style: RecordLine.Style) -> String {
        switch record {
        case .location(let location):
            return style == .text ? TextLine.location(location) : JSONLine.location(location)
        case .regime(let regime, let reason, let t, let at):
            return RecordLine.regime(t: t, at: at, regime, reason: reason, style: style)
        case .event(let kind, let detail, let t, let at):
            return RecordLine.event(t: t, at: at, kind, detail: detail, style: style)
        case .power(let event, let t, let at):
            return RecordLine.power(t: t, at: at, event, style: style)
        }
    }
}
