import GPSD
import Capture
import GPSModel
import Policy

#if canImport(Glibc)
import Glibc
#endif

/// What one run (the policy, a baseline, the oracle) cost and how good its track was.
public struct RunFigures: Sendable, Equatable {
    public var name: String
    /// Charge drawn by the receiver, mAh.
    public var energy: Double
    /// Percentage of always-on for the same capture and receiver model.
    public var energyPercent: Double
    /// The part of `energy` drawn while the true track was stopped (moving under
    /// `EvaluationMath.stoppedSpeed`): where a policy loses most against the oracle.
    public var energyWhileStopped: Double
    /// Staleness at the true fixes (metres from the true position to the last location the application
    /// had been given), over the fixes at which it had one.
    public var staleness: Staleness
    /// Seconds of the capture during which the application had no location at all (before the first).
    public var secondsWithoutLocation: Double
    public var delivered: Int
    /// Seconds the receiver was down (standby or off).
    public var downSeconds: Double
    /// Wakes from down (power-ups), each paying a time to first fix.
    public var wakes: Int

    public struct Staleness: Sendable, Equatable {
        public var p50: Double
        public var p95: Double
        public var max: Double
        /// True fixes where it was over the bound.
        public var overBound: Int
    }

    /// Whether the run kept staleness within `bound` at every true fix (and had a location from the start).
    public var meetsBoundEverywhere: Bool { staleness.overBound == 0 }
}

/// A profile's run on a capture next to the baselines and the oracle (docs/contract.md §11).
public struct Evaluation: Sendable {
    public var trueFixes: Int
    public var duration: Double
    public var bound: Double
    public var receiver: ReceiverModel
    public var policy: RunFigures
    /// For profiles that batch: distance from each true position to the delivered track.
    public var trackError: TrackError?
    /// Parks found on the true track (`ParkRule`), what they cost and how soon each departure was seen.
    public var parking: ParkingFigures
    public var pauses: [PauseFigures]
    public var failedAcquisitions: Int
    public var alwaysOn: RunFigures
    /// The largest interval (seconds) whose staleness p95 still meets the bound, and its figures; nil when
    /// not even the shortest does.
    public var interval: (seconds: Double, figures: RunFigures)?
    public var stopTimeout: RunFigures
    public var oracle: RunFigures
    /// The policy's energy over the oracle's.
    public var ratioToOracle: Double
    /// The policy's and the oracle's charge split by the class of the true speed, one entry per
    /// `EvaluationMath.speedClassLimits`: where the profile spends more than the oracle.
    public var bySpeed: [SpeedClassFigures]

    // What the report draws.
    public var truth: TrueTrack
    public var timeline: [ReceiverInterval]
    public var deliveries: [(t: Double, location: Location)]
    public var events: [(t: Double, kind: PolicyEventKind, detail: String)]
    public var stalenessPerFix: [Double?]

    /// One class of true speed: from `from` m/s to below `to` (nil: no upper limit).
    public struct SpeedClassFigures: Sendable, Equatable {
        public var from: Double
        public var to: Double?
        /// Seconds of the true track in the class.
        public var seconds: Double
        /// The policy's charge (mAh) drawn there.
        public var energy: Double
        /// The oracle's.
        public var oracleEnergy: Double
    }

    public struct TrackError: Sendable, Equatable {
        public var p50: Double
        public var p95: Double
        public var max: Double
    }

    /// A pause and the resume after it, against the true stop (nil when the pause matches none).
    public struct PauseFigures: Sendable, Equatable {
        public var pausedAt: Double
        public var resumedAt: Double?
        /// Seconds from the true stop's start to the pause.
        public var delayAfterStop: Double?
        /// Seconds from the true departure to the resume.
        public var delayAfterDeparture: Double?
    }

    /// Every run the evaluation compares, in table order.
    public var runs: [RunFigures] {
        [policy, alwaysOn] + (interval.map { [$0.figures] } ?? []) + [stopTimeout, oracle]
    }
}

/// Computes an `Evaluation`: the profile's simulated run (`ReceiverSimulation`), the baselines on the same
/// simulated receiver, and the oracle.
public struct Evaluator: Sendable {
    public let setup: SimulationSetup
    /// Staleness bound in metres (the profile's).
    public let bound: Double
    public let name: String
    /// How the parked figures find parks on the true track.
    public var parkRule = ParkRule()

    /// The transistorsoft baseline's settings (its documented defaults).
    public static let stopTimeoutRadius = 25.0
    public static let stopTimeout = 300.0
    public static let stopTimeoutProbe = 60.0
    /// The intervals tried for the `interval:N` baseline.
    public static let intervals: [Double] = [
        1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 450, 600, 900, 1200, 1800, 3600,
    ]

    public init(setup: SimulationSetup, bound: Double, name: String) {
        self.setup = setup
        self.bound = bound
        self.name = name
    }

    public func evaluate(_ contents: CaptureContents) -> Evaluation {
        let run = EvaluationRun(self, keepsDetail: true)
        CaptureReplayer(contents).run(onEvent: { t, event in run.feed(t: t, event: event) })
        return run.finish()
    }

    public func evaluate(_ truth: TrueTrack) -> Evaluation {
        let run = EvaluationRun(self, keepsDetail: true)
        truth.forEachInput { t, input in run.feed(t: t, input) }
        return run.finish()
    }

    /// Each pause with its resume, matched to the true stop it falls in (stops as long as the activity's
    /// window, within its radius).
    static func pauses(
        events: [(t: Double, kind: PolicyEventKind, detail: String)],
        stops: [(start: Double, end: Double, departure: Double?)]
    ) -> [Evaluation.PauseFigures] {
        var result: [Evaluation.PauseFigures] = []
        for (index, event) in events.enumerated() where event.kind.name == "paused" {
            let resumed = events[(index + 1)...].first { $0.kind == .resumed }?.t
            let stop = stops.first { event.t >= $0.start - 1 && event.t <= ($0.departure ?? .infinity) + 1 }
            result.append(
                Evaluation.PauseFigures(
                    pausedAt: event.t, resumedAt: resumed, delayAfterStop: stop.map { event.t - $0.start },
                    delayAfterDeparture: stop.flatMap { stop in
                        guard let departure = stop.departure, let resumed else { return nil }
                        return resumed - departure
                    }))
        }
        return result
    }

    /// The stops `pauses` matches against, for a setup.
    static func stopRule(_ setup: SimulationSetup) -> (minimum: Double, radius: Double) {
        let activity = setup.updates?.activityType ?? .other
        let rule = setup.policy.stationary[activity]
        return (min(rule.window ?? 120, 120), rule.radius / 2)
    }
}
