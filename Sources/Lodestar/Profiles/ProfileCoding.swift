import JSON
import Policy

// A profile to and from JSON. The key order of `jsonValue` is the order of docs/profiles.md and of the
// files in profiles/; the reader accepts any order, fills a missing key with its default, and reports every
// problem it finds rather than stopping at the first.

extension Profile {
    /// The complete profile as an editable JSON document: every knob, defaults written out, stable key order.
    /// `lodestar profiles show` prints it; `Profile.parse` reads it back to an equal profile.
    public var jsonText: String { JSONWriter.text(jsonValue) }

    var jsonValue: JSONValue {
        .object([
            ("name", .string(name)),
            ("description", .string(description)),
            (
                "updates",
                .object([
                    ("enabled", .bool(updatesEnabled)),
                    ("desiredAccuracy", .string(updates.desiredAccuracy.rawValue)),
                    ("distanceFilter", Self.optional(updates.distanceFilter)),
                    ("activityType", .string(updates.activityType.rawValue)),
                    ("pausesAutomatically", .bool(updates.pausesAutomatically)),
                    ("autoResume", .bool(updates.autoResume)),
                    ("accuracyLimit", Self.optional(updates.accuracyLimit)),
                ])
            ),
            (
                "deferred",
                deferred.map {
                    .object([
                        ("untilTraveled", Self.optional($0.untilTraveled)), ("timeout", Self.optional($0.timeout)),
                    ])
                } ?? .null
            ),
            ("significantChange", .bool(significantChange)),
            ("stalenessBound", .number(stalenessBound)),
            ("exitRegime", .string(exitRegime.rawValue)),
            ("policy", Self.policyValue(policy)),
            ("receiver", Self.receiverValue(receiver)),
        ])
    }

    private static func optional(_ number: Double?) -> JSONValue { number.map { .number($0) } ?? .null }

    private static func policyValue(_ policy: PolicyConfiguration) -> JSONValue {
        .object([
            ("maximumAge", .number(policy.maximumAge)),
            ("warmUp", .number(policy.warmUp)),
            ("warmUpAccuracyLimit", .number(policy.warmUpAccuracyLimit)),
            (
                "stationary",
                .object(
                    ActivityType.allCases.map { activity in
                        let rule = policy.stationary[activity]
                        return (
                            activity.rawValue,
                            .object([
                                ("radius", .number(rule.radius)),
                                ("window", optional(rule.window)),
                                ("movingSpeed", .number(rule.movingSpeed)),
                                ("probeInterval", .number(rule.probeInterval)),
                                ("probeGrowth", .number(rule.probeGrowth)),
                                ("maximumProbeInterval", .number(rule.maximumProbeInterval)),
                            ])
                        )
                    })
            ),
            (
                "dutyCycle",
                .object(
                    DesiredAccuracy.allCases.compactMap { level in
                        policy.dutyCycle[level].map { rule in
                            (
                                level.rawValue,
                                .object([
                                    ("minimumInterval", .number(rule.minimumInterval)),
                                    ("maximumInterval", .number(rule.maximumInterval)),
                                ])
                            )
                        }
                    })
            ),
            (
                "acquisition",
                .object([
                    ("timeout", .number(policy.acquisition.timeout)),
                    ("backoffFactor", .number(policy.acquisition.backoffFactor)),
                    ("maximumBackoff", .number(policy.acquisition.maximumBackoff)),
                    ("wakeMargin", optional(policy.acquisition.wakeMargin)),
                ])
            ),
            ("deferredBufferCapacity", .number(Double(policy.deferredBufferCapacity))),
            (
                "significantChange",
                .object([
                    ("distance", .number(policy.significantChange.distance)),
                    ("minimumInterval", .number(policy.significantChange.minimumInterval)),
                    ("wakeInterval", .number(policy.significantChange.wakeInterval)),
                    ("maximumWakeInterval", .number(policy.significantChange.maximumWakeInterval)),
                    ("accuracyLimit", .number(policy.significantChange.accuracyLimit)),
                ])
            ),
            ("requestTimeout", .number(policy.requestTimeout)),
            ("reducedGridSize", .number(policy.reducedGridSize)),
            (
                "prediction",
                .object([
                    ("enabled", .bool(policy.prediction.enabled)),
                    ("bound", optional(policy.prediction.bound)),
                    ("maximumAcceleration", .number(policy.prediction.maximumAcceleration)),
                    ("minimumSleep", .number(policy.prediction.minimumSleep)),
                    ("maximumSleep", .number(policy.prediction.maximumSleep)),
                ])
            ),
        ])
    }

    private static func receiverValue(_ receiver: ReceiverModel) -> JSONValue {
        .object([
            ("model", .string(receiver.name)),
            ("powerControl", .string(receiver.powerControl.rawValue)),
            (
                "supportedRegimes",
                .array(
                    ReceiverRegime.allCases.reversed().filter(receiver.supportedRegimes.contains).map {
                        .string($0.rawValue)
                    })
            ),
            (
                "current",
                .object([
                    ("acquisition", .number(receiver.current.acquisition)),
                    ("tracking", .number(receiver.current.tracking)),
                    ("powerSave", .number(receiver.current.powerSave)),
                    ("standby", .number(receiver.current.standby)),
                    ("backup", .number(receiver.current.backup)),
                    ("off", .number(receiver.current.off)),
                ])
            ),
            (
                "timeToFirstFix",
                .object([
                    ("hot", .number(receiver.timeToFirstFix.hot)),
                    ("warm", .number(receiver.timeToFirstFix.warm)),
                    ("cold", .number(receiver.timeToFirstFix.cold)),
                    ("hotWindow", .number(receiver.timeToFirstFix.hotWindow)),
                ])
            ),
            ("backupSupplyWhenOff", .bool(receiver.backupSupplyWhenOff)),
        ])
    }
}

extension Profile {
    /// Reads and validates a profile. `file` names it in every problem (a path, or `built-in NAME`);
    /// `defaultName` is used when the document has no `name` (the file's name without `.json`).
    public static func parse(_ bytes: [UInt8], file: String, defaultName: String) throws(ProfileError) -> Profile {
        let document: JSONValue
        do throws(JSONSyntaxError) {
            document = try JSONParser.parse(bytes)
        } catch {
            throw .invalid(
                file: file,
                problems: [
                    ProfileProblem(
                        keyPath: "",
                        problem: "line \(error.line), column \(error.column): not valid JSON: \(error.message)")
                ])
        }
        var reader = ProfileReader(document: document)
        let profile = reader.profile(defaultName: defaultName)
        guard reader.problems.isEmpty else { throw .invalid(file: file, problems: reader.problems) }
        return profile
    }

    public static func parse(_ text: String, file: String, defaultName: String) throws(ProfileError) -> Profile {
        try parse(Array(text.utf8), file: file, defaultName: defaultName)
    }
}

/// What a numeric knob measures, for "allowed: a number of seconds from 1 to 3600".
private enum Unit {
    case seconds, metres, speed, acceleration, current, factor

    func describe(_ range: ClosedRange<Double>) -> String {
        let bounds = "from \(JSONWriter.numberText(range.lowerBound)) to \(JSONWriter.numberText(range.upperBound))"
        switch self {
        case .seconds: return "a number of seconds \(bounds)"
        case .metres: return "a number of metres \(bounds)"
        case .speed: return "a speed in m/s \(bounds)"
        case .acceleration: return "an acceleration in m/s² \(bounds)"
        case .current: return "a current in mA \(bounds)"
        case .factor: return "a number \(bounds)"
        }
    }
}

/// Walks the JSON tree with the profile's schema: each accessor reads one key into a value that already
/// holds the default, so a missing or bad key leaves the default and the walk goes on to find the rest.
private struct ProfileReader {
    let document: JSONValue
    var problems: [ProfileProblem] = []

    init(document: JSONValue) { self.document = document }

    private static func join(_ parent: String, _ key: String) -> String { parent.isEmpty ? key : "\(parent).\(key)" }

    private mutating func report(_ path: String, _ problem: String, allowed: String? = nil) {
        problems.append(ProfileProblem(keyPath: path, problem: problem, allowed: allowed))
    }

    /// The members of the object at `path`, with unknown keys reported; nil (reported) if it is not an object.
    private mutating func object(_ value: JSONValue, at path: String, keys: [String]) -> [String: JSONValue]? {
        guard case .object(let members) = value else {
            report(
                path.isEmpty ? "" : path,
                path.isEmpty
                    ? "the document is \(value.typeName), not an object" : "is \(value.typeName), not an object",
                allowed: "an object with keys: \(keys.joined(separator: ", "))")
            return nil
        }
        var result: [String: JSONValue] = [:]
        for (key, member) in members {
            guard keys.contains(key) else {
                let suggestion = Self.closest(to: key, in: keys).map { "unknown key (did you mean '\($0)'?)" }
                report(Self.join(path, key), suggestion ?? "unknown key", allowed: keys.joined(separator: ", "))
                continue
            }
            result[key] = member
        }
        return result
    }

    /// A known key within two edits of a mistyped one ("maximumage", "windw").
    private static func closest(to key: String, in keys: [String]) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var previous = Array(0...b.count)
            for (i, x) in a.enumerated() {
                var current = [i + 1]
                for (j, y) in b.enumerated() {
                    current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
                }
                previous = current
            }
            return previous[b.count]
        }
        let lowered = Array(key.lowercased())
        let scored = keys.map { ($0, distance(lowered, Array($0.lowercased()))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
        return best.0
    }

    private mutating func number(
        _ members: [String: JSONValue], _ key: String, in parent: String, _ unit: Unit, _ range: ClosedRange<Double>,
        into target: inout Double
    ) {
        guard let value = members[key] else { return }
        let path = Self.join(parent, key)
        guard case .number(let number) = value else {
            report(path, "is \(value.typeName), not a number", allowed: unit.describe(range))
            return
        }
        guard range.contains(number) else {
            report(path, "is \(JSONWriter.numberText(number)), out of range", allowed: unit.describe(range))
            return
        }
        target = number
    }

    /// A number or null; `nullMeans` says what null does ("none", "never").
    private mutating func optionalNumber(
        _ members: [String: JSONValue], _ key: String, in parent: String, _ unit: Unit, _ range: ClosedRange<Double>,
        nullMeans: String, into target: inout Double?
    ) {
        guard let value = members[key] else { return }
        let path = Self.join(parent, key)
        let allowed = "null (\(nullMeans)) or \(unit.describe(range))"
        switch value {
        case .null: target = nil
        case .number(let number):
            guard range.contains(number) else {
                report(path, "is \(JSONWriter.numberText(number)), out of range", allowed: allowed)
                return
            }
            target = number
        default: report(path, "is \(value.typeName), not a number or null", allowed: allowed)
        }
    }

    private mutating func whole(
        _ members: [String: JSONValue], _ key: String, in parent: String, _ range: ClosedRange<Int>,
        into target: inout Int
    ) {
        guard let value = members[key] else { return }
        let path = Self.join(parent, key)
        let allowed = "a whole number from \(range.lowerBound) to \(range.upperBound)"
        guard case .number(let number) = value else {
            report(path, "is \(value.typeName), not a number", allowed: allowed)
            return
        }
        guard number == number.rounded() else {
            report(path, "is \(JSONWriter.numberText(number)), not a whole number", allowed: allowed)
            return
        }
        guard Double(range.lowerBound) <= number, number <= Double(range.upperBound) else {
            report(path, "is \(JSONWriter.numberText(number)), out of range", allowed: allowed)
            return
        }
        target = Int(number)
    }

    private mutating func bool(
        _ members: [String: JSONValue], _ key: String, in parent: String, into target: inout Bool
    ) {
        guard let value = members[key] else { return }
        guard case .bool(let flag) = value else {
            report(Self.join(parent, key), "is \(value.typeName), not true or false", allowed: "true, false")
            return
        }
        target = flag
    }

    private mutating func choice<Choice: RawRepresentable & CaseIterable>(
        _ members: [String: JSONValue], _ key: String, in parent: String, into target: inout Choice
    ) where Choice.RawValue == String {
        guard let value = members[key] else { return }
        let path = Self.join(parent, key)
        let allowed = "one of: " + Choice.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .string(let text) = value else {
            report(path, "is \(value.typeName), not a string", allowed: allowed)
            return
        }
        guard let chosen = Choice(rawValue: text) else {
            report(path, "'\(text)' is not a known value", allowed: allowed)
            return
        }
        target = chosen
    }

    private mutating func string(
        _ members: [String: JSONValue], _ key: String, in parent: String, allowed: String, into target: inout String
    ) {
        guard let value = members[key] else { return }
        guard case .string(let text) = value else {
            report(Self.join(parent, key), "is \(value.typeName), not a string", allowed: allowed)
            return
        }
        target = text
    }

    // MARK: The schema

    private static let seconds = 1.0...86_400.0
    private static let metres = 1.0...100_000.0

    mutating func profile(defaultName: String) -> Profile {
        var profile = Profile(name: defaultName)
        let topKeys = [
            "name", "description", "updates", "deferred", "significantChange", "stalenessBound", "exitRegime",
            "policy", "receiver",
        ]
        guard let top = object(document, at: "", keys: topKeys) else { return profile }
        let nameRule = "a name of letters, digits, '-', '_' and '.', not starting with '.' (at most 64)"
        string(top, "name", in: "", allowed: nameRule, into: &profile.name)
        // Checked only when written: a file's own name (the default) is whatever the file is called.
        if case .string = top["name"], !ProfileStore.isValidName(profile.name) {
            report("name", "'\(profile.name)' cannot name a profile", allowed: nameRule)
        }
        string(top, "description", in: "", allowed: "a string (one line)", into: &profile.description)
        if profile.description.contains(where: \.isNewline) {
            report("description", "has a line break", allowed: "one line")
        }
        if let value = top["updates"], let members = object(value, at: "updates", keys: Self.updatesKeys) {
            bool(members, "enabled", in: "updates", into: &profile.updatesEnabled)
            readUpdates(members, into: &profile.updates)
        }
        if let value = top["deferred"] {
            if case .null = value {
                profile.deferred = nil
            } else if let members = object(value, at: "deferred", keys: ["untilTraveled", "timeout"]) {
                var deferred = Profile.DeferredUpdates(untilTraveled: nil, timeout: nil)
                optionalNumber(
                    members, "untilTraveled", in: "deferred", .metres, 1...10_000_000, nullMeans: "unlimited",
                    into: &deferred.untilTraveled)
                optionalNumber(
                    members, "timeout", in: "deferred", .seconds, Self.seconds, nullMeans: "unlimited",
                    into: &deferred.timeout)
                profile.deferred = deferred
            } else {
                problems[problems.count - 1].allowed =
                    "null (no deferral), or an object with keys: untilTraveled, timeout"
            }
        }
        bool(top, "significantChange", in: "", into: &profile.significantChange)
        number(top, "stalenessBound", in: "", .metres, Self.metres, into: &profile.stalenessBound)
        choice(top, "exitRegime", in: "", into: &profile.exitRegime)
        if let value = top["policy"] { readPolicy(value, into: &profile.policy) }
        if let value = top["receiver"] { readReceiver(value, into: &profile.receiver) }
        checkCombinations(profile)
        return profile
    }

    private static let updatesKeys = [
        "enabled", "desiredAccuracy", "distanceFilter", "activityType", "pausesAutomatically", "autoResume",
        "accuracyLimit",
    ]

    private mutating func readUpdates(_ members: [String: JSONValue], into updates: inout UpdatesConfiguration) {
        choice(members, "desiredAccuracy", in: "updates", into: &updates.desiredAccuracy)
        optionalNumber(
            members, "distanceFilter", in: "updates", .metres, Self.metres, nullMeans: "none",
            into: &updates.distanceFilter)
        choice(members, "activityType", in: "updates", into: &updates.activityType)
        bool(members, "pausesAutomatically", in: "updates", into: &updates.pausesAutomatically)
        bool(members, "autoResume", in: "updates", into: &updates.autoResume)
        optionalNumber(
            members, "accuracyLimit", in: "updates", .metres, Self.metres,
            nullMeans: "the desired accuracy's threshold", into: &updates.accuracyLimit)
    }

    private mutating func readPolicy(_ value: JSONValue, into policy: inout PolicyConfiguration) {
        let keys = [
            "maximumAge", "warmUp", "warmUpAccuracyLimit", "stationary", "dutyCycle", "acquisition",
            "deferredBufferCapacity", "significantChange", "requestTimeout", "reducedGridSize", "prediction",
        ]
        guard let members = object(value, at: "policy", keys: keys) else { return }
        number(members, "maximumAge", in: "policy", .seconds, 1...3600, into: &policy.maximumAge)
        number(members, "warmUp", in: "policy", .seconds, 1...600, into: &policy.warmUp)
        number(members, "warmUpAccuracyLimit", in: "policy", .metres, 1...10_000, into: &policy.warmUpAccuracyLimit)
        if let value = members["stationary"],
            let rules = object(value, at: "policy.stationary", keys: ActivityType.allCases.map(\.rawValue))
        {
            for activity in ActivityType.allCases {
                guard let value = rules[activity.rawValue] else { continue }
                let path = "policy.stationary.\(activity.rawValue)"
                let ruleKeys = [
                    "radius", "window", "movingSpeed", "probeInterval", "probeGrowth", "maximumProbeInterval",
                ]
                guard let members = object(value, at: path, keys: ruleKeys) else { continue }
                var rule = policy.stationary[activity]
                number(members, "radius", in: path, .metres, 1...10_000, into: &rule.radius)
                // 10 s at least: a shorter window cannot tell a stop from a slow fix rate.
                optionalNumber(
                    members, "window", in: path, .seconds, 10...86_400, nullMeans: "never pause", into: &rule.window)
                number(members, "movingSpeed", in: path, .speed, 0.1...100, into: &rule.movingSpeed)
                number(members, "probeInterval", in: path, .seconds, Self.seconds, into: &rule.probeInterval)
                number(members, "probeGrowth", in: path, .factor, 1...10, into: &rule.probeGrowth)
                number(
                    members, "maximumProbeInterval", in: path, .seconds, Self.seconds, into: &rule.maximumProbeInterval)
                policy.stationary[activity] = rule
            }
        }
        let cycled = DesiredAccuracy.allCases.filter(\.isDutyCycled)
        if let value = members["dutyCycle"],
            let levels = object(value, at: "policy.dutyCycle", keys: cycled.map(\.rawValue))
        {
            for level in cycled {
                guard let value = levels[level.rawValue], var rule = policy.dutyCycle[level] else { continue }
                let path = "policy.dutyCycle.\(level.rawValue)"
                guard let members = object(value, at: path, keys: ["minimumInterval", "maximumInterval"]) else {
                    continue
                }
                number(members, "minimumInterval", in: path, .seconds, Self.seconds, into: &rule.minimumInterval)
                number(members, "maximumInterval", in: path, .seconds, Self.seconds, into: &rule.maximumInterval)
                switch level {
                case .hundredMeters: policy.dutyCycle.hundredMeters = rule
                case .kilometer: policy.dutyCycle.kilometer = rule
                case .threeKilometers: policy.dutyCycle.threeKilometers = rule
                case .reduced: policy.dutyCycle.reduced = rule
                case .bestForNavigation, .best, .nearestTenMeters: break
                }
            }
        }
        let acquisitionKeys = ["timeout", "backoffFactor", "maximumBackoff", "wakeMargin"]
        if let value = members["acquisition"], let members = object(value, at: "policy.acquisition", keys: acquisitionKeys) {
            let path = "policy.acquisition"
            number(members, "timeout", in: path, .seconds, 5...3600, into: &policy.acquisition.timeout)
            number(members, "backoffFactor", in: path, .factor, 1...10, into: &policy.acquisition.backoffFactor)
            number(
                members, "maximumBackoff", in: path, .seconds, Self.seconds, into: &policy.acquisition.maximumBackoff)
            optionalNumber(
                members, "wakeMargin", in: path, .seconds, 1...3600, nullMeans: "the whole timeout",
                into: &policy.acquisition.wakeMargin)
        }
        whole(members, "deferredBufferCapacity", in: "policy", 1...1_000_000, into: &policy.deferredBufferCapacity)
        let changeKeys = ["distance", "minimumInterval", "wakeInterval", "maximumWakeInterval", "accuracyLimit"]
        if let value = members["significantChange"],
            let members = object(value, at: "policy.significantChange", keys: changeKeys)
        {
            let path = "policy.significantChange"
            number(members, "distance", in: path, .metres, 10...100_000, into: &policy.significantChange.distance)
            number(
                members, "minimumInterval", in: path, .seconds, 0...86_400,
                into: &policy.significantChange.minimumInterval)
            number(
                members, "wakeInterval", in: path, .seconds, Self.seconds, into: &policy.significantChange.wakeInterval)
            number(
                members, "maximumWakeInterval", in: path, .seconds, Self.seconds,
                into: &policy.significantChange.maximumWakeInterval)
            number(
                members, "accuracyLimit", in: path, .metres, 1...10_000, into: &policy.significantChange.accuracyLimit)
        }
        number(members, "requestTimeout", in: "policy", .seconds, 1...3600, into: &policy.requestTimeout)
        number(members, "reducedGridSize", in: "policy", .metres, 100...100_000, into: &policy.reducedGridSize)
        let predictionKeys = ["enabled", "bound", "maximumAcceleration", "minimumSleep", "maximumSleep"]
        if let value = members["prediction"],
            let members = object(value, at: "policy.prediction", keys: predictionKeys)
        {
            let path = "policy.prediction"
            bool(members, "enabled", in: path, into: &policy.prediction.enabled)
            optionalNumber(
                members, "bound", in: path, .metres, Self.metres, nullMeans: "the profile's stalenessBound",
                into: &policy.prediction.bound)
            number(
                members, "maximumAcceleration", in: path, .acceleration, 0.01...50,
                into: &policy.prediction.maximumAcceleration)
            number(members, "minimumSleep", in: path, .seconds, 1...3600, into: &policy.prediction.minimumSleep)
            number(members, "maximumSleep", in: path, .seconds, 1...3600, into: &policy.prediction.maximumSleep)
        }
    }

    private mutating func readReceiver(_ value: JSONValue, into receiver: inout ReceiverModel) {
        let keys = ["model", "powerControl", "supportedRegimes", "current", "timeToFirstFix", "backupSupplyWhenOff"]
        guard let members = object(value, at: "receiver", keys: keys) else { return }
        // The model first: every other key overrides one of its fields.
        let models = ReceiverModel.builtIn.map(\.name)
        var modelName = receiver.name
        string(members, "model", in: "receiver", allowed: "one of: " + models.joined(separator: ", "), into: &modelName)
        if let model = ReceiverModel.named(modelName) {
            receiver = model
        } else {
            report(
                "receiver.model", "'\(modelName)' is not a known receiver model",
                allowed: "one of: " + models.joined(separator: ", "))
        }
        choice(members, "powerControl", in: "receiver", into: &receiver.powerControl)
        if let value = members["supportedRegimes"] {
            let allowed =
                "a list of: " + ReceiverRegime.allCases.reversed().map(\.rawValue).joined(separator: ", ")
                + " (continuous and off always included)"
            if case .array(let elements) = value {
                var regimes: Set<ReceiverRegime> = []
                var valid = true
                for (position, element) in elements.enumerated() {
                    guard case .string(let text) = element, let regime = ReceiverRegime(rawValue: text) else {
                        let what =
                            if case .string(let text) = element { "'\(text)' is not a regime" } else {
                                "is \(element.typeName), not a regime name"
                            }
                        report("receiver.supportedRegimes[\(position)]", what, allowed: allowed)
                        valid = false
                        continue
                    }
                    regimes.insert(regime)
                }
                if valid {
                    if regimes.isSuperset(of: [.continuous, .off]) {
                        receiver.supportedRegimes = regimes
                    } else {
                        report("receiver.supportedRegimes", "lacks continuous or off", allowed: allowed)
                    }
                }
            } else {
                report("receiver.supportedRegimes", "is \(value.typeName), not a list", allowed: allowed)
            }
        }
        let currentKeys = ["acquisition", "tracking", "powerSave", "standby", "backup", "off"]
        if let value = members["current"], let currents = object(value, at: "receiver.current", keys: currentKeys) {
            let path = "receiver.current"
            let range = 0.0...1000.0
            number(currents, "acquisition", in: path, .current, range, into: &receiver.current.acquisition)
            number(currents, "tracking", in: path, .current, range, into: &receiver.current.tracking)
            number(currents, "powerSave", in: path, .current, range, into: &receiver.current.powerSave)
            number(currents, "standby", in: path, .current, range, into: &receiver.current.standby)
            number(currents, "backup", in: path, .current, range, into: &receiver.current.backup)
            number(currents, "off", in: path, .current, range, into: &receiver.current.off)
        }
        if let value = members["timeToFirstFix"],
            let times = object(value, at: "receiver.timeToFirstFix", keys: ["hot", "warm", "cold", "hotWindow"])
        {
            let path = "receiver.timeToFirstFix"
            number(times, "hot", in: path, .seconds, 0...900, into: &receiver.timeToFirstFix.hot)
            number(times, "warm", in: path, .seconds, 0...900, into: &receiver.timeToFirstFix.warm)
            number(times, "cold", in: path, .seconds, 0...1800, into: &receiver.timeToFirstFix.cold)
            number(times, "hotWindow", in: path, .seconds, 0...604_800, into: &receiver.timeToFirstFix.hotWindow)
        }
        bool(members, "backupSupplyWhenOff", in: "receiver", into: &receiver.backupSupplyWhenOff)
    }

    /// Values that are each in range but cannot work together; then the policy's and the receiver's own
    /// checks (a maximum below its minimum), each under its key path unless that key was reported already.
    private mutating func checkCombinations(_ profile: Profile) {
        let updates = profile.updates
        if profile.deferred != nil {
            let allowedDeferral = "null (no deferral) with these updates"
            if !profile.updatesEnabled {
                report(
                    "deferred", "deferral needs standard updates, but updates.enabled is false",
                    allowed: allowedDeferral)
            }
            if !updates.desiredAccuracy.isBest {
                report(
                    "deferred",
                    "deferral is impossible with updates.desiredAccuracy \(updates.desiredAccuracy.rawValue) "
                        + "(Core Location's accuracyTooLow)",
                    allowed: "\(allowedDeferral), or updates.desiredAccuracy best or bestForNavigation")
            }
            if let filter = updates.distanceFilter {
                report(
                    "deferred",
                    "deferral is impossible with updates.distanceFilter \(JSONWriter.numberText(filter)) "
                        + "(Core Location's distanceFiltered)",
                    allowed: "\(allowedDeferral), or updates.distanceFilter null")
            }
            if updates.desiredAccuracy == .bestForNavigation,
                updates.activityType == .automotiveNavigation || updates.activityType == .airborne
            {
                report(
                    "deferred",
                    "deferral is impossible with bestForNavigation for \(updates.activityType.rawValue): "
                        + "it never batches",
                    allowed: "\(allowedDeferral), or updates.desiredAccuracy best")
            }
        }
        if !profile.updatesEnabled && !profile.significantChange {
            report(
                "updates.enabled", "is false and significantChange is false: the profile would never run the receiver",
                allowed: "true, or significantChange true")
        }
        if profile.receiver.effectiveRegime(profile.exitRegime) != profile.exitRegime {
            let supported = ReceiverRegime.allCases.reversed().filter(profile.receiver.supportedRegimes.contains)
            report(
                "exitRegime",
                "is \(profile.exitRegime.rawValue), which receiver \(profile.receiver.name) does not support",
                allowed: "one of: " + supported.map(\.rawValue).joined(separator: ", "))
        }
        let reported = Set(problems.map(\.keyPath))
        let nested =
            profile.policy.validate().map { ("policy.\($0.field)", $0.message) }
            + profile.receiver.validate().map { ("receiver.\($0.field)", $0.message) }
        for (path, message) in nested where !reported.contains(path) {
            let value = document.value(at: path).map { value -> String in
                if case .number(let number) = value { return "is \(JSONWriter.numberText(number))" }
                return "is \(value.typeName)"
            }
            let allowed = message.hasPrefix("must be ") ? String(message.dropFirst("must be ".count)) : message
            report(path, "\(value ?? "is the default"), which does not fit the other values", allowed: allowed)
        }
    }
}
