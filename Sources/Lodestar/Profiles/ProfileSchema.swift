import JSON
import Policy

/// One key of a profile file: its dotted key path, what it holds, what it means. `ProfileSchema.keys` lists
/// them all in the order of the file; the writer, the reader and docs/profiles.md's table of keys all walk
/// that list, and the ranges of its numbers are the policy's and the receiver model's own
/// (`ConfigurationNumber`), which their `validate()` checks too.
struct ProfileKey {
    enum Kind {
        case number(ConfigurationNumber<Profile>)
        case flag(WritableKeyPath<Profile, Bool>)
        /// One of an enumeration's raw values.
        case choice(ConfigurationChoice<Profile>)
        /// A string; `check` says what is wrong with one that is a string but not allowed, and what is.
        case text(WritableKeyPath<Profile, String>, check: (String) -> (problem: String, allowed: String)?)
        /// `receiver.model`: a built-in model's name; reading it replaces the whole receiver, so it comes first.
        case model
        /// `receiver.supportedRegimes`.
        case regimes
    }

    var path: String
    var kind: Kind
    /// What the key does, one line.
    var meaning: String
    /// What `allowed:` says of a value of the wrong type.
    var allowed: String
    /// The default as the documentation says it, when it is not the value a default profile holds.
    var defaultText: String?

    init(_ path: String, _ kind: Kind, meaning: String, allowed: String? = nil, defaultText: String? = nil) {
        self.path = path
        self.kind = kind
        self.meaning = meaning
        self.defaultText = defaultText
        self.allowed =
            allowed
            ?? {
                switch kind {
                case .number(let number): number.allowed
                case .flag: "true, false"
                case .choice(let choice): "one of: " + choice.names.joined(separator: ", ")
                case .text: "a string"
                case .model: "one of: " + ReceiverModel.builtIn.map(\.name).joined(separator: ", ")
                case .regimes:
                    "a list of: " + ReceiverRegime.allCases.reversed().map(\.rawValue).joined(separator: ", ")
                        + " (continuous and off always included)"
                }
            }()
    }

    /// The key's value in `profile`, as the file writes it.
    func jsonValue(in profile: Profile) -> JSONValue {
        switch kind {
        case .number(let number): number.value(in: profile).map { .number($0) } ?? .null
        case .flag(let path): .bool(profile[keyPath: path])
        case .choice(let choice): .string(choice.get(profile))
        case .text(let path, _): .string(profile[keyPath: path])
        case .model: .string(profile.receiver.name)
        case .regimes:
            .array(
                ReceiverRegime.allCases.reversed().filter(profile.receiver.supportedRegimes.contains).map {
                    .string($0.rawValue)
                })
        }
    }
}

package enum ProfileSchema {
    static let nameRule = "a name of letters, digits, '-', '_' and '.', not starting with '.' (at most 64)"

    /// Every key of a profile file, in the file's order.
    nonisolated(unsafe) static let keys: [ProfileKey] = makeKeys()

    private static func makeKeys() -> [ProfileKey] {
        let updates = UpdatesConfiguration.numbers.map { $0.lifted(\Profile.updates, under: "updates") }
        let policy = PolicyConfiguration.numbers.map { $0.lifted(\Profile.policy, under: "policy") }
        let receiver = ReceiverModel.numbers.map { $0.lifted(\Profile.receiver, under: "receiver") }
        func number(_ numbers: [ConfigurationNumber<Profile>], _ path: String) -> [ProfileKey] {
            numbers.filter { $0.key == path }.map { ProfileKey($0.key, .number($0), meaning: $0.meaning) }
        }
        func numbers(_ numbers: [ConfigurationNumber<Profile>], under prefix: String) -> [ProfileKey] {
            numbers.filter { $0.key.hasPrefix(prefix + ".") }.map {
                ProfileKey($0.key, .number($0), meaning: $0.meaning)
            }
        }
        let top: [ProfileKey] = [
            ProfileKey(
                "name",
                .text(
                    \.name,
                    check: { ProfileStore.isValidName($0) ? nil : ("'\($0)' cannot name a profile", nameRule) }),
                meaning: "what `--profile` calls it", allowed: nameRule,
                defaultText: "the file's name without `.json`"),
            ProfileKey(
                "description",
                .text(
                    \.description,
                    check: {
                        // One line of a listing: a megabyte of it would be carried into every `profiles list`.
                        $0.utf8.count > 1024
                            ? ("is longer than 1024 bytes", "one line of at most 1024 bytes")
                            : $0.contains(where: \.isNewline) ? ("has a line break", "one line") : nil
                    }),
                meaning: "shown by `profiles list`", allowed: "a string (one line, at most 1024 bytes)"),
            ProfileKey(
                "updates.enabled", .flag(\.updatesEnabled),
                meaning: "whether standard updates run at all (`false`: significant change only)"),
            ProfileKey(
                "updates.desiredAccuracy", .choice(.init(\.updates.desiredAccuracy)),
                meaning: "acceptance threshold and receiver regime ([policy.md](policy.md))"),
        ]
        let afterDesiredAccuracy: [ProfileKey] =
            number(updates, "updates.distanceFilter") + [
                ProfileKey(
                    "updates.activityType", .choice(.init(\.updates.activityType)),
                    meaning: "selects the `policy.stationary` rule"),
                ProfileKey(
                    "updates.pausesAutomatically", .flag(\.updates.pausesAutomatically),
                    meaning: "pause (receiver down) when stationary"),
                ProfileKey(
                    "updates.autoResume", .flag(\.updates.autoResume),
                    meaning: "probe while paused and resume by itself; `false` is Core Location exactly"),
            ] + number(updates, "updates.accuracyLimit")
        let deferred = [
            ConfigurationNumber<Profile.DeferredUpdates>(
                "untilTraveled", .optional(\.untilTraveled, nullMeans: "unlimited"), .metres, 1...10_000_000,
                meaning: "deliver the batch after this distance"),
            ConfigurationNumber<Profile.DeferredUpdates>(
                "timeout", .optional(\.timeout, nullMeans: "unlimited"), .seconds, 1...86_400,
                meaning: "deliver the batch after this time"),
        ].map { $0.lifted(\Profile.deferredOrEmpty, under: "deferred") }
        let profileNumbers = [
            ConfigurationNumber<Profile>(
                "stalenessBound", .required(\.stalenessBound), .metres, 1...100_000,
                meaning: "the staleness this profile accepts: the distance from the true position to the last "
                    + "delivered location, measured by the evaluation at p95")
        ]
        let middle: [ProfileKey] =
            numbers(deferred, under: "deferred") + [
                ProfileKey("significantChange", .flag(\.significantChange), meaning: "significant-change monitoring")
            ] + number(profileNumbers, "stalenessBound") + [
                ProfileKey(
                    "exitRegime", .choice(.init(\.exitRegime)),
                    meaning: "the regime the receiver is left in when a location manager made with the profile finishes "
                        + "(must be one the receiver supports)")
            ]
        let policyKeys: [ProfileKey] =
            policy.filter { !$0.key.hasPrefix("policy.prediction.") && !$0.key.hasPrefix("policy.motion.") }.map {
                ProfileKey($0.key, .number($0), meaning: $0.meaning)
            } + [
                ProfileKey(
                    "policy.prediction.enabled", .flag(\.policy.prediction.enabled),
                    meaning: "nap between fixes while tracking "
                        + "([policy.md](policy.md#predictive-naps-prediction-off-by-default))")
            ] + numbers(policy, under: "policy.prediction") + [
                ProfileKey(
                    "policy.motion.sensor", .flag(\.policy.motion.sensor),
                    meaning: "a motion sensor sends hints: paused means down until one, a hint wakes a probe "
                        + "([policy.md](policy.md#motion-hints))")
            ] + numbers(policy, under: "policy.motion")
        let receiverKeys: [ProfileKey] =
            [
                ProfileKey(
                    "receiver.model", .model,
                    meaning: "the base model; every other `receiver` key overrides one of its figures"),
                ProfileKey(
                    "receiver.powerControl", .choice(.init(\.receiver.powerControl)),
                    meaning: "how the receiver is powered down and up ([power-control.md](power-control.md))"),
                ProfileKey(
                    "receiver.connection", .choice(.init(\.receiver.connection)),
                    meaning: "how it is wired: its own `usb`, its `uart`, or `unknown` (live: read from the device name)"),
                ProfileKey(
                    "receiver.supportedRegimes", .regimes,
                    meaning: "regimes it can be put in; the policy uses those its power control reaches on its connection"
                        + " (a missing `powerSave` falls back to `continuous`, `standby` and `off` to each other)"),
            ] + receiver.map { ProfileKey($0.key, .number($0), meaning: $0.meaning) } + [
                ProfileKey(
                    "receiver.backupSupplyWhenOff", .flag(\.receiver.backupSupplyWhenOff),
                    meaning: "a backup cell keeps it hot through `off`")
            ]
        return top + afterDesiredAccuracy + middle + policyKeys + receiverKeys
    }

    /// The objects of a profile file that may be `null` instead.
    static var nullableObjects: [ConfigurationOptionalObject<Profile>] {
        [
            ConfigurationOptionalObject(
                "deferred", offMeans: "no deferral", meaning: "deferred updates (batching) allowed while updating",
                isOn: { $0.deferred != nil }, setOff: { $0.deferred = nil },
                // Present with every member null, before its members are read.
                setOn: { $0.deferred = Profile.DeferredUpdates(untilTraveled: nil, timeout: nil) })
        ]
    }

    /// The keys as a tree of objects: members in the order of `keys`.
    typealias Node = ConfigurationTree<ProfileKey>

    // Built once: the tables hold only pure closures and key paths, never changed after this, and building
    // them for each file read cost more instructions at start-up than an hour of fixes.
    nonisolated(unsafe) static let tree = Node(keys, path: \.path)
}

extension Profile {
    /// `deferred`, or one with every member null: what the schema's `deferred.*` numbers read and write.
    fileprivate var deferredOrEmpty: DeferredUpdates {
        get { deferred ?? DeferredUpdates(untilTraveled: nil, timeout: nil) }
        set { deferred = newValue }
    }
}

// MARK: The documentation's table

extension ProfileSchema {
    /// The lines docs/profiles.md holds between `markdownBegin` and `markdownEnd`; `lodestar profiles schema`
    /// prints them and a test keeps the document equal to them.
    package static var markdownTable: String {
        let defaults = Profile(name: "")
        var lines = [
            "| key | type | unit | allowed | default | null means | meaning |",
            "|---|---|---|---|---|---|---|",
        ]
        var nullables = nullableObjects
        var rows: [(template: String, instances: [(instance: String, key: ProfileKey)])] = []
        for key in keys {
            let (template, instance) = Self.template(key.path)
            if let index = rows.firstIndex(where: { $0.template == template }) {
                rows[index].instances.append((instance, key))
            } else {
                rows.append((template, [(instance, key)]))
            }
        }
        for (template, instances) in rows {
            guard let key = instances.first?.key else { continue }
            if let index = nullables.firstIndex(where: { template.hasPrefix($0.path + ".") }) {
                let object = nullables.remove(at: index)
                lines.append(
                    row(
                        "`\(object.path)`", "object or null", "", "`null` or an object", "`null`", object.offMeans,
                        object.meaning))
            }
            let values = instances.map { instance in
                (instance.instance, key.defaultText ?? text(instance.key.jsonValue(in: defaults)))
            }
            let value =
                Set(values.map(\.1)).count == 1
                ? values[0].1 : values.map { "`\($0.0)` \($0.1)" }.joined(separator: ", ")
            lines.append(
                row(
                    "`\(template)`", type(key.kind), unit(key.kind), allowed(key), value, nullMeans(key.kind),
                    key.meaning))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    package static let markdownBegin = "<!-- generated: lodestar profiles schema -->"
    package static let markdownEnd = "<!-- end generated -->"

    /// `policy.stationary.fitness.radius` → (`policy.stationary.<activity>.radius`, `fitness`): one row for the
    /// rules of every activity type, and of every duty-cycled level.
    private static func template(_ path: String) -> (String, String) {
        var components = path.split(separator: ".").map(String.init)
        guard components.count == 4, components[0] == "policy" else { return (path, "") }
        let placeholder: String
        switch components[1] {
        case "stationary": placeholder = "<activity>"
        case "dutyCycle": placeholder = "<level>"
        default: return (path, "")
        }
        let instance = components[2]
        components[2] = placeholder
        return (components.joined(separator: "."), instance)
    }

    private static func row(_ cells: String...) -> String { ConfigurationMarkdown.row(cells) }

    private static func text(_ value: JSONValue) -> String { ConfigurationMarkdown.value(value) }

    private static func type(_ kind: ProfileKey.Kind) -> String {
        switch kind {
        case .number(let number):
            number.isWhole ? "whole number" : number.nullMeans == nil ? "number" : "number or null"
        case .flag: "boolean"
        case .choice, .text, .model: "string"
        case .regimes: "list of strings"
        }
    }

    private static func unit(_ kind: ProfileKey.Kind) -> String {
        guard case .number(let number) = kind, !number.isWhole else { return "" }
        return number.unit.symbol
    }

    private static func nullMeans(_ kind: ProfileKey.Kind) -> String {
        guard case .number(let number) = kind else { return "" }
        return number.nullMeans ?? ""
    }

    private static func allowed(_ key: ProfileKey) -> String {
        let quoted = ConfigurationMarkdown.quoted
        switch key.kind {
        case .number(let number):
            let range =
                JSONWriter.numberText(number.range.lowerBound) + "–"
                + JSONWriter.numberText(number.range.upperBound)
            return range + (number.atLeast.map { ", ≥ `\($0.key)`" } ?? "")
        case .flag: return "`true`, `false`"
        case .choice(let choice): return quoted(choice.names)
        case .text: return key.allowed
        case .model: return quoted(ReceiverModel.builtIn.map(\.name))
        case .regimes:
            return quoted(ReceiverRegime.allCases.reversed().map(\.rawValue)) + "; must hold `continuous` and `off`"
        }
    }
}
