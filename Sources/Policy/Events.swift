import GPSModel

/// A point on the runtime's monotonic clock, in seconds from an origin the runtime chooses.
///
/// The policy never reads a clock: every event arrives stamped with one of these, so live (a real monotonic
/// clock) and replay (a virtual one) run the same code and a replay is deterministic.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.seconds < rhs.seconds }
    public static func + (lhs: Instant, rhs: Double) -> Instant { Instant(seconds: lhs.seconds + rhs) }
    /// Seconds from `rhs` to `lhs`.
    public static func - (lhs: Instant, rhs: Instant) -> Double { lhs.seconds - rhs.seconds }

    public var description: String { "t=\(seconds)" }
}

extension Instant: ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral {
    public init(floatLiteral value: Double) { self.init(seconds: value) }
    public init(integerLiteral value: Int) { self.init(seconds: Double(value)) }
}

/// Names a single-shot request so its answer can be matched to it; chosen by the caller.
public struct RequestID: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public var rawValue: UInt64

    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt64) { self.rawValue = value }
    public static func < (lhs: RequestID, rhs: RequestID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
}

/// The timers the policy asks the runtime for. At most one timer per identifier exists: scheduling an
/// identifier again replaces its deadline. A firing the policy no longer expects (cancelled, replaced, early)
/// is ignored, so a runtime that races a cancel against a firing does no harm.
public enum TimerID: Hashable, Sendable, CustomStringConvertible {
    /// Duty-cycled updates: time to power up for the next fix.
    case dutyCycleWake
    /// Duty-cycled updates: the wake found no acceptable fix in time.
    case acquisitionTimeout
    /// Paused updates: time to wake for a probe fix.
    case probe
    /// Paused updates: the probe found no acceptable fix in time.
    case probeTimeout
    /// Deferred updates: the deferral's timeout.
    case deferredTimeout
    /// Significant-change monitoring: time to wake for a fix.
    case significantChangeWake
    /// Significant-change monitoring: the wake found no acceptable fix in time.
    case significantChangeTimeout
    /// A single-shot request's timeout.
    case request(RequestID)
    /// Predictive sleep: time to power up so the next fix comes before the bound can be crossed.
    case predictionWake

    public var description: String {
        switch self {
        case .dutyCycleWake: "dutyCycleWake"
        case .acquisitionTimeout: "acquisitionTimeout"
        case .probe: "probe"
        case .probeTimeout: "probeTimeout"
        case .deferredTimeout: "deferredTimeout"
        case .significantChangeWake: "significantChangeWake"
        case .significantChangeTimeout: "significantChangeTimeout"
        case .request(let id): "request(\(id))"
        case .predictionWake: "predictionWake"
        }
    }
}

/// What the policy asks of the receiver. Ordered by power: `off < standby < powerSave < continuous`, so the
/// shared receiver runs at the maximum of what its users need (docs/contract.md §8).
public enum ReceiverRegime: String, Sendable, Hashable, Comparable, CaseIterable {
    /// Powered down as far as the runtime can take it (device closed, USB port or enable line off).
    case off
    /// Not navigating, but keeping time and ephemeris so the next start is hot (UBX backup/GNSS stop,
    /// PMTK161, SiRF hibernate).
    case standby
    /// The receiver's own cycling (u-blox PSM, PMTK225 periodic, SiRF TricklePower): fixes keep coming at a
    /// lower current and somewhat lower accuracy.
    case powerSave
    /// Full power, a fix every epoch.
    case continuous

    private var rank: Int {
        switch self {
        case .off: 0
        case .standby: 1
        case .powerSave: 2
        case .continuous: 3
        }
    }

    public static func < (lhs: ReceiverRegime, rhs: ReceiverRegime) -> Bool { lhs.rank < rhs.rank }

    /// Whether fixes come out of the receiver in this regime.
    public var producesFixes: Bool { self == .continuous || self == .powerSave }
}

/// Core Location's deferred-update errors (CLError 11–15), docs/contract.md §5.
public enum DeferredError: String, Sendable, Hashable {
    /// `deferredFailed`: the deferral cannot be honoured at all (bestForNavigation while driving or flying).
    case failed
    /// `deferredNotUpdatingLocation`: updates are not running (or were stopped).
    case notUpdatingLocation
    /// `deferredAccuracyTooLow`: desired accuracy is not best or bestForNavigation.
    case accuracyTooLow
    /// `deferredDistanceFiltered`: a distance filter is set.
    case distanceFiltered
    /// `deferredCanceled`: replaced by a new request, disallowed, or shut down.
    case canceled
}

/// Why a single-shot request failed.
public enum RequestError: String, Sendable, Hashable {
    /// Core Location's `locationUnknown`: no usable fix arrived before the timeout.
    case locationUnknown
    /// The request was cancelled or the policy was shut down before it could be answered.
    case canceled
}

/// The events the policy reports (docs/contract.md §10). Each is emitted with a detail sentence a person can act on.
public enum PolicyEventKind: Sendable, Equatable {
    /// Updates paused because the device is stationary; carries the anchor the device is stationary at.
    case paused(at: Location)
    /// Updates resumed after a pause.
    case resumed
    /// A deferral ended; exactly one per `allowDeferredUpdates`. `nil` is success.
    case deferredFinished(DeferredError?)
    /// Significant-change monitoring: the device moved far enough (or this is the first event).
    case significantChange(Location)
    case requestCompleted(RequestID, Location)
    case requestFailed(RequestID, RequestError)
    /// A wake found no acceptable fix within the acquisition timeout.
    case acquisitionFailed
    case receiverLost
    case receiverBack
    /// A duty-cycle wake, or a wake from a predictive nap, got its fix but the distance filter held it back:
    /// the receiver was powered up and nothing was delivered.
    case wakeDeliveredNothing
    /// Fixes that agreed with each other moved the receiver's time by `offset` seconds (+ ahead), away from
    /// what its earlier fixes and the monotonic clock predicted: taken as its new time (docs/contract.md §2).
    case receiverTimeChanged(offset: Double)

    /// The name used in JSON output (`"kind"`).
    public var name: String {
        switch self {
        case .paused: "paused"
        case .resumed: "resumed"
        case .deferredFinished: "deferredFinished"
        case .significantChange: "significantChange"
        case .requestCompleted: "requestCompleted"
        case .requestFailed: "requestFailed"
        case .acquisitionFailed: "acquisitionFailed"
        case .receiverLost: "receiverLost"
        case .receiverBack: "receiverBack"
        case .wakeDeliveredNothing: "wakeDeliveredNothing"
        case .receiverTimeChanged: "receiverTimeChanged"
        }
    }
}

/// Why a fix was not used (docs/contract.md §2), reported so a replay can show what the filter did.
public enum DiscardReason: Sendable, Hashable {
    /// Mode below 2D.
    case noFix
    /// Latitude or longitude not finite or out of range.
    case invalidCoordinate
    /// Older than `maximumAge` relative to the newest fix; `age` in seconds.
    case stale(age: Double)
    /// Same timestamp as a fix already used (gpsd sends several reports per epoch).
    case duplicate
    /// `horizontalAccuracy` worse than the limit in force.
    case inaccurate(accuracy: Double, limit: Double)
    /// Closer than `distanceFilter` to the last delivered location.
    case distanceFiltered(distance: Double, filter: Double)
    /// More than `maximumAge` ahead of the time the receiver's recent fixes and the monotonic clock predict
    /// (`offset` seconds), and not yet confirmed by fixes that agree with it: a bad date is not the newest.
    case suspectTime(offset: Double)
    /// Older than a fix already used (`behind` seconds): deliveries stay in time order.
    case outOfOrder(behind: Double)
}

/// Inputs to the policy, each handed over with the instant it happened.
public enum PolicyEvent: Sendable, Equatable {
    /// A fix from the receiver (through gpsd), unfiltered.
    case fix(Location)
    /// A timer the policy scheduled has fired.
    case timerFired(TimerID)
    /// Start (or reconfigure) standard updates, Core Location's `startUpdatingLocation`.
    case startUpdates(UpdatesConfiguration)
    case stopUpdates
    /// `requestLocation(timeout:)`; `desiredAccuracy` nil means that of running updates, else `.best`.
    case requestLocation(RequestID, timeout: Double, desiredAccuracy: DesiredAccuracy?)
    /// The caller gave up on a request (task cancelled); answered with `requestFailed(.canceled)`.
    case cancelRequest(RequestID)
    /// nil means unlimited (Core Location's `CLLocationDistanceMax` / `CLTimeIntervalMax`).
    case allowDeferredUpdates(untilTraveled: Double?, timeout: Double?)
    case disallowDeferredUpdates
    case startSignificantChange
    case stopSignificantChange
    /// An external sensor (accelerometer, ignition line) says the device is moving.
    case motionHint
    /// An ignition line's level (`MotionRule.sensor` with a line that says it): the engine on is a hint, and a
    /// pause probes as without a sensor while it runs; off, the vehicle is parked and a pause leaves its
    /// departure to the line.
    case ignition(on: Bool)
    /// Deliver whatever deferred updates hold, now.
    case flush
    /// gpsd is gone or the device was unplugged; the detail says which.
    case receiverLost(String)
    case receiverBack
    /// Receiver power control says which regimes it can reach now (the receiver identified, its connection
    /// known, or a regime found to have no effect): the policy uses only these from now on (with `continuous`
    /// always), falling back as `ReceiverModel.effectiveRegime` says.
    case regimesOffered(Set<ReceiverRegime>)
    /// The last known location from before a restart (a service's persisted state), as Core Location keeps
    /// its cached location across relaunches. Taken only while no fix has been seen: it becomes
    /// `lastKnownLocation` and significant-change monitoring's anchor, and is never delivered.
    case restoreLastKnownLocation(Location)
    /// The runtime is exiting: deliver everything held, finish everything pending.
    case shutdown
}

/// Outputs of the policy, to be executed by the runtime in order.
public enum PolicyAction: Sendable, Equatable {
    /// Put the receiver in `regime`; `reason` is a sentence for logs and captures.
    case setRegime(ReceiverRegime, reason: String)
    /// Hand locations to the application: one for standard updates, several for a deferred batch.
    case deliver([Location])
    /// Report an event with a detail sentence.
    case emit(PolicyEventKind, detail: String)
    /// Fire `timerFired(id)` at `at` (replacing any earlier deadline for `id`).
    case schedule(TimerID, at: Instant)
    case cancel(TimerID)
    /// A fix was not used, and why (diagnostic; a runtime may ignore it).
    case discard(Location, DiscardReason)
}
