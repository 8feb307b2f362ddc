import GPSModel
import JSON
import Lodestar
import Policy
import SystemInterface

#if canImport(Glibc)
    import Glibc
#endif

// The config file of `lodestar run` (docs/config.md) to and from JSON. The reader walks the document once with
// the schema below, starting from the defaults: a missing key keeps its default, and a bad one is reported and
// keeps it too, so one pass lists every problem. Flags and `--set` are edits of the document before that walk,
// so they are checked by the same code and named by the same key paths.

/// One thing wrong in a config, under its dotted key path.
public struct DaemonConfigurationProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// `outputs.jsonl.rotation.keep`; empty for the document as a whole.
    public var keyPath: String
    /// What is wrong and what is allowed: "is 0, out of range (allowed: 1 to 65535)".
    public var message: String
    /// The flag that gave the value (`--set`, `--gpsd`); nil when it came from the file.
    public var source: String?
    /// Lines that belong to this problem: the problems of the profile `profile` names.
    public var details: [String] = []

    /// `key.path: message`.
    public var description: String { keyPath.isEmpty ? message : "\(keyPath): \(message)" }
}

/// A config that cannot be used. The CLI exits 66 for `notFound` and `unreadable`, 78 for the others.
public enum DaemonConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case notFound(file: String)
    case unreadable(file: String, reason: String)
    case notJSON(file: String, line: Int, column: Int, message: String)
    /// Every problem found; `file` is nil when no file was read (the defaults and flags alone).
    case invalid(file: String?, problems: [DaemonConfigurationProblem])

    /// One line per problem, `FILE: key.path: message` (the flag instead of the file for a value a flag
    /// gave), a profile's own problems indented under theirs.
    public var lines: [String] {
        switch self {
        case .notFound(let file): return ["\(file): no such file"]
        case .unreadable(let file, let reason): return ["cannot read \(file): \(reason)"]
        case .notJSON(let file, let line, let column, let message):
            return ["\(file): line \(line), column \(column): not valid JSON: \(message)"]
        case .invalid(let file, let problems):
            return problems.flatMap { problem in
                ["\(problem.source ?? file ?? "defaults"): \(problem)"] + problem.details.map { "  " + $0 }
            }
        }
    }

    public var description: String { lines.joined(separator: "\n") }

    /// The problems of an invalid config, empty for the other cases.
    public var problems: [DaemonConfigurationProblem] {
        if case .invalid(_, let problems) = self { return problems }
        return []
    }
}

/// One key set from outside the file: a `--set KEY=VALUE` or one of `lodestar run`'s flags.
public struct DaemonConfigurationOverride: Sendable {
    /// A dotted key path as in the file (`outputs.jsonl.path`).
    public let keyPath: String
    package let value: JSONValue
    /// How the user gave it (`--set`, `--gpsd`), for the problems it causes.
    public let source: String

    package init(keyPath: String, value: JSONValue, source: String) {
        self.keyPath = keyPath
        self.value = value
        self.source = source
    }

    /// `KEY=VALUE` as `--set` takes it: VALUE is JSON when it parses as JSON (`8080`, `null`, `false`,
    /// `{"type":"usbPort"}`), else the text itself (`/tmp/track.jsonl`, `0660`). Nil without a '=' or a key.
    public init?(assignment: String, source: String = "--set") {
        guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else { return nil }
        let text = String(assignment[assignment.index(after: equals)...])
        keyPath = String(assignment[..<equals])
        value = (try? JSONParser.parse(Array(text.utf8))) ?? .string(text)
        self.source = source
    }
}

/// A config read and checked, with the profile it names loaded.
public struct LoadedDaemonConfiguration: Sendable {
    public var configuration: DaemonConfiguration
    public var profile: Profile
    /// The file read; nil when only the defaults and flags made it.
    public var file: String?
}

/// Reads `lodestar run`'s config: a file, or the defaults, plus overrides, checked completely.
public enum DaemonConfigurationReader {
    /// The largest config file read: a full config is a few KiB, and reading no more keeps /dev/zero or a
    /// runaway file from taking the memory (the file is then an invalid config, 78).
    public static let sizeLimit = 1 << 20

    /// Reads and checks `file` with `overrides` applied, and loads its profile.
    /// `shouldStop` is asked while a config that is a FIFO or device is waited on (and its profile read).
    public static func read(
        file: String, overrides: [DaemonConfigurationOverride] = [],
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws(DaemonConfigurationError) -> LoadedDaemonConfiguration {
        let bytes: [UInt8]
        do throws(SystemError) {
            bytes = try readWholeFile(file, limit: sizeLimit, what: "a config", shouldStop: shouldStop)
        } catch {
            if error.code == ENOENT { throw .notFound(file: file) }
            if error.isTooLarge {
                throw .invalid(file: file, problems: [DaemonConfigurationProblem(keyPath: "", message: error.reason)])
            }
            throw .unreadable(file: file, reason: error.reason)
        }
        return try parse(bytes, file: file, overrides: overrides, shouldStop: shouldStop)
    }

    /// Checks a config document; `file` names it in problems.
    public static func parse(
        _ bytes: [UInt8], file: String, overrides: [DaemonConfigurationOverride] = [],
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws(DaemonConfigurationError) -> LoadedDaemonConfiguration {
        let document: JSONValue
        do throws(JSONSyntaxError) {
            document = try JSONParser.parse(bytes)
        } catch {
            throw .notJSON(file: file, line: error.line, column: error.column, message: error.message)
        }
        return try check(document, file: file, overrides: overrides, shouldStop: shouldStop)
    }

    /// The defaults with `overrides` applied (no file).
    public static func defaults(
        overrides: [DaemonConfigurationOverride] = []
    ) throws(DaemonConfigurationError) -> LoadedDaemonConfiguration {
        try check(.object([]), file: nil, overrides: overrides)
    }

    private static func check(
        _ document: JSONValue, file: String?, overrides: [DaemonConfigurationOverride],
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws(DaemonConfigurationError) -> LoadedDaemonConfiguration {
        let original = document
        var document = document
        var problems: [DaemonConfigurationProblem] = []
        for override in overrides {
            if let problem = apply(override, to: &document) { problems.append(problem) }
        }
        var walker = ConfigurationWalker()
        let configuration = walker.configuration(document)
        var profile: Profile?
        if !walker.problems.contains(where: { $0.keyPath == "profile" || $0.keyPath == "profileDirectory" }) {
            do throws(ProfileError) {
                profile = try ProfileStore(directory: configuration.profileDirectory).stopping(when: shouldStop)
                    .load(nameOrPath: configuration.profile)
            } catch {
                walker.problems.append(profileProblem(error, name: configuration.profile))
            }
        }
        // A problem is the flag's when the flag set that key or an object around it, or made the key (a
        // mistyped one) on its way to the key it sets.
        for problem in walker.problems {
            var attributed = problem
            attributed.source = overrides.last { override in
                override.keyPath == problem.keyPath || problem.keyPath.hasPrefix(override.keyPath + ".")
                    || (override.keyPath.hasPrefix(problem.keyPath + ".")
                        && original.value(at: problem.keyPath) == nil)
            }?.source
            problems.append(attributed)
        }
        guard problems.isEmpty, let profile else { throw .invalid(file: file, problems: problems) }
        return LoadedDaemonConfiguration(configuration: configuration, profile: profile, file: file)
    }

    private static func profileProblem(_ error: ProfileError, name: String) -> DaemonConfigurationProblem {
        switch error {
        case .notFound, .unreadable:
            return DaemonConfigurationProblem(keyPath: "profile", message: error.lines.joined(separator: "; "))
        case .invalid(_, let problems):
            let count = problems.count
            return DaemonConfigurationProblem(
                keyPath: "profile",
                message: "'\(name)' is not a valid profile (\(count) problem\(count == 1 ? "" : "s")):",
                details: error.lines)
        }
    }

    /// Sets one key in the document. Objects on the way are made when missing, and a disabled output (null
    /// or false) becomes an object, so `--set outputs.stdout.format=jsonl` turns stdout on.
    private static func apply(
        _ override: DaemonConfigurationOverride, to document: inout JSONValue
    ) -> DaemonConfigurationProblem? {
        let keys = override.keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !keys.contains(where: \.isEmpty) else {
            return DaemonConfigurationProblem(
                keyPath: override.keyPath, message: "is not a key path (allowed: keys joined by '.', as in "
                    + "outputs.jsonl.path)", source: override.source)
        }
        func set(_ node: JSONValue, _ index: Int) -> Result<JSONValue, DaemonConfigurationProblem> {
            var members: [(key: String, value: JSONValue)]
            switch node {
            case .object(let existing): members = existing
            case .null, .bool(false): members = []
            default:
                let path = keys[..<index].joined(separator: ".")
                return .failure(
                    DaemonConfigurationProblem(
                        keyPath: path,
                        message: "is \(node.typeName), not an object, so \(keys[index]) cannot be set in it",
                        source: override.source))
            }
            let key = keys[index]
            let position = members.firstIndex { $0.key == key }
            let value: JSONValue
            if index == keys.count - 1 {
                value = override.value
            } else {
                switch set(position.map { members[$0].value } ?? .null, index + 1) {
                case .success(let inner): value = inner
                case .failure(let problem): return .failure(problem)
                }
            }
            if let position { members[position].value = value } else { members.append((key, value)) }
            return .success(.object(members))
        }
        switch set(document, 0) {
        case .success(let updated):
            document = updated
            return nil
        case .failure(let problem):
            return problem
        }
    }
}

// MARK: - The schema's keys

/// The keys of each object, in the order the writer and docs/config.md use.
enum ConfigurationKeys {
    static let top = [
        "profile", "profileDirectory", "gpsd", "receiver", "outputs", "stateDirectory", "runtimeDirectory", "status",
        "store", "upload", "coordinates", "logLevel",
    ]
    static let gpsd = ["host", "port", "device"]
    static let receiver = ["powerControl", "connection", "powerSwitch"]
    static let gpioSwitch = ["type", "chip", "line", "activeLow"]
    static let usbPortSwitch = ["type"]
    static let outputs = ["jsonl", "gpx", "stdout", "socket", "capture"]
    static let rotation = ["maxBytes", "daily", "keep"]
    static let jsonl = ["path", "rotation", "fsyncInterval"]
    static let gpx = ["directory", "keepDays"]
    static let stdout = ["format"]
    static let socket = ["path", "group", "mode"]
    static let capture = ["path", "rotation", "raw"]
    static let status = ["noFixInterval", "updateInterval"]
    static let connections = ["auto", "usb", "uart"]
    static let store = ["path", "maxBytes", "maxAgeDays", "syncInterval"]
    static let upload = ["maxBatchAge", "uploadWhileAsleep", "initialBackoff", "maxBackoff", "owntracks", "traccar"]
    static let owntracks = [
        "host", "port", "user", "device", "trackerID", "username", "password", "tls", "caFile", "insecure", "timeout",
    ]
    static let traccar = [
        "url", "deviceID", "method", "batterySource", "caFile", "insecure", "username", "password", "timeout",
    ]
}

/// The ranges numbers must be in, said in the problems and in docs/config.md.
enum ConfigurationRanges {
    static let port = NumberRange(1, 65_535, integer: true)
    static let gpioLine = NumberRange(0, 4_095, integer: true)
    static let maxBytes = NumberRange(4_096, 1_099_511_627_776, unit: "bytes", integer: true)
    static let keep = NumberRange(1, 100_000, unit: "files", integer: true)
    static let fsyncInterval = NumberRange(0, 3_600, unit: "seconds")
    static let keepDays = NumberRange(1, 36_500, unit: "days", integer: true)
    static let noFixInterval = NumberRange(1, 86_400, unit: "seconds")
    static let updateInterval = NumberRange(0.5, 3_600, unit: "seconds")
    static let storeBytes = NumberRange(65_536, 1_099_511_627_776, unit: "bytes", integer: true)
    static let maxAgeDays = NumberRange(1, 36_500, unit: "days", integer: true)
    static let syncInterval = NumberRange(0, 3_600, unit: "seconds")
    static let maxBatchAge = NumberRange(0, 604_800, unit: "seconds")
    static let backoff = NumberRange(1, 86_400, unit: "seconds")
    static let uploadTimeout = NumberRange(1, 600, unit: "seconds")
    /// `sun_path` holds 108 bytes with the terminating zero.
    static let socketPathBytes = 107
}

struct NumberRange {
    var lower: Double
    var upper: Double
    var unit: String?
    var integer: Bool

    init(_ lower: Double, _ upper: Double, unit: String? = nil, integer: Bool = false) {
        self.lower = lower
        self.upper = upper
        self.unit = unit
        self.integer = integer
    }

    /// "1 to 65535", "a whole number of days from 1 to 36500".
    var allowed: String {
        let span = "\(JSONWriter.numberText(lower)) to \(JSONWriter.numberText(upper))"
        switch (integer, unit) {
        case (true, let unit?): return "a whole number of \(unit) from \(span)"
        case (true, nil): return "a whole number from \(span)"
        case (false, let unit?): return "\(span) \(unit)"
        case (false, nil): return span
        }
    }

    func contains(_ value: Double) -> Bool {
        value >= lower && value <= upper && (!integer || value == value.rounded())
    }
}

// MARK: - Reading

/// Walks the document into a configuration that starts as the defaults, collecting every problem.
private struct ConfigurationWalker {
    typealias Members = [String: JSONValue]
    var problems: [DaemonConfigurationProblem] = []

    private static func join(_ parent: String, _ key: String) -> String { parent.isEmpty ? key : "\(parent).\(key)" }

    private mutating func report(_ path: String, _ message: String) {
        problems.append(DaemonConfigurationProblem(keyPath: path, message: message))
    }

    /// The members of an object, unknown keys reported with the closest known one; nil (reported) when
    /// `value` is not an object.
    private mutating func members(_ value: JSONValue, at path: String, keys: [String]) -> Members? {
        guard case .object(let list) = value else {
            let subject = path.isEmpty ? "the document is" : "is"
            let allowed = "an object with keys: \(keys.joined(separator: ", "))"
            report(path, "\(subject) \(value.typeName), not an object (allowed: \(allowed))")
            return nil
        }
        var result: Members = [:]
        for (key, member) in list {
            guard keys.contains(key) else {
                let hint = closestKey(to: key, in: keys).map { " (did you mean '\($0)'?)" } ?? ""
                report(Self.join(path, key), "unknown key\(hint) (allowed: \(keys.joined(separator: ", ")))")
                continue
            }
            result[key] = member
        }
        return result
    }

    mutating func configuration(_ document: JSONValue) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        guard let top = members(document, at: "", keys: ConfigurationKeys.top) else { return configuration }
        text(top, "profile", "", &configuration.profile, .name)
        text(top, "profileDirectory", "", &configuration.profileDirectory, .path)
        if let value = top["gpsd"], let gpsd = members(value, at: "gpsd", keys: ConfigurationKeys.gpsd) {
            text(gpsd, "host", "gpsd", &configuration.gpsd.host, .host)
            port(gpsd, &configuration.gpsd.port)
            optionalText(gpsd, "device", "gpsd", &configuration.gpsd.device, .absolutePath, null: "gpsd's first device")
        }
        if let value = top["receiver"],
            let receiver = members(value, at: "receiver", keys: ConfigurationKeys.receiver)
        {
            flag(receiver, "powerControl", "receiver", &configuration.receiver.powerControl)
            connection(receiver, &configuration.receiver.connection)
            powerSwitch(receiver, &configuration.receiver.powerSwitch)
        }
        if let value = top["outputs"], let outputs = members(value, at: "outputs", keys: ConfigurationKeys.outputs) {
            readOutputs(outputs, into: &configuration.outputs)
        }
        text(top, "stateDirectory", "", &configuration.stateDirectory, .absolutePath)
        text(top, "runtimeDirectory", "", &configuration.runtimeDirectory, .absolutePath)
        if let value = top["status"], let status = members(value, at: "status", keys: ConfigurationKeys.status) {
            number(
                status, "noFixInterval", "status", &configuration.status.noFixInterval,
                ConfigurationRanges.noFixInterval)
            number(
                status, "updateInterval", "status", &configuration.status.updateInterval,
                ConfigurationRanges.updateInterval)
        }
        section(top, "store", under: "", &configuration.store, keys: ConfigurationKeys.store, off: "no store") {
            walker, members, path, store in
            walker.text(members, "path", path, &store.path, .path)
            walker.optionalInteger(
                members, "maxBytes", path, &store.maxBytes, ConfigurationRanges.storeBytes, null: "no size limit")
            walker.optionalInteger(
                members, "maxAgeDays", path, &store.maxAgeDays, ConfigurationRanges.maxAgeDays, null: "no age limit")
            walker.number(members, "syncInterval", path, &store.syncInterval, ConfigurationRanges.syncInterval)
        }
        if let value = top["upload"], let upload = members(value, at: "upload", keys: ConfigurationKeys.upload) {
            readUpload(upload, into: &configuration.upload)
        }
        if let value = top["coordinates"],
            let text = choice(value, at: "coordinates", CoordinateSystem.allCases.map(\.rawValue))
        {
            configuration.coordinates = CoordinateSystem(rawValue: text) ?? .wgs84
        }
        if let value = top["logLevel"], let text = choice(value, at: "logLevel", Logger.Level.allCases.map(\.rawValue)) {
            configuration.logLevel = Logger.Level(rawValue: text) ?? .info
        }
        checkCombinations(configuration)
        return configuration
    }

    private mutating func readUpload(_ upload: Members, into settings: inout DaemonConfiguration.UploadSettings) {
        number(upload, "maxBatchAge", "upload", &settings.maxBatchAge, ConfigurationRanges.maxBatchAge)
        flag(upload, "uploadWhileAsleep", "upload", &settings.uploadWhileAsleep)
        number(upload, "initialBackoff", "upload", &settings.initialBackoff, ConfigurationRanges.backoff)
        number(upload, "maxBackoff", "upload", &settings.maxBackoff, ConfigurationRanges.backoff)
        // An uploader has no defaults for where it sends: `true` is no uploader.
        section(
            upload, "owntracks", under: "upload", &settings.owntracks, keys: ConfigurationKeys.owntracks, off: "none",
            trueGivesDefaults: false
        ) {
            walker, members, path, owntracks in
            walker.text(members, "host", path, &owntracks.host, .host)
            if let value = members["port"] {
                if case .null = value {
                    owntracks.port = nil
                } else if let port = walker.integer(value, at: ConfigurationWalker.join(path, "port"), ConfigurationRanges.port) {
                    owntracks.port = port
                }
            }
            walker.requiredText(members, "user", path, &owntracks.user, .topicLevel)
            walker.requiredText(members, "device", path, &owntracks.device, .topicLevel)
            walker.optionalText(members, "trackerID", path, &owntracks.trackerID, .trackerID, null: "the device's last two characters")
            walker.optionalText(members, "username", path, &owntracks.username, .text, null: "no username")
            walker.optionalText(members, "password", path, &owntracks.password, .text, null: "no password")
            walker.flag(members, "tls", path, &owntracks.tls)
            walker.optionalText(members, "caFile", path, &owntracks.caFile, .absolutePath, null: "the system's certificates")
            walker.flag(members, "insecure", path, &owntracks.insecure)
            walker.number(members, "timeout", path, &owntracks.timeout, ConfigurationRanges.uploadTimeout)
        }
        section(
            upload, "traccar", under: "upload", &settings.traccar, keys: ConfigurationKeys.traccar, off: "none",
            trueGivesDefaults: false
        ) {
            walker, members, path, traccar in
            walker.requiredText(members, "url", path, &traccar.url, .url)
            walker.requiredText(members, "deviceID", path, &traccar.deviceID, .text)
            if let value = members["method"],
                let text = walker.choice(
                    value, at: ConfigurationWalker.join(path, "method"),
                    DaemonConfiguration.TraccarUpload.Method.allCases.map(\.rawValue))
            {
                traccar.method = DaemonConfiguration.TraccarUpload.Method(rawValue: text) ?? traccar.method
            }
            walker.optionalText(members, "batterySource", path, &traccar.batterySource, .absolutePath, null: "no battery level")
            walker.optionalText(members, "caFile", path, &traccar.caFile, .absolutePath, null: "the system's certificates")
            walker.flag(members, "insecure", path, &traccar.insecure)
            walker.optionalText(members, "username", path, &traccar.username, .text, null: "no username")
            walker.optionalText(members, "password", path, &traccar.password, .text, null: "no password")
            walker.number(members, "timeout", path, &traccar.timeout, ConfigurationRanges.uploadTimeout)
        }
    }

    private mutating func requiredText(
        _ members: Members, _ key: String, _ parent: String, _ target: inout String, _ kind: TextKind
    ) {
        guard members[key] != nil else {
            report(Self.join(parent, key), "is missing (allowed: \(kind.allowed))")
            return
        }
        text(members, key, parent, &target, kind)
    }

    private mutating func readOutputs(_ outputs: Members, into settings: inout DaemonConfiguration.OutputSettings) {
        section(outputs, "jsonl", under: "outputs", &settings.jsonl, keys: ConfigurationKeys.jsonl) { walker, members, path, jsonl in
            walker.text(members, "path", path, &jsonl.path, .path)
            walker.rotation(members, path, &jsonl.rotation)
            walker.number(members, "fsyncInterval", path, &jsonl.fsyncInterval, ConfigurationRanges.fsyncInterval)
        }
        section(outputs, "gpx", under: "outputs", &settings.gpx, keys: ConfigurationKeys.gpx) { walker, members, path, gpx in
            walker.text(members, "directory", path, &gpx.directory, .path)
            walker.optionalInteger(
                members, "keepDays", path, &gpx.keepDays, ConfigurationRanges.keepDays, null: "keep every day")
        }
        section(outputs, "stdout", under: "outputs", &settings.stdout, keys: ConfigurationKeys.stdout) { walker, members, path, stdout in
            guard let value = members["format"] else { return }
            let allowed = DaemonConfiguration.StdoutOutput.Format.allCases.map(\.rawValue)
            if let text = walker.choice(value, at: ConfigurationWalker.join(path, "format"), allowed) {
                stdout.format = DaemonConfiguration.StdoutOutput.Format(rawValue: text) ?? stdout.format
            }
        }
        section(outputs, "socket", under: "outputs", &settings.socket, keys: ConfigurationKeys.socket) { walker, members, path, socket in
            walker.text(members, "path", path, &socket.path, .path)
            walker.optionalText(members, "group", path, &socket.group, .group, null: "the daemon's own group")
            walker.mode(members, path, &socket.mode)
        }
        section(outputs, "capture", under: "outputs", &settings.capture, keys: ConfigurationKeys.capture) {
            walker, members, path, capture in
            walker.text(members, "path", path, &capture.path, .path)
            walker.rotation(members, path, &capture.rotation)
            walker.flag(members, "raw", path, &capture.raw)
        }
    }

    /// An optional section (an output, the store, an uploader): null or false turn it off, true (where
    /// `trueGivesDefaults`) turns it on with its defaults, an object sets its keys over the defaults.
    private mutating func section<Section>(
        _ parentMembers: Members, _ key: String, under parent: String, _ target: inout Section?, keys: [String],
        off: String = "off", trueGivesDefaults: Bool = true,
        read: (inout ConfigurationWalker, Members, String, inout Section) -> Void
    ) where Section: DefaultOutput {
        guard let value = parentMembers[key] else { return }
        let path = Self.join(parent, key)
        switch value {
        case .null, .bool(false): target = nil
        case .bool(true) where trueGivesDefaults: target = Section()
        case .object:
            guard let members = members(value, at: path, keys: keys) else { return }
            var section = Section()
            read(&self, members, path, &section)
            target = section
        default:
            let onWithDefaults = trueGivesDefaults ? "true for the defaults, " : ""
            report(
                path,
                "is \(value.typeName), not an object (allowed: null or false for \(off), \(onWithDefaults)"
                    + "or an object with keys: \(keys.joined(separator: ", ")))")
        }
    }

    private mutating func rotation(_ members: Members, _ parent: String, _ target: inout DaemonConfiguration.Rotation) {
        guard let value = members["rotation"] else { return }
        let path = Self.join(parent, "rotation")
        guard let rotation = self.members(value, at: path, keys: ConfigurationKeys.rotation) else { return }
        optionalInteger(
            rotation, "maxBytes", path, &target.maxBytes, ConfigurationRanges.maxBytes, null: "no size limit")
        flag(rotation, "daily", path, &target.daily)
        optionalInteger(rotation, "keep", path, &target.keep, ConfigurationRanges.keep, null: "keep them all")
    }

    private mutating func connection(_ members: Members, _ target: inout ReceiverConnection?) {
        guard let value = members["connection"],
            let text = choice(value, at: "receiver.connection", ConfigurationKeys.connections)
        else { return }
        target = text == "auto" ? nil : ReceiverConnection(rawValue: text)
    }

    private mutating func powerSwitch(
        _ members: Members, _ target: inout DaemonConfiguration.PowerSwitchSettings?
    ) {
        guard let value = members["powerSwitch"] else { return }
        let path = "receiver.powerSwitch"
        let types = ["gpio", "usbPort"]
        if case .null = value {
            target = nil
            return
        }
        guard case .object(let list) = value else {
            report(
                path,
                "is \(value.typeName), not an object (allowed: null for none, or an object with type gpio or usbPort)")
            return
        }
        guard let typeValue = list.first(where: { $0.key == "type" })?.value else {
            report(Self.join(path, "type"), "is missing (allowed: \(types.joined(separator: ", ")))")
            return
        }
        guard let type = choice(typeValue, at: Self.join(path, "type"), types) else { return }
        if type == "usbPort" {
            if self.members(value, at: path, keys: ConfigurationKeys.usbPortSwitch) != nil { target = .usbPort }
            return
        }
        guard let gpio = self.members(value, at: path, keys: ConfigurationKeys.gpioSwitch) else { return }
        var chip = "gpiochip0"
        var activeLow = false
        text(gpio, "chip", path, &chip, .chip)
        flag(gpio, "activeLow", path, &activeLow)
        guard let lineValue = gpio["line"] else {
            report(Self.join(path, "line"), "is missing (allowed: \(ConfigurationRanges.gpioLine.allowed))")
            return
        }
        if let line = integer(lineValue, at: Self.join(path, "line"), ConfigurationRanges.gpioLine) {
            target = .gpio(chip: chip, line: line, activeLow: activeLow)
        }
    }

    /// A port number, or a service name as a string (`"gpsd"`); a number in a string is kept as a number.
    private mutating func port(_ members: Members, _ target: inout String) {
        guard let value = members["port"] else { return }
        let path = "gpsd.port"
        let allowed = "\(ConfigurationRanges.port.allowed), or a service name such as \"gpsd\""
        switch value {
        case .number(let number):
            if ConfigurationRanges.port.contains(number) {
                target = String(Int(number))
            } else {
                report(path, "is \(JSONWriter.numberText(number)), out of range (allowed: \(allowed))")
            }
        case .string(let text):
            if let number = Int(text) {
                if ConfigurationRanges.port.contains(Double(number)) {
                    target = String(number)
                } else {
                    report(path, "is '\(text)', out of range (allowed: \(allowed))")
                }
            } else if !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) {
                target = text
            } else {
                report(path, "'\(text)' is not a port (allowed: \(allowed))")
            }
        default:
            report(path, "is \(value.typeName), not a number or a string (allowed: \(allowed))")
        }
    }

    /// Permission bits as octal digits in a string: JSON numbers are decimal, so 0660 cannot be a number.
    private mutating func mode(_ members: Members, _ parent: String, _ target: inout Int) {
        guard let value = members["mode"] else { return }
        let path = Self.join(parent, "mode")
        let allowed = "three or four octal digits in a string, such as \"0660\", at most \"0777\""
        guard case .string(let text) = value else {
            report(path, "is \(value.typeName), not a string (allowed: \(allowed))")
            return
        }
        let digits = text.count == 4 && text.hasPrefix("0") ? String(text.dropFirst()) : text
        guard digits.count == 3, let mode = Int(digits, radix: 8), digits.allSatisfy({ ("0"..."7").contains($0) })
        else {
            report(path, "'\(text)' is not a file mode (allowed: \(allowed))")
            return
        }
        target = mode
    }

    // MARK: Values

    /// What a string must look like.
    enum TextKind {
        case name, path, absolutePath, host, chip, group, topicLevel, trackerID, url, text

        /// Why `text` is not one, nil when it is.
        /// The longest text of this kind, in UTF-8 bytes: a DNS name's 253, PATH_MAX for paths, and 1024 for
        /// the rest, so a 10 MB value is refused rather than carried into every log line and status file.
        var maximumLength: Int {
            switch self {
            case .host: 253
            case .path, .absolutePath, .name, .chip: 4096
            case .url: 2048
            case .group: 32
            case .topicLevel, .trackerID, .text: 1024
            }
        }

        func problem(_ text: String) -> String? {
            if text.isEmpty { return "is empty (allowed: \(allowed))" }
            if text.utf8.count > maximumLength {
                return "is \(text.utf8.count) bytes long, more than \(maximumLength) (allowed: \(allowed))"
            }
            if text.contains("\0") { return "contains a NUL character (allowed: \(allowed))" }
            switch self {
            case .name, .path, .text:
                return nil
            case .absolutePath:
                return text.hasPrefix("/") ? nil : "'\(text)' is not an absolute path (allowed: \(allowed))"
            case .host:
                return Self.isHost(text) ? nil : "'\(text)' is not a host name (allowed: \(allowed))"
            case .chip:
                return text.hasPrefix("/") || (text.hasPrefix("gpiochip") && Int(text.dropFirst(8)) != nil)
                    ? nil : "'\(text)' is not a GPIO chip (allowed: \(allowed))"
            case .group:
                let fits = text.count <= 32 && !text.hasPrefix("-")
                    && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
                return fits ? nil : "'\(text)' is not a group name (allowed: \(allowed))"
            case .topicLevel:
                return text.contains(where: { "/+#".contains($0) })
                    ? "'\(text)' cannot be an MQTT topic level (allowed: \(allowed))" : nil
            case .trackerID:
                return text.count <= 2 ? nil : "'\(text)' is longer than two characters (allowed: \(allowed))"
            case .url:
                let lower = text.lowercased()
                return (lower.hasPrefix("http://") || lower.hasPrefix("https://")) && !text.contains(where: \.isWhitespace)
                    ? nil : "'\(text)' is not an http:// or https:// URL (allowed: \(allowed))"
            }
        }

        /// A DNS name (letters, digits, '-', '_', '.'), an IPv4 address, or an IPv6 address without brackets
        /// (hex digits, ':' and '.', an optional %zone): what getaddrinfo takes for gpsd or a broker.
        static func isHost(_ text: String) -> Bool {
            if text.contains(":") {
                // An IPv6 address as inet_pton reads it, after an optional %zone (an interface name).
                let pieces = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
                if pieces.count == 2, pieces[1].isEmpty || !pieces[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                    return false
                }
                var address = in6_addr()
                return inet_pton(AF_INET6, String(pieces[0]), &address) == 1
            }
            return !text.hasPrefix("-") && !text.hasPrefix(".")
                && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        }

        var allowed: String {
            switch self {
            case .name: "a profile's name or file"
            case .path: "a file path; a relative one is under its directory"
            case .absolutePath: "a path that starts with '/'"
            case .host: "a host name or address, at most 253 characters; an IPv6 address without brackets"
            case .chip: "gpiochipN, or a path such as /dev/gpiochip0"
            case .group: "a group name (letters, digits, '-', '_', '.'), or null"
            case .topicLevel: "a name without '/', '+' or '#'"
            case .trackerID: "one or two characters"
            case .url: "an http:// or https:// URL, such as http://traccar.example:5055"
            case .text: "text, not empty"
            }
        }
    }

    private mutating func string(_ value: JSONValue, at path: String, _ kind: TextKind) -> String? {
        guard case .string(let text) = value else {
            report(path, "is \(value.typeName), not a string (allowed: \(kind.allowed))")
            return nil
        }
        if let problem = kind.problem(text) {
            report(path, problem)
            return nil
        }
        return text
    }

    private mutating func text(
        _ members: Members, _ key: String, _ parent: String, _ target: inout String, _ kind: TextKind
    ) {
        guard let value = members[key] else { return }
        if let text = string(value, at: Self.join(parent, key), kind) { target = text }
    }

    private mutating func optionalText(
        _ members: Members, _ key: String, _ parent: String, _ target: inout String?, _ kind: TextKind, null: String
    ) {
        guard let value = members[key] else { return }
        let path = Self.join(parent, key)
        switch value {
        case .null: target = nil
        case .string: if let text = string(value, at: path, kind) { target = text }
        default: report(path, "is \(value.typeName), not a string or null (allowed: \(kind.allowed); null: \(null))")
        }
    }

    private mutating func flag(_ members: Members, _ key: String, _ parent: String, _ target: inout Bool) {
        guard let value = members[key] else { return }
        guard case .bool(let flag) = value else {
            report(Self.join(parent, key), "is \(value.typeName), not true or false")
            return
        }
        target = flag
    }

    private mutating func choice(_ value: JSONValue, at path: String, _ allowed: [String]) -> String? {
        let list = allowed.joined(separator: ", ")
        guard case .string(let text) = value else {
            report(path, "is \(value.typeName), not a string (allowed: \(list))")
            return nil
        }
        guard allowed.contains(text) else {
            let hint = closestKey(to: text, in: allowed).map { " (did you mean '\($0)'?)" } ?? ""
            report(path, "'\(text)' is not a known value\(hint) (allowed: \(list))")
            return nil
        }
        return text
    }

    private mutating func numberValue(
        _ value: JSONValue, at path: String, _ range: NumberRange, null: String?
    ) -> Double? {
        guard case .number(let number) = value else {
            let expected = null == nil ? "a number" : "a number or null"
            let nullText = null.map { "; null: \($0)" } ?? ""
            report(path, "is \(value.typeName), not \(expected) (allowed: \(range.allowed)\(nullText))")
            return nil
        }
        guard range.contains(number) else {
            let why = number >= range.lower && number <= range.upper ? "not a whole number" : "out of range"
            report(path, "is \(JSONWriter.numberText(number)), \(why) (allowed: \(range.allowed))")
            return nil
        }
        return number
    }

    private mutating func integer(_ value: JSONValue, at path: String, _ range: NumberRange) -> Int? {
        numberValue(value, at: path, range, null: nil).map { Int($0) }
    }

    private mutating func number(
        _ members: Members, _ key: String, _ parent: String, _ target: inout Double, _ range: NumberRange
    ) {
        guard let value = members[key] else { return }
        if let number = numberValue(value, at: Self.join(parent, key), range, null: nil) { target = number }
    }

    private mutating func optionalInteger(
        _ members: Members, _ key: String, _ parent: String, _ target: inout Int?, _ range: NumberRange, null: String
    ) {
        guard let value = members[key] else { return }
        if case .null = value {
            target = nil
        } else if let number = numberValue(value, at: Self.join(parent, key), range, null: null) {
            target = Int(number)
        }
    }

    /// Values each fine alone that cannot work together.
    private mutating func checkCombinations(_ configuration: DaemonConfiguration) {
        let outputs = configuration.outputs
        if let socket = outputs.socket {
            let path = DaemonConfiguration.resolve(socket.path, under: configuration.runtimeDirectory)
            if path.utf8.count > ConfigurationRanges.socketPathBytes {
                report(
                    "outputs.socket.path",
                    "resolves to \(path), \(path.utf8.count) bytes: a Unix socket's path holds at most "
                        + "\(ConfigurationRanges.socketPathBytes)")
            }
        }
        if let jsonl = outputs.jsonl, let capture = outputs.capture,
            DaemonConfiguration.resolve(jsonl.path, under: configuration.stateDirectory)
                == DaemonConfiguration.resolve(capture.path, under: configuration.stateDirectory)
        {
            report("outputs.capture.path", "is the same file as outputs.jsonl.path (allowed: another file)")
        }
        let upload = configuration.upload
        if configuration.store == nil, !upload.names.isEmpty {
            report(
                "store",
                "is off, but upload.\(upload.names.joined(separator: " and upload.")) needs it: uploads are sent "
                    + "from the store (allowed: a store, or no uploaders)")
        }
        if upload.maxBackoff < upload.initialBackoff {
            report(
                "upload.maxBackoff",
                "is \(JSONWriter.numberText(upload.maxBackoff)) s, less than upload.initialBackoff "
                    + "(\(JSONWriter.numberText(upload.initialBackoff)) s) (allowed: at least initialBackoff)")
        }
    }
}

/// Optional sections (outputs, the store, uploaders) start from their defaults when an object or `true` turns
/// them on.
private protocol DefaultOutput { init() }
extension DaemonConfiguration.JSONLOutput: DefaultOutput {}
extension DaemonConfiguration.GPXOutput: DefaultOutput {}
extension DaemonConfiguration.StdoutOutput: DefaultOutput {}
extension DaemonConfiguration.SocketOutput: DefaultOutput {}
extension DaemonConfiguration.CaptureOutput: DefaultOutput {}
extension DaemonConfiguration.StoreSettings: DefaultOutput {}
extension DaemonConfiguration.OwnTracksUpload: DefaultOutput {}
extension DaemonConfiguration.TraccarUpload: DefaultOutput {}

/// The known word nearest a mistyped one, when it is at most two edits away or differs only in case.
private func closestKey(to word: String, in candidates: [String]) -> String? {
    let typed = Array(word.lowercased())
    var best: (word: String, edits: Int)?
    for candidate in candidates {
        let target = Array(candidate.lowercased())
        // Levenshtein distance, one row at a time.
        var row = Array(0...target.count)
        for (i, a) in typed.enumerated() {
            var next = [i + 1]
            for (j, b) in target.enumerated() {
                next.append(Swift.min(row[j + 1] + 1, next[j] + 1, row[j] + (a == b ? 0 : 1)))
            }
            row = next
        }
        if row[target.count] <= 2, row[target.count] < best?.edits ?? .max { best = (candidate, row[target.count]) }
    }
    return best?.word
}

// MARK: - Writing

extension DaemonConfiguration {
    /// The complete config as a file: every key, defaults written out, in the order of docs/config.md.
    /// `lodestar config show` prints it; the reader reads it back to an equal configuration.
    public var jsonText: String { JSONWriter.text(jsonValue) }

    package var jsonValue: JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
        func optional(_ number: Int?) -> JSONValue { number.map { .number(Double($0)) } ?? .null }
        func rotation(_ rotation: Rotation) -> JSONValue {
            .object([
                ("maxBytes", optional(rotation.maxBytes)), ("daily", .bool(rotation.daily)),
                ("keep", optional(rotation.keep)),
            ])
        }
        let powerSwitch: JSONValue =
            switch receiver.powerSwitch {
            case nil: .null
            case .usbPort: .object([("type", .string("usbPort"))])
            case .gpio(let chip, let line, let activeLow):
                .object([
                    ("type", .string("gpio")), ("chip", .string(chip)), ("line", .number(Double(line))),
                    ("activeLow", .bool(activeLow)),
                ])
            }
        func octal(_ mode: Int) -> String {
            let digits = String(mode, radix: 8)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        let storeValue: JSONValue =
            store.map {
                .object([
                    ("path", .string($0.path)), ("maxBytes", optional($0.maxBytes)), ("maxAgeDays", optional($0.maxAgeDays)),
                    ("syncInterval", .number($0.syncInterval)),
                ])
            } ?? .null
        var owntracksValue = JSONValue.null
        if let owntracks = upload.owntracks {
            let members: [(key: String, value: JSONValue)] = [
                ("host", .string(owntracks.host)), ("port", optional(owntracks.port)), ("user", .string(owntracks.user)),
                ("device", .string(owntracks.device)), ("trackerID", optional(owntracks.trackerID)),
                ("username", optional(owntracks.username)), ("password", optional(owntracks.password)),
                ("tls", .bool(owntracks.tls)), ("caFile", optional(owntracks.caFile)),
                ("insecure", .bool(owntracks.insecure)), ("timeout", .number(owntracks.timeout)),
            ]
            owntracksValue = .object(members)
        }
        var traccarValue = JSONValue.null
        if let traccar = upload.traccar {
            let members: [(key: String, value: JSONValue)] = [
                ("url", .string(traccar.url)), ("deviceID", .string(traccar.deviceID)),
                ("method", .string(traccar.method.rawValue)), ("batterySource", optional(traccar.batterySource)),
                ("caFile", optional(traccar.caFile)), ("insecure", .bool(traccar.insecure)),
                ("username", optional(traccar.username)), ("password", optional(traccar.password)),
                ("timeout", .number(traccar.timeout)),
            ]
            traccarValue = .object(members)
        }
        let uploadMembers: [(key: String, value: JSONValue)] = [
            ("maxBatchAge", .number(upload.maxBatchAge)), ("uploadWhileAsleep", .bool(upload.uploadWhileAsleep)),
            ("initialBackoff", .number(upload.initialBackoff)), ("maxBackoff", .number(upload.maxBackoff)),
            ("owntracks", owntracksValue), ("traccar", traccarValue),
        ]
        let uploadValue = JSONValue.object(uploadMembers)
        return .object([
            ("profile", .string(profile)),
            ("profileDirectory", .string(profileDirectory)),
            (
                "gpsd",
                .object([
                    ("host", .string(gpsd.host)),
                    ("port", Int(gpsd.port).map { .number(Double($0)) } ?? .string(gpsd.port)),
                    ("device", optional(gpsd.device)),
                ])
            ),
            (
                "receiver",
                .object([
                    ("powerControl", .bool(receiver.powerControl)),
                    ("connection", .string(receiver.connection?.rawValue ?? "auto")),
                    ("powerSwitch", powerSwitch),
                ])
            ),
            (
                "outputs",
                .object([
                    (
                        "jsonl",
                        outputs.jsonl.map {
                            .object([
                                ("path", .string($0.path)), ("rotation", rotation($0.rotation)),
                                ("fsyncInterval", .number($0.fsyncInterval)),
                            ])
                        } ?? .null
                    ),
                    (
                        "gpx",
                        outputs.gpx.map {
                            .object([("directory", .string($0.directory)), ("keepDays", optional($0.keepDays))])
                        } ?? .null
                    ),
                    ("stdout", outputs.stdout.map { .object([("format", .string($0.format.rawValue))]) } ?? .null),
                    (
                        "socket",
                        outputs.socket.map {
                            .object([
                                ("path", .string($0.path)), ("group", optional($0.group)),
                                ("mode", .string(octal($0.mode))),
                            ])
                        } ?? .null
                    ),
                    (
                        "capture",
                        outputs.capture.map {
                            .object([
                                ("path", .string($0.path)), ("rotation", rotation($0.rotation)), ("raw", .bool($0.raw)),
                            ])
                        } ?? .null
                    ),
                ])
            ),
            ("stateDirectory", .string(stateDirectory)),
            ("runtimeDirectory", .string(runtimeDirectory)),
            (
                "status",
                .object([
                    ("noFixInterval", .number(status.noFixInterval)),
                    ("updateInterval", .number(status.updateInterval)),
                ])
            ),
            ("store", storeValue),
            ("upload", uploadValue),
            ("coordinates", .string(coordinates.rawValue)),
            ("logLevel", .string(logLevel.rawValue)),
        ])
    }

    /// One line for `lodestar config validate`: profile, gpsd, receiver control, the outputs that are on.
    public var summary: String {
        var on: [String] = []
        if let jsonl = outputs.jsonl { on.append("jsonl \(Self.resolve(jsonl.path, under: stateDirectory))") }
        if let gpx = outputs.gpx { on.append("gpx \(Self.resolve(gpx.directory, under: stateDirectory))") }
        if let stdout = outputs.stdout { on.append("stdout \(stdout.format.rawValue)") }
        if let socket = outputs.socket { on.append("socket \(Self.resolve(socket.path, under: runtimeDirectory))") }
        if let capture = outputs.capture { on.append("capture \(Self.resolve(capture.path, under: stateDirectory))") }
        let control: String =
            switch (receiver.powerControl, receiver.powerSwitch) {
            case (false, _): "no power control"
            case (true, nil): "power control"
            case (true, .usbPort): "power control, USB port switch"
            case (true, .gpio(let chip, let line, _)): "power control, GPIO switch \(chip) line \(line)"
            }
        let device = gpsd.device ?? "first device"
        var forwarding: [String] = []
        if let store { forwarding.append("store \(Self.resolve(store.path, under: stateDirectory))") }
        if let owntracks = upload.owntracks {
            forwarding.append("owntracks \(owntracks.host) owntracks/\(owntracks.user)/\(owntracks.device)")
        }
        if let traccar = upload.traccar { forwarding.append("traccar \(traccar.url) id \(traccar.deviceID)") }
        return "profile \(profile); gpsd \(gpsd.host):\(gpsd.port) \(device); "
            + "receiver \(receiver.connection?.rawValue ?? "auto"), \(control); "
            + "outputs: \(on.isEmpty ? "none" : on.joined(separator: ", "))"
            + (forwarding.isEmpty ? "" : "; \(forwarding.joined(separator: ", "))")
            + (coordinates == .wgs84 ? "" : "; coordinates \(coordinates.rawValue)")
    }
}
