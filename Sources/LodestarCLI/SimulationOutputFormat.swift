import Capture
import GPSModel
import JSON
import Policy

/// How a simulated replay's regime and event lines are printed next to its locations.
enum SimulationLine {
    static func regime(t: Double, _ regime: ReceiverRegime, reason: String, format: LocationFormat) -> String {
        if format == .text {
            return "# \(time(t))  regime \(regime.rawValue): \(reason)\n"
        }
        var object = JSONObject()
        object.add("type", string: "regime")
        object.add("t", number: rounded(t))
        object.add("regime", string: regime.rawValue)
        object.add("reason", string: reason)
        return object.line
    }

    static func event(t: Double, _ kind: PolicyEventKind, detail: String, format: LocationFormat) -> String {
        if format == .text {
            return "# \(time(t))  \(kind.name): \(detail)\n"
        }
        var object = JSONObject()
        object.add("type", string: "event")
        object.add("t", number: rounded(t))
        object.add("kind", string: kind.name)
        object.add("detail", string: detail)
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
        return object.line
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
