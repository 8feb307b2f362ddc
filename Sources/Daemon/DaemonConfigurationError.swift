// What is wrong with a config of `lodestar run`: each problem under the key path it is about, the file (or the
// flag that gave the value) named on its line, as docs/config.md's Validation section shows them.

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
