import Daemon
import Policy

/// How a simulated replay's regime and event lines are printed next to its locations: the daemon's record
/// lines without a wall-clock time (a replay has none).
enum SimulationLine {
    static func regime(t: Double, _ regime: ReceiverRegime, reason: String, format: LocationFormat) -> String {
        RecordLine.regime(t: t, regime, reason: reason, style: style(format))
    }

    static func event(t: Double, _ kind: PolicyEventKind, detail: String, format: LocationFormat) -> String {
        RecordLine.event(t: t, kind, detail: detail, style: style(format))
    }

    private static func style(_ format: LocationFormat) -> RecordLine.Style {
        format == .text ? .text : .jsonl
    }
}
