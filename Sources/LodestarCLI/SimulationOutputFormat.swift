import Daemon
import Lodestar
import GPSModel
import Policy

/// How a simulated replay's regime and event lines are printed next to its locations: the daemon's record
/// lines, with `t` and the UTC time it stands for (`started`, the capture header's time at t = 0, plus `t`),
/// as the daemon writes them; without a `started`, `t` alone.
enum SimulationLine {
    static func regime(
        t: Double, started: UTCTime?, _ regime: ReceiverRegime, reason: String, format: LocationFormat
    ) -> String {
        RecordLine.regime(t: t, at: started?.adding(seconds: t), regime, reason: reason, style: style(format))
    }

    static func event(
        t: Double, started: UTCTime?, _ kind: PolicyEventKind, detail: String, format: LocationFormat
    ) -> String {
        RecordLine.event(t: t, at: started?.adding(seconds: t), kind, detail: detail, style: style(format))
    }

    private static func style(_ format: LocationFormat) -> RecordLine.Style {
        format == .text ? .text : .jsonl
    }
}

extension SimulationLine {
    /// The first status line of a simulated replay: that no receiver is used, and which model stands in.
    static func receiverNote(profile: Profile) -> String {
        "profile \(profile.name), receiver simulated (no receiver is used) on the \(profile.receiver.name) model: "
            + EvaluationFormat.assumption(profile.receiver)
    }
}
