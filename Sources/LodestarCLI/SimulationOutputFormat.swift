import Capture
import GPSModel
import JSON
import Policy

/// How a simulated replay's regime and event lines are printed next to its locations.
enum SimulationLine {
    static func regime(t: Double, _ regime: ReceiverRegime, reason: String, format: LocationFormat) -> String {
        line(
            t: t, type: "regime", text: "regime \(regime.rawValue): \(reason)",
            strings: ["regime": regime.rawValue, "reason": reason], format: format)
    }

    static func event(t: Double, _ kind: PolicyEventKind, detail: String, format: LocationFormat) -> String {
        line(
            t: t, type: "event", text: "\(kind.name): \(detail)", strings: ["kind": kind.name, "detail": detail],
            format: format, more: { fields(of: kind, into: &$0) })
    }

    /// `# +12.0 s  TEXT` in text; otherwise `{"type":TYPE,"t":T,` then `strings` in order and what `more` adds.
    private static func line(
        t: Double, type: String, text: String, strings: KeyValuePairs<StaticString, String>, format: LocationFormat,
        more: (inout JSONObject) -> Void = { _ in }
    ) -> String {
        if format == .text { return "# \(time(t))  \(text)\n" }
        var object = JSONObject()
        object.add("type", string: type)
        object.add("t", number: rounded(t))
        for (key, value) in strings { object.add(key, string: value) }
        more(&object)
        return object.line
    }

    /// What an event adds to its JSON line: where it happened, its request or its error.
    private static func fields(of kind: PolicyEventKind, into object: inout JSONObject) {
        switch kind {
        case .paused(let location), .significantChange(let location):
            object.add("timestamp", string: location.timestamp.iso8601)
            object.add("latitude", number: location.latitude)
            object.add("longitude", number: location.longitude)
        case .deferredFinished(let error):
            object.add("error", string: error?.rawValue)
        case .requestCompleted(let id, let location):
            object.add("request", integer: Int(clamping: id.rawValue))
            object.add("timestamp", string: location.timestamp.iso8601)
            object.add("latitude", number: location.latitude)
            object.add("longitude", number: location.longitude)
        case .requestFailed(let id, let error):
            object.add("request", integer: Int(clamping: id.rawValue))
            object.add("error", string: error.rawValue)
        case .resumed, .acquisitionFailed, .receiverLost, .receiverBack:
            break
        }
    }

    /// `t` to the millisecond, as captures write it: the same input gives the same bytes.
    private static func rounded(_ t: Double) -> Double {
        (t * 1000).rounded() / 1000
    }

    /// `t` as `+1234.5 s` for people.
    private static func time(_ t: Double) -> String {
        "+" + TextLine.fixed(t, decimals: 1, width: 1) + " s"
    }
}
