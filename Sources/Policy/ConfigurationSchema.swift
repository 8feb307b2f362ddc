import JSON

/// What a configuration number measures: the words of "allowed: a number of seconds from 1 to 3600" and the
/// unit column of docs/profiles.md.
public enum ConfigurationUnit: Sendable, Hashable {
    case seconds, metres, speed, acceleration, current, factor

    /// "a number of seconds from 1 to 3600".
    public func describe(_ range: ClosedRange<Double>) -> String {
        "\(noun) from \(JSONWriter.numberText(range.lowerBound)) to \(JSONWriter.numberText(range.upperBound))"
    }

    /// "a number of seconds", "a speed in m/s".
    public var noun: String {
        switch self {
        case .seconds: "a number of seconds"
        case .metres: "a number of metres"
        case .speed: "a speed in m/s"
        case .acceleration: "an acceleration in m/s²"
        case .current: "a current in mA"
        case .factor: "a number"
        }
    }

    /// As a table writes it: "s", "m"; empty for a plain factor.
    public var symbol: String {
        switch self {
        case .seconds: "s"
        case .metres: "m"
        case .speed: "m/s"
        case .acceleration: "m/s²"
        case .current: "mA"
        case .factor: ""
        }
    }

}

extension ClosedRange where Bound == Double {
    /// What is wrong with `value` for a number of this range: "out of range" (said first, as the range is what
    /// the problem then states), "not a whole number" where `whole`; nil if nothing. A profile's numbers and
    /// `lodestar run`'s config's (Sources/Daemon/DaemonConfigurationValues.swift) are checked by it.
    public func problem(with value: Double, whole: Bool) -> String? {
        guard contains(value) else { return "out of range" }
        return whole && value != value.rounded() ? "not a whole number" : nil
    }
}

/// One number of a configuration value as data: where it is, its unit, the values it may take, what it
/// means. `validate()` checks every number against its entry, the profile reader reads each number with
/// it, and docs/profiles.md's table of keys is generated from it, so each range is written once.
public struct ConfigurationNumber<Root> {
    public enum Storage {
        case required(WritableKeyPath<Root, Double>)
        /// nil (`null` in a file) is allowed and means `nullMeans` ("never pause").
        case optional(WritableKeyPath<Root, Double?>, nullMeans: String)
        case whole(WritableKeyPath<Root, Int>)
    }

    /// Dotted key path relative to `Root` (`stationary.fitness.window`).
    public let key: String
    public let storage: Storage
    public let unit: ConfigurationUnit
    public let range: ClosedRange<Double>
    /// A sibling this number may not be below (a maximum and its minimum): its key and value.
    public let atLeast: (key: String, value: KeyPath<Root, Double>)?
    /// One line for the documentation's table.
    public let meaning: String

    public init(
        _ key: String, _ storage: Storage, _ unit: ConfigurationUnit, _ range: ClosedRange<Double>,
        atLeast: (key: String, value: KeyPath<Root, Double>)? = nil, meaning: String
    ) {
        (self.key, self.storage, self.unit, self.range, self.atLeast, self.meaning)
            = (key, storage, unit, range, atLeast, meaning)
    }

    /// What `null` means, nil when null is not allowed.
    public var nullMeans: String? {
        if case .optional(_, let nullMeans) = storage { return nullMeans }
        return nil
    }

    public var isWhole: Bool {
        if case .whole = storage { return true }
        return false
    }

    /// "a number of seconds from 1 to 3600", "null (never pause) or …", "a whole number from 1 to 1000000".
    public var allowed: String {
        switch storage {
        case .required: unit.describe(range)
        case .optional(_, let nullMeans): "null (\(nullMeans)) or \(unit.describe(range))"
        case .whole:
            "a whole number from \(JSONWriter.numberText(range.lowerBound)) to "
                + JSONWriter.numberText(range.upperBound)
        }
    }

    /// The value in `root`; nil for an optional number that is not set.
    public func value(in root: Root) -> Double? {
        switch storage {
        case .required(let path): root[keyPath: path]
        case .optional(let path, _): root[keyPath: path]
        case .whole(let path): Double(root[keyPath: path])
        }
    }

    /// Stores `value` (nil: not set, for an optional number); call it only with a value `problem(with:)` accepts.
    public func set(_ value: Double?, in root: inout Root) {
        switch storage {
        case .required(let path): if let value { root[keyPath: path] = value }
        case .optional(let path, _): root[keyPath: path] = value
        case .whole(let path): if let value, let whole = Int(exactly: value) { root[keyPath: path] = whole }
        }
    }

    /// What is wrong with `number` as this knob's value ("out of range", "not a whole number"), nil if nothing.
    public func problem(with number: Double) -> String? { range.problem(with: number, whole: isWhole) }

    /// The same number seen from a value that holds `Root` at `outer`, its key under `prefix`.
    public func lifted<Outer>(_ outer: WritableKeyPath<Outer, Root>, under prefix: String) -> ConfigurationNumber<Outer>
    {
        let storage: ConfigurationNumber<Outer>.Storage =
            switch self.storage {
            case .required(let path): .required(outer.appending(path: path))
            case .optional(let path, let nullMeans): .optional(outer.appending(path: path), nullMeans: nullMeans)
            case .whole(let path): .whole(outer.appending(path: path))
            }
        return ConfigurationNumber<Outer>(
            "\(prefix).\(key)", storage, unit, range,
            atLeast: atLeast.map { ($0.key, outer.appending(path: $0.value)) },
            meaning: meaning)
    }

    /// Every number of `root` outside its range, and every one below the sibling it must not be below, in
    /// the order of `numbers`.
    public static func problems(_ numbers: [Self], in root: Root) -> [ConfigurationError] {
        var errors: [ConfigurationError] = []
        var failed: Set<String> = []
        for number in numbers {
            guard let value = number.value(in: root) else { continue }
            if number.problem(with: value) != nil {
                errors.append(ConfigurationError(number.key, "must be \(number.allowed)"))
                failed.insert(number.key)
                continue
            }
            guard let (siblingKey, sibling) = number.atLeast else { continue }
            let parent = number.key.split(separator: ".").dropLast().joined(separator: ".")
            let siblingPath = parent.isEmpty ? siblingKey : "\(parent).\(siblingKey)"
            // A sibling out of range is reported already; comparing with it says nothing more.
            if !failed.contains(siblingPath), !(value >= root[keyPath: sibling]) {
                errors.append(ConfigurationError(number.key, "must be \(number.unit.noun) ≥ \(siblingKey)"))
            }
        }
        return errors
    }
}

extension UpdatesConfiguration {
    /// The numbers of standard updates, in the order a profile file writes them.
    public static var numbers: [ConfigurationNumber<Self>] {
        [
            ConfigurationNumber(
                "distanceFilter", .optional(\.distanceFilter, nullMeans: "none"), .metres, 1...100_000,
                meaning: "deliver a fix only this far from the last delivered one"),
            ConfigurationNumber(
                "accuracyLimit", .optional(\.accuracyLimit, nullMeans: "the desired accuracy's threshold"), .metres,
                1...100_000, meaning: "worst `horizontalAccuracy` delivered"),
        ]
    }
}

extension PolicyConfiguration {
    /// Every number of the policy, in the order a profile file writes them.
    public static var numbers: [ConfigurationNumber<Self>] {
        let seconds = 1.0...86_400.0
        var numbers: [ConfigurationNumber<Self>] = [
            ConfigurationNumber(
                "maximumAge", .required(\.maximumAge), .seconds, 1...3600,
                meaning: "a fix older than this relative to the newest is stale"),
            ConfigurationNumber(
                "warmUp", .required(\.warmUp), .seconds, 1...600,
                meaning: "`nearestTenMeters` delivers the best fix of this long when none reached 10 m"),
            ConfigurationNumber(
                "warmUpAccuracyLimit", .required(\.warmUpAccuracyLimit), .metres, 1...10_000,
                meaning: "the worst fix that warm-up fallback delivers"),
        ]
        for activity in ActivityType.allCases {
            let rule: WritableKeyPath<Self, StationaryRule> = \.stationary[activity]
            let prefix = "stationary.\(activity.rawValue)"
            let numbersOfRule: [ConfigurationNumber<StationaryRule>] = [
                ConfigurationNumber(
                    "radius", .required(\.radius), .metres, 1...10_000,
                    meaning: "every fix of the window stays within this of the anchor"),
                // 10 s at least: a shorter window cannot tell a stop from a slow fix rate.
                ConfigurationNumber(
                    "window", .optional(\.window, nullMeans: "never pause"), .seconds, 10...86_400,
                    meaning: "stationary this long before pausing"),
                ConfigurationNumber(
                    "movingSpeed", .required(\.movingSpeed), .speed, 0.1...100,
                    meaning: "a fix reporting more is movement (keep it above ~2 m/s of stationary noise)"),
                ConfigurationNumber(
                    "probeInterval", .required(\.probeInterval), .seconds, seconds,
                    meaning: "from a pause to the first probe"),
                ConfigurationNumber(
                    "probeGrowth", .required(\.probeGrowth), .factor, 1...10,
                    meaning: "each still probe multiplies the interval by this"),
                ConfigurationNumber(
                    "maximumProbeInterval", .required(\.maximumProbeInterval), .seconds, seconds,
                    atLeast: ("probeInterval", \.probeInterval), meaning: "bounds how late a departure is noticed"),
            ]
            numbers += numbersOfRule.map { $0.lifted(rule, under: prefix) }
        }
        let cycled: [(DesiredAccuracy, WritableKeyPath<Self, DutyCycleRule>)] = [
            (.hundredMeters, \.dutyCycle.hundredMeters), (.kilometer, \.dutyCycle.kilometer),
            (.threeKilometers, \.dutyCycle.threeKilometers), (.reduced, \.dutyCycle.reduced),
        ]
        for (level, rule) in cycled {
            let numbersOfRule: [ConfigurationNumber<DutyCycleRule>] = [
                ConfigurationNumber(
                    "minimumInterval", .required(\.minimumInterval), .seconds, seconds,
                    meaning: "the shortest interval between wakes"),
                ConfigurationNumber(
                    "maximumInterval", .required(\.maximumInterval), .seconds, seconds,
                    atLeast: ("minimumInterval", \.minimumInterval), meaning: "the longest interval between wakes"),
            ]
            numbers += numbersOfRule.map { $0.lifted(rule, under: "dutyCycle.\(level.rawValue)") }
        }
        numbers += [
            ConfigurationNumber(
                "acquisition.timeout", .required(\.acquisition.timeout), .seconds, 5...3600,
                meaning: "how long a wake searches for an acceptable fix"),
            ConfigurationNumber(
                "acquisition.backoffFactor", .required(\.acquisition.backoffFactor), .factor, 1...10,
                meaning: "each consecutive failure multiplies the wait by this"),
            ConfigurationNumber(
                "acquisition.maximumBackoff", .required(\.acquisition.maximumBackoff), .seconds, seconds,
                meaning: "the wait after failures never exceeds this"),
            ConfigurationNumber(
                "acquisition.wakeMargin", .optional(\.acquisition.wakeMargin, nullMeans: "the whole timeout"),
                .seconds, 1...3600,
                meaning: "a predictive nap's wake or a pause's probe fails when no acceptable fix comes this long "
                    + "after the receiver model's expected time to first fix (never later than `timeout`, "
                    + "except for the cold start a long failure series waits for; [policy.md](policy.md#wakes-that-find-no-fix))"),
            ConfigurationNumber(
                "deferredBufferCapacity", .whole(\.deferredBufferCapacity), .factor, 1...1_000_000,
                meaning: "fixes a deferral holds before flushing early"),
            ConfigurationNumber(
                "significantChange.distance", .required(\.significantChange.distance), .metres, 10...100_000,
                meaning: "distance from the last event's position for the next event"),
            ConfigurationNumber(
                "significantChange.minimumInterval", .required(\.significantChange.minimumInterval), .seconds,
                0...86_400, meaning: "at most one event per this interval"),
            ConfigurationNumber(
                "significantChange.wakeInterval", .required(\.significantChange.wakeInterval), .seconds, seconds,
                meaning: "shortest wake interval"),
            ConfigurationNumber(
                "significantChange.maximumWakeInterval", .required(\.significantChange.maximumWakeInterval),
                .seconds, seconds, atLeast: ("wakeInterval", \.significantChange.wakeInterval),
                meaning: "wake interval while not moving"),
            ConfigurationNumber(
                "significantChange.accuracyLimit", .required(\.significantChange.accuracyLimit), .metres,
                1...10_000, meaning: "coarser fixes cannot tell a 500 m move"),
            ConfigurationNumber(
                "requestTimeout", .required(\.requestTimeout), .seconds, 1...3600,
                meaning: "`requestLocation`'s default timeout"),
            ConfigurationNumber(
                "reducedGridSize", .required(\.reducedGridSize), .metres, 100...100_000,
                meaning: "`reduced` snaps coordinates to this grid"),
            ConfigurationNumber(
                "prediction.bound", .optional(\.prediction.bound, nullMeans: "the profile's stalenessBound"),
                .metres, 1...100_000,
                meaning: "how far the device may have moved from the last delivered location before the next fix"),
            ConfigurationNumber(
                "prediction.maximumAcceleration", .required(\.prediction.maximumAcceleration), .acceleration,
                0.01...50,
                meaning: "the acceleration assumed possible during a nap (lower: longer naps, more overshoot)"),
            ConfigurationNumber(
                "prediction.minimumSleep", .required(\.prediction.minimumSleep), .seconds, 1...3600,
                meaning: "shorter naps are not taken"),
            ConfigurationNumber(
                "prediction.maximumSleep", .required(\.prediction.maximumSleep), .seconds, 1...3600,
                atLeast: ("minimumSleep", \.prediction.minimumSleep),
                meaning: "the longest nap: how late an unforeseen start is seen"),
            ConfigurationNumber(
                "motion.fallbackProbeInterval", .required(\.motion.fallbackProbeInterval), .seconds, 60...86_400,
                meaning: "with a motion sensor, seconds between probes while paused: the fallback for a silent sensor"
                    + " (doubling at each still probe, up to 4×, after the sensor fired for the last two starts;"
                    + " without those, a pause's first 10 min probe as without a sensor)"),
            ConfigurationNumber(
                "motion.falseAlarmQuiet", .required(\.motion.falseAlarmQuiet), .seconds, 1...86_400,
                meaning: "hints ignored this long after a hint's probe found the device still (doubling, up to the "
                    + "fallback interval)"),
        ]
        return numbers
    }
}

extension ReceiverModel {
    /// The receiver's figures, in the order a profile file writes them.
    public static var numbers: [ConfigurationNumber<Self>] {
        let currents: [(String, WritableKeyPath<Self, Double>, String)] = [
            ("acquisition", \.current.acquisition, "searching for satellites, from a power-up to the first fix"),
            ("tracking", \.current.tracking, "navigating continuously with a fix"),
            ("powerSave", \.current.powerSave, "in the receiver's own cycling (`powerSave`)"),
            ("standby", \.current.standby, "not navigating, ephemeris and time kept (`standby`)"),
            (
                "backup", \.current.backup,
                "backup domain only (RTC and battery-backed RAM): the power-control backup state"
            ),
            ("off", \.current.off, "powered off (`off`)"),
        ]
        return currents.map { key, path, meaning in
            // Tracking is what always-on draws, the divisor of every saving: 0 made "0.0 % of always-on" and
            // 1e-300 a ratio no Int holds. 0.1 mA is below any receiver that navigates.
            ConfigurationNumber(
                "current.\(key)", .required(path), .current, key == "tracking" ? 0.1...1000 : 0...1000, meaning: meaning)
        } + [
            ConfigurationNumber(
                "timeToFirstFix.hot", .required(\.timeToFirstFix.hot), .seconds, 0...900,
                meaning: "time to first fix with ephemeris, time and position kept"),
            ConfigurationNumber(
                "timeToFirstFix.warm", .required(\.timeToFirstFix.warm), .seconds, 0...900,
                meaning: "time to first fix with almanac and time kept, ephemeris expired"),
            ConfigurationNumber(
                "timeToFirstFix.cold", .required(\.timeToFirstFix.cold), .seconds, 0...1800,
                meaning: "time to first fix with nothing kept: after off without a backup supply"),
            ConfigurationNumber(
                "timeToFirstFix.hotWindow", .required(\.timeToFirstFix.hotWindow), .seconds, 0...604_800,
                meaning: "how long it stays hot while down"),
        ]
    }
}
