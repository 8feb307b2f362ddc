import JSON
import Lodestar
import Policy
import SystemInterface

#if canImport(Glibc)
    import Glibc
#endif

// Reading the config of `lodestar run` (docs/config.md): the file, or the defaults, with the flags applied, then
// checked completely by `DaemonConfigurationWalker` (DaemonConfigurationWalker.swift), which walks the schema
// once from the defaults: a missing key keeps its default, and a bad one is reported and keeps it too, so one
// pass lists every problem. Flags and `--set` are edits of the document before that walk, so they are checked
// by the same code and named by the same key paths.

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
        var walker = DaemonConfigurationWalker()
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
