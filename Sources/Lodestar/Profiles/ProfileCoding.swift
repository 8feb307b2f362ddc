import JSON
import Policy

// A profile to and from JSON, both walking `ProfileSchema.tree`: the key order of `jsonValue` is the order
// of its keys (and of docs/profiles.md's table and the files in profiles/); the reader accepts any order,
// fills a missing key with its default, and reports every problem it finds rather than stopping at the first.

extension Profile {
    /// The complete profile as an editable JSON document: every knob, defaults written out, stable key order.
    /// `lodestar profiles show` prints it; `Profile.parse` reads it back to an equal profile.
    public var jsonText: String { JSONWriter.text(jsonValue) }

    var jsonValue: JSONValue {
        ProfileSchema.tree.jsonValue(of: self, optionalObjects: ProfileSchema.nullableObjects) { $0.jsonValue(in: $1) }
    }
}

extension Profile {
    /// Reads and validates a profile. `file` names it in every problem (a path, or `built-in NAME`);
    /// `defaultName` is used when the document has no `name` (the file's name without `.json`).
    public static func parse(_ bytes: [UInt8], file: String, defaultName: String) throws(ProfileError) -> Profile {
        try parse(bytes, file: file, base: Profile(name: defaultName))
    }

    public static func parse(_ text: String, file: String, defaultName: String) throws(ProfileError) -> Profile {
        try parse(Array(text.utf8), file: file, defaultName: defaultName)
    }

    /// Reads a profile on top of `base` instead of the defaults: a missing key keeps the base's value (how a
    /// built-in is stacked on what it shares with others).
    package static func parse(_ text: String, file: String, base: Profile) throws(ProfileError) -> Profile {
        try parse(Array(text.utf8), file: file, base: base)
    }

    private static func parse(_ bytes: [UInt8], file: String, base: Profile) throws(ProfileError) -> Profile {
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
        let profile = reader.profile(base: base)
        guard reader.problems.isEmpty else { throw .invalid(file: file, problems: reader.problems) }
        return profile
    }
}

/// Walks the JSON tree with the profile's schema: each key is read into a profile that already holds the
/// default (or the base's value), so a missing or bad key leaves that value and the walk goes on to find the rest.
private struct ProfileReader: ConfigurationTreeReader {
    let document: JSONValue
    var problems: [ProfileProblem] = []

    init(document: JSONValue) { self.document = document }

    private static func join(_ parent: String, _ key: String) -> String { ProfileSchema.Node.join(parent, key) }

    private mutating func report(_ path: String, _ problem: String, allowed: String? = nil) {
        problems.append(ProfileProblem(keyPath: path, problem: problem, allowed: allowed))
    }

    /// The members of the object at `path`, with unknown keys reported; nil (reported) if it is not an object.
    mutating func members(_ value: JSONValue, at path: String, keys: [String]) -> [String: JSONValue]? {
        guard case .object(let members) = value else {
            report(
                path.isEmpty ? "" : path,
                path.isEmpty
                    ? "the document is \(value.typeName), not an object" : "is \(value.typeName), not an object",
                allowed: "an object with keys: \(keys.joined(separator: ", "))")
            return nil
        }
        let checked = ConfigurationMembers(members, allowed: keys)
        for (key, suggestion) in checked.unknown {
            report(Self.join(path, key), ConfigurationMembers.unknownKey(suggestion), allowed: keys.joined(separator: ", "))
        }
        return checked.known
    }

    mutating func profile(base: Profile) -> Profile {
        var profile = base
        read(ProfileSchema.tree, document, at: "", optionalObjects: ProfileSchema.nullableObjects, into: &profile)
        checkCombinations(profile)
        return profile
    }

    /// Every key of a profile has a default.
    func missing(_ key: ProfileKey, at path: String) {}

    /// `deferred` is null or an object, nothing else.
    mutating func optional(
        _ object: ConfigurationOptionalObject<Profile>, _ value: JSONValue, keys: [String], into profile: inout Profile
    ) {
        report(
            object.path, "is \(value.typeName), not an object",
            allowed: "null (\(object.offMeans)), or an object with keys: " + keys.joined(separator: ", "))
    }

    /// Reads one key; a value of the wrong type or out of range is reported and leaves the default.
    mutating func read(_ key: ProfileKey, _ value: JSONValue, into profile: inout Profile) {
        let path = key.path
        switch key.kind {
        case .number(let number):
            switch value {
            case .null where number.nullMeans != nil:
                number.set(nil, in: &profile)
            case .number(let given):
                if let problem = number.problem(with: given) {
                    report(path, "is \(JSONWriter.numberText(given)), \(problem)", allowed: key.allowed)
                } else {
                    number.set(given, in: &profile)
                }
            default:
                let expected = number.nullMeans == nil ? "a number" : "a number or null"
                report(path, "is \(value.typeName), not \(expected)", allowed: key.allowed)
            }
        case .flag(let flagPath):
            guard case .bool(let flag) = value else {
                report(path, "is \(value.typeName), not true or false", allowed: key.allowed)
                return
            }
            profile[keyPath: flagPath] = flag
        case .choice(let choice):
            guard case .string(let text) = value else {
                report(path, "is \(value.typeName), not a string", allowed: key.allowed)
                return
            }
            if !choice.set(&profile, text) { report(path, "'\(text)' is not a known value", allowed: key.allowed) }
        case .text(let textPath, let check):
            guard case .string(let text) = value else {
                report(path, "is \(value.typeName), not a string", allowed: key.allowed)
                return
            }
            profile[keyPath: textPath] = text
            if let (problem, allowed) = check(text) { report(path, problem, allowed: allowed) }
        case .model:
            guard case .string(let text) = value else {
                report(path, "is \(value.typeName), not a string", allowed: key.allowed)
                return
            }
            guard let model = ReceiverModel.named(text) else {
                report(path, "'\(text)' is not a known receiver model", allowed: key.allowed)
                return
            }
            profile.receiver = model
        case .regimes:
            guard case .array(let elements) = value else {
                report(path, "is \(value.typeName), not a list", allowed: key.allowed)
                return
            }
            var regimes: Set<ReceiverRegime> = []
            var valid = true
            for (position, element) in elements.enumerated() {
                guard case .string(let text) = element, let regime = ReceiverRegime(rawValue: text) else {
                    let what =
                        if case .string(let text) = element { "'\(text)' is not a regime" } else {
                            "is \(element.typeName), not a regime name"
                        }
                    report("\(path)[\(position)]", what, allowed: key.allowed)
                    valid = false
                    continue
                }
                regimes.insert(regime)
            }
            guard valid else { return }
            if regimes.isSuperset(of: [.continuous, .off]) {
                profile.receiver.supportedRegimes = regimes
            } else {
                report(path, "lacks continuous or off", allowed: key.allowed)
            }
        }
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
            let reachable = ReceiverRegime.allCases.reversed().filter(profile.receiver.reachableRegimes.contains)
            let receiver = profile.receiver
            report(
                "exitRegime",
                "is \(profile.exitRegime.rawValue), which receiver \(receiver.name) cannot reach by"
                    + " \(receiver.powerControl.rawValue) on \(receiver.connection.rawValue)",
                allowed: "one of: " + reachable.map(\.rawValue).joined(separator: ", "))
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
