/// Core Location's seven desired-accuracy levels (docs/contract.md §3). A case each rather than a number, because the
/// negative values are sentinels, not distances, and `reduced` has no documented value at all.
public enum DesiredAccuracy: String, Sendable, Hashable, CaseIterable {
    case bestForNavigation
    case best
    case nearestTenMeters
    case hundredMeters
    case kilometer
    case threeKilometers
    case reduced

    /// Core Location's constant (`kCLLocationAccuracy…`), nil for `reduced` (undocumented).
    public var coreLocationValue: Double? {
        switch self {
        case .bestForNavigation: -2
        case .best: -1
        case .nearestTenMeters: 10
        case .hundredMeters: 100
        case .kilometer: 1000
        case .threeKilometers: 3000
        case .reduced: nil
        }
    }

    /// The level's own acceptance threshold in metres (docs/contract.md §3), nil for "any".
    public var acceptanceThreshold: Double? {
        switch self {
        case .bestForNavigation, .best: 100
        case .nearestTenMeters: 10
        case .hundredMeters: 100
        case .kilometer: 1000
        case .threeKilometers: 3000
        case .reduced: nil
        }
    }

    /// The GPS-accuracy levels, the only ones deferred updates accept (Core Location's rule).
    public var isBest: Bool { self == .best || self == .bestForNavigation }

    /// Levels whose receiver is powered up for one fix and down again, instead of running.
    public var isDutyCycled: Bool {
        switch self {
        case .hundredMeters, .kilometer, .threeKilometers, .reduced: true
        case .bestForNavigation, .best, .nearestTenMeters: false
        }
    }
}

/// Core Location's `CLActivityType` (docs/contract.md §4).
public enum ActivityType: String, Sendable, Hashable, CaseIterable {
    case other
    case automotiveNavigation
    case fitness
    case otherNavigation
    case airborne
}

/// What the application asks of standard updates: Core Location's per-manager properties.
public struct UpdatesConfiguration: Sendable, Hashable {
    /// Default `.best`, as on iOS.
    public var desiredAccuracy: DesiredAccuracy
    /// Metres; nil is `kCLDistanceFilterNone` (default).
    public var distanceFilter: Double?
    /// Default `.other`.
    public var activityType: ActivityType
    /// Core Location's `pausesLocationUpdatesAutomatically`, default true.
    public var pausesAutomatically: Bool
    /// Default true: probes while paused and resumes by itself. False is Core Location exactly: after a pause
    /// nothing more until updates are started again.
    public var autoResume: Bool
    /// Metres; a fix with a worse `horizontalAccuracy` is not delivered. nil (default) means the desired
    /// accuracy's acceptance threshold (100 m for the best levels, none for `reduced`).
    public var accuracyLimit: Double?

    public init(
        desiredAccuracy: DesiredAccuracy = .best, distanceFilter: Double? = nil, activityType: ActivityType = .other,
        pausesAutomatically: Bool = true, autoResume: Bool = true, accuracyLimit: Double? = nil
    ) {
        self.desiredAccuracy = desiredAccuracy
        self.distanceFilter = distanceFilter
        self.activityType = activityType
        self.pausesAutomatically = pausesAutomatically
        self.autoResume = autoResume
        self.accuracyLimit = accuracyLimit
    }

    /// The limit in force: the explicit one, else the level's threshold.
    public var effectiveAccuracyLimit: Double? { accuracyLimit ?? desiredAccuracy.acceptanceThreshold }

    /// Why deferred updates cannot run with this configuration (Core Location's checks, in its order), nil
    /// when they can. Profile validation uses it to reject "deferral with a distance filter".
    public var deferralRefusal: (error: DeferredError, reason: String)? {
        if !desiredAccuracy.isBest {
            return (
                .accuracyTooLow,
                "desired accuracy is \(desiredAccuracy.rawValue); deferral needs best or bestForNavigation"
            )
        }
        if let distanceFilter {
            return (
                .distanceFiltered, "a distance filter of \(Words.distance(distanceFilter)) is set; deferral needs none"
            )
        }
        if desiredAccuracy == .bestForNavigation, activityType == .automotiveNavigation || activityType == .airborne {
            return (.failed, "bestForNavigation for \(activityType.rawValue) never batches")
        }
        return nil
    }

    /// Every number outside its range (`UpdatesConfiguration.numbers`), each naming its field, empty when valid.
    public func validate() -> [ConfigurationError] { ConfigurationNumber.problems(Self.numbers, in: self) }
}

/// A configuration value that cannot be used, naming the key path and what is allowed.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Dotted key path relative to the validated value, e.g. `stationary.fitness.radius`.
    public var field: String
    public var message: String

    public init(_ field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}

/// When to judge the device stationary and how to look for it leaving (docs/contract.md §4), for one activity type.
public struct StationaryRule: Sendable, Hashable {
    /// Metres from the anchor that every fix of the window must stay within (allowing for each fix's accuracy).
    public var radius: Double
    /// Seconds stationary before pausing; nil never pauses.
    public var window: Double?
    /// m/s: a fix reporting more than this is movement. Above the ~2 m/s a noisy stationary receiver reports,
    /// so noise does not keep restarting the window; a slow crawl is caught by displacement instead.
    public var movingSpeed: Double
    /// Seconds from a pause to the first probe.
    public var probeInterval: Double
    /// Each probe that finds the device still stationary multiplies the interval by this (≥ 1).
    public var probeGrowth: Double
    /// The interval never grows past this, in seconds: it bounds how late a departure is noticed.
    public var maximumProbeInterval: Double

    public init(
        radius: Double, window: Double?, movingSpeed: Double = 2.5, probeInterval: Double = 30,
        probeGrowth: Double = 1.5, maximumProbeInterval: Double = 180
    ) {
        (self.radius, self.window, self.movingSpeed, self.probeInterval, self.probeGrowth, self.maximumProbeInterval)
            = (radius, window, movingSpeed, probeInterval, probeGrowth, maximumProbeInterval)
    }
}

/// The stationary rule of each activity type. Defaults are docs/contract.md §4's table.
public struct StationaryRules: Sendable, Hashable {
    /// 30 m, 3 min; probes from 60 s growing to 5 min.
    public var other = StationaryRule(
        radius: 30, window: 180, probeInterval: 60, probeGrowth: 1.5, maximumProbeInterval: 300)
    /// 50 m, 5 min (longer than traffic lights and queues); probes from 30 s to 3 min, so a departure is
    /// noticed within a few hundred metres.
    public var automotiveNavigation = StationaryRule(
        radius: 50, window: 300, probeInterval: 30, probeGrowth: 1.5, maximumProbeInterval: 180)
    /// 25 m, 2 min; probes from 30 s to 2 min.
    public var fitness = StationaryRule(
        radius: 25, window: 120, probeInterval: 30, probeGrowth: 1.5, maximumProbeInterval: 120)
    /// 50 m, 10 min (boats at anchor drift); probes from 60 s to 10 min.
    public var otherNavigation = StationaryRule(
        radius: 50, window: 600, probeInterval: 60, probeGrowth: 2, maximumProbeInterval: 600)
    /// Never pauses.
    public var airborne = StationaryRule(radius: 100, window: nil)

    public init() {}

    public subscript(activity: ActivityType) -> StationaryRule {
        get {
            switch activity {
            case .other: other
            case .automotiveNavigation: automotiveNavigation
            case .fitness: fitness
            case .otherNavigation: otherNavigation
            case .airborne: airborne
            }
        }
        set {
            switch activity {
            case .other: other = newValue
            case .automotiveNavigation: automotiveNavigation = newValue
            case .fitness: fitness = newValue
            case .otherNavigation: otherNavigation = newValue
            case .airborne: airborne = newValue
            }
        }
    }
}

/// The interval between wakes of one duty-cycled level (docs/contract.md §3), in seconds.
public struct DutyCycleRule: Sendable, Hashable {
    public var minimumInterval: Double
    public var maximumInterval: Double

    public init(minimumInterval: Double, maximumInterval: Double) {
        self.minimumInterval = minimumInterval
        self.maximumInterval = maximumInterval
    }
}

/// Duty-cycle clamps of the coarse levels.
public struct DutyCycleRules: Sendable, Hashable {
    /// 15 s – 2 min: a hot start costs a few seconds, so waking more often than this saves little.
    public var hundredMeters = DutyCycleRule(minimumInterval: 15, maximumInterval: 120)
    /// 1 – 10 min ("minutes apart").
    public var kilometer = DutyCycleRule(minimumInterval: 60, maximumInterval: 600)
    /// 3 – 20 min.
    public var threeKilometers = DutyCycleRule(minimumInterval: 180, maximumInterval: 1200)
    /// 15 – 60 min: at most 4 fixes an hour (Apple's "a few times per hour").
    public var reduced = DutyCycleRule(minimumInterval: 900, maximumInterval: 3600)

    public init() {}

    /// The rule of a duty-cycled level; nil for the continuous ones.
    public subscript(level: DesiredAccuracy) -> DutyCycleRule? {
        switch level {
        case .hundredMeters: hundredMeters
        case .kilometer: kilometer
        case .threeKilometers: threeKilometers
        case .reduced: reduced
        case .bestForNavigation, .best, .nearestTenMeters: nil
        }
    }
}

/// How long a wake may search, and how to back off when it finds nothing (docs/contract.md §3).
public struct AcquisitionRule: Sendable, Hashable {
    /// Seconds a wake waits for an acceptable fix; longer than a warm start (25–45 s) so one can finish.
    public var timeout: Double = 60
    /// Each consecutive failure multiplies the wait before the next wake by this.
    public var backoffFactor: Double = 2
    /// The wait after failures never exceeds this many seconds.
    public var maximumBackoff: Double = 1800
    /// Seconds beyond the receiver model's expected time to first fix (hot or warm, from how long it was down)
    /// that a predictive nap's wake or a pause's probe waits before it counts as failed; never more than
    /// `timeout`, except for the cold start a long failure series waits for (`timeout(covering:)`). nil: `timeout`. A receiver that was hot a minute ago and shows nothing 10 s past its hot start
    /// is under a roof or in a tunnel, and waiting out the full timeout there at acquisition current is the
    /// largest waste in a drive with a long indoor stop (bench/policy.sh on the Reno drive).
    public var wakeMargin: Double?

    public init() {}

    /// Seconds a wake that expects its first fix after `expected` seconds waits for it.
    public func timeout(expecting expected: Double) -> Double {
        guard let wakeMargin else { return timeout }
        return min(timeout, expected + wakeMargin)
    }

    /// Seconds a wake waits when a start of `expected` seconds must be able to finish: as
    /// `timeout(expecting:)`, but never less than `expected` plus the margin (without one, plus half of
    /// `expected`), even past `timeout`: a wait shorter than the start fails at every attempt, for ever.
    public func timeout(covering expected: Double) -> Double {
        max(timeout(expecting: expected), expected + (wakeMargin ?? expected / 2))
    }
}

/// Significant-change monitoring (docs/contract.md §6).
public struct SignificantChangeRule: Sendable, Hashable {
    /// Metres from the last event's position before the next event.
    public var distance: Double = 500
    /// Seconds: at most one event per this interval.
    public var minimumInterval: Double = 300
    /// Seconds between wakes when the speed is unknown or high; also the shortest wake interval.
    public var wakeInterval: Double = 300
    /// Seconds between wakes when the device is not moving: the lowest power.
    public var maximumWakeInterval: Double = 1800
    /// Metres: a coarser fix cannot tell a 500 m move.
    public var accuracyLimit: Double = 200

    public init() {}
}

/// Predictive sleep while tracking (docs/contract.md §11): after each fix, the time the device needs to move `bound`
/// metres from the location the application has, at its recent speed accelerating at `maximumAcceleration`; when
/// that is longer than a wake costs, the receiver goes down and wakes one time to first fix early, so the
/// next fix arrives about when the bound could have been crossed. Off by default: with it
/// on, "continuous" levels are continuous only when the device moves too fast for a nap to pay.
/// What a pause does with a motion sensor (a vibration switch, an accelerometer's interrupt, an ignition line:
/// `motionHint`). Parked means down until a hint, with probes only as a fallback for a sensor gone silent;
/// a hint is not taken as truth: it wakes the receiver for a probe, and only a probe that shows movement
/// resumes (docs/contract.md §4, "Motion hint").
public struct MotionRule: Sendable, Hashable {
    /// A sensor sends `motionHint`s. Without one, a hint (the application's own) resumes a pause at once.
    public var sensor = false
    /// Seconds between probes while paused: the fallback in case the sensor fails. Doubling at each probe that
    /// finds the device still, up to four times this, after the sensor heralded the device's last two starts.
    public var fallbackProbeInterval: Double = 1800
    /// Seconds hints are ignored after a hint's probe found the device still (a truck going by, a door shut):
    /// doubling with each such false alarm in a pause, up to `fallbackProbeInterval`.
    public var falseAlarmQuiet: Double = 60

    public init() {}

    public init(sensor: Bool, fallbackProbeInterval: Double = 1800, falseAlarmQuiet: Double = 60) {
        self.sensor = sensor
        self.fallbackProbeInterval = fallbackProbeInterval
        self.falseAlarmQuiet = falseAlarmQuiet
    }
}

public struct PredictionRule: Sendable, Hashable {
    /// The bound used when `bound` is nil and nothing fills it in (a profile fills in its staleness bound).
    public static let defaultBound = 100.0

    public var enabled = false
    /// Metres the position may have moved from the last delivered location before the next fix; nil: the
    /// profile's `stalenessBound` (`defaultBound` for a policy made without a profile).
    public var bound: Double?
    /// m/s²: the acceleration assumed possible during a nap. A car pulls away at 2–3 m/s² but rarely keeps it
    /// up; the evaluation judges staleness at p95, so a typical rather than a worst-case figure pays.
    public var maximumAcceleration: Double = 1
    /// Seconds: a shorter nap is not taken (each wake is a command to the receiver and a hot start).
    public var minimumSleep: Double = 3
    /// Seconds: the longest nap; bounds how late an unforeseen start is seen.
    public var maximumSleep: Double = 60

    public init() {}

    public init(
        enabled: Bool, bound: Double? = nil, maximumAcceleration: Double = 1, minimumSleep: Double = 3,
        maximumSleep: Double = 60
    ) {
        (self.enabled, self.bound, self.maximumAcceleration, self.minimumSleep, self.maximumSleep)
            = (enabled, bound, maximumAcceleration, minimumSleep, maximumSleep)
    }

    /// The bound in force.
    public var effectiveBound: Double { bound ?? Self.defaultBound }

    /// Seconds until a device at `speed` m/s, accelerating at `maximumAcceleration`, could have moved
    /// `distance` metres: the positive root of v·T + a·T²/2 = distance.
    public func secondsToReach(_ distance: Double, speed: Double) -> Double {
        guard distance > 0 else { return 0 }
        let v = max(speed, 0)
        let a = maximumAcceleration
        guard a > 0 else { return v > 0 ? distance / v : .infinity }
        return ((v * v + 2 * a * distance).squareRoot() - v) / a
    }
}

/// Every tuning knob of the policy, each a stored property with its default; a profile maps onto this 1:1.
/// What the application asks for per session is `UpdatesConfiguration`.
public struct PolicyConfiguration: Sendable, Hashable {
    /// Seconds: a fix older than this relative to the newest fix (extrapolated on the monotonic clock) is
    /// stale (docs/contract.md §2). Looser than Apple's sample (15 s) on purpose: duty cycles are slow.
    public var maximumAge: Double = 30
    /// Seconds: `nearestTenMeters` delivers the best fix of this long when none reached 10 m (docs/contract.md §3).
    public var warmUp: Double = 30
    /// Metres: the worst fix `nearestTenMeters`' warm-up fallback will deliver.
    public var warmUpAccuracyLimit: Double = 100
    public var stationary = StationaryRules()
    public var dutyCycle = DutyCycleRules()
    public var acquisition = AcquisitionRule()
    /// Fixes a deferral holds before it flushes early (docs/contract.md §5); an hour at 1 Hz.
    public var deferredBufferCapacity: Int = 3600
    public var significantChange = SignificantChangeRule()
    /// Seconds: `requestLocation`'s timeout when the caller names none (docs/contract.md §7). The policy itself
    /// takes the timeout from the event; this is the default for the API above it.
    public var requestTimeout: Double = 15
    /// Metres: `reduced` snaps coordinates to a grid this coarse (Apple's "approximate", 1–20 km).
    public var reducedGridSize: Double = 2000
    /// Predictive sleep while tracking; off by default.
    public var prediction = PredictionRule()
    /// A motion sensor's hints while paused; no sensor by default.
    public var motion = MotionRule()

    public init() {}

    /// Every number outside its range (`PolicyConfiguration.numbers`) or below the one it must not be below,
    /// each naming its key path, empty when valid.
    public func validate() -> [ConfigurationError] { ConfigurationNumber.problems(Self.numbers, in: self) }
}
