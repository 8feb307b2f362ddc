import GPSModel
import JSON

/// OwnTracks' JSON messages (the `location` and `lwt` types of the OwnTracks booklet's JSON chapter), as the
/// MQTT uploader publishes them. Pure: the uploader supplies every time.
public enum OwnTracksPayload {
    /// The `_type:"location"` message for a stored location, one compact JSON object without a newline.
    ///
    /// Units are OwnTracks': `acc`, `alt` and `vac` whole metres, `vel` whole km/h, `cog` whole degrees, `tst`
    /// and `created_at` whole epoch seconds. OwnTracks adds those five figures "only if not zero"; an unknown one
    /// is left out too, so a subscriber never reads an unknown accuracy as a perfect one.
    public static func location(_ stored: StoredLocation, trackerID: String?) -> String {
        let location = stored.location
        var object = JSONObject()
        object.add("_type", string: "location")
        if let trackerID, !trackerID.isEmpty { object.add("tid", string: trackerID) }
        object.add("tst", integer: Int(location.timestamp.seconds))
        object.add("lat", number: location.latitude)
        object.add("lon", number: location.longitude)
        object.add("acc", integer: nonZeroWhole(location.horizontalAccuracy))
        object.add("alt", integer: nonZeroWhole(location.altitude))
        object.add("vac", integer: nonZeroWhole(location.verticalAccuracy))
        object.add("vel", integer: nonZeroWhole(location.speed.map { $0 * kilometresPerHourPerMetrePerSecond }))
        object.add("cog", integer: nonZeroWhole(location.course.map(wholeDegrees)))
        object.add("t", string: trigger(for: stored.reason))
        object.add("created_at", integer: Int(stored.stored.seconds))
        object.add("_id", string: messageID(for: stored.id))
        return String(decoding: object.closed, as: UTF8.self)
    }

    /// The `_type:"lwt"` message the broker publishes for the device when its connection drops without a
    /// clean disconnect. `tst` is when the connection that carries the will was opened, as OwnTracks' apps
    /// send it.
    public static func lastWill(connectedAt time: UTCTime) -> String {
        var object = JSONObject()
        object.add("_type", string: "lwt")
        object.add("tst", integer: Int(time.seconds))
        return String(decoding: object.closed, as: UTF8.self)
    }

    /// OwnTracks' `t` trigger for why the location was delivered. Timer-driven deliveries are `t` (OwnTracks'
    /// move mode publishes on a timer); a significant change is `p`, the ping OwnTracks' significant-changes
    /// mode sends; a single-shot request answers as `r`, OwnTracks' response to a location request.
    public static func trigger(for reason: DeliveryReason) -> String {
        switch reason {
        case .update, .deferredBatch: "t"
        case .significantChange: "p"
        case .request: "r"
        }
    }

    /// The `_id` of a stored location: its store id as at least eight lower-case hexadecimal digits (OwnTracks'
    /// own ids are eight hex digits), the same every time it is sent, so repeats can be dropped.
    public static func messageID(for storeID: Int64) -> String {
        let digits = String(UInt64(bitPattern: storeID), radix: 16)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    static let kilometresPerHourPerMetrePerSecond = 3.6

    /// Course in whole degrees 0...359: 359.6° rounds to 360, which is north, 0.
    static func wholeDegrees(_ course: Double) -> Double {
        let whole = course.rounded()
        let wrapped = whole.truncatingRemainder(dividingBy: 360)
        return wrapped < 0 ? wrapped + 360 : wrapped
    }

    /// `value` rounded to a whole number; nil when unknown, not finite, zero once rounded, or beyond `Int`.
    static func nonZeroWhole(_ value: Double?) -> Int? {
        guard let value, value.isFinite else { return nil }
        let whole = value.rounded()
        guard whole != 0, abs(whole) < 1e15 else { return nil }
        return Int(whole)
    }
}
