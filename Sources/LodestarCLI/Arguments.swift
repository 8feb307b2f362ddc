/// A usage error: what was wrong, said to stderr with the command's usage, exit 64.
struct UsageError: Error {
    var message: String
}

/// Long options in swift-argument-parser's style, by hand: `--name value` or `--name=value`, flags without
/// values, a declared one-letter alias (`-o`) on its own, `--help` anywhere. Only declared options are
/// accepted; with `--help` the requirements between options are not checked (the help answers them).
struct ParsedArguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    init(_ arguments: [String], options: [OptionDeclaration]) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-"), argument != "-" else {
                positionals.append(argument)
                continue
            }
            if argument == "-h" || argument == "--help" {
                flags.insert("help")
                continue
            }
            var name: String
            var inlineValue: String?
            if let short = options.first(where: { $0.shortName.map { "-\($0)" } == argument }) {
                name = short.name
            } else {
                guard argument.hasPrefix("--") else { throw UsageError(message: "unknown option '\(argument)'") }
                name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
            }
            let option = options.first { $0.name == name }
            if let option, option.takesValue {
                if let inlineValue {
                    values[name] = inlineValue
                } else if index < arguments.count {
                    values[name] = arguments[index]
                    index += 1
                } else {
                    throw UsageError(message: "option '--\(name)' needs a value")
                }
            } else if option != nil, inlineValue == nil {
                flags.insert(name)
            } else {
                throw UsageError(message: "unknown option '--\(name)'")
            }
        }
        if wantsHelp { return }
        for option in options where isGiven(option.name) {
            if let required = option.requires, !isGiven(required) {
                throw UsageError(message: "--\(option.name) needs --\(required)")
            }
            if let excluded = option.excludes, isGiven(excluded) {
                throw UsageError(message: "--\(option.name) cannot be combined with --\(excluded)")
            }
        }
    }

    private func isGiven(_ name: String) -> Bool { values[name] != nil || flags.contains(name) }

    var wantsHelp: Bool { flags.contains("help") }

    func string(_ name: String) -> String? { values[name] }

    func positiveInteger(_ name: String) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), value > 0 else {
            throw UsageError(message: "option '--\(name)' takes a whole number above 0, not '\(text)'")
        }
        return value
    }

    func positiveNumber(_ name: String) throws(UsageError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text), value > 0, value.isFinite else {
            throw UsageError(message: "option '--\(name)' takes a number above 0, not '\(text)'")
        }
        return value
    }

    func port(_ name: String) throws(UsageError) -> String? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), (1...65_535).contains(value) else {
            throw UsageError(message: "option '--\(name)' takes a port from 1 to 65535, not '\(text)'")
        }
        return String(value)
    }

    func format(_ name: String, default fallback: LocationFormat) throws(UsageError) -> LocationFormat {
        guard let text = values[name] else { return fallback }
        guard let format = LocationFormat(rawValue: text) else {
            let allowed = LocationFormat.allCases.map(\.rawValue).joined(separator: "|")
            throw UsageError(message: "option '--\(name)' takes \(allowed), not '\(text)'")
        }
        return format
    }
}
