/// A usage error: what was wrong, said to stderr with the command's usage, exit 64.
struct UsageError: Error {
    var message: String
}

/// Long options in swift-argument-parser's style, by hand: `--name value` or `--name=value`, flags without
/// values, a declared one-letter alias (`-o`) on its own, `--help` anywhere. Only declared options are
/// accepted, and exactly the declared operands; with `--help` none of the requirements (operands, required
/// options, options that need or exclude others) is checked: the help answers them.
struct ParsedArguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []
    /// The declaration's operands and options, for `operand(_:)`, `required(_:)` and their messages.
    private let declaration: CommandDeclaration

    init(_ arguments: [String], declaration: CommandDeclaration) throws(UsageError) {
        self.declaration = declaration
        let options = declaration.options
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
        for argument in declaration.arguments where !argument.isOptional { _ = try operand(argument.name) }
        if positionals.count > declaration.arguments.count {
            let operands = declaration.arguments.map(\.spelling)
            throw UsageError(
                message: operands.isEmpty
                    ? "\(declaration.displayName) takes no arguments, not '\(positionals[0])'"
                    : "\(declaration.displayName) takes \(operands.count == 1 ? "one" : String(operands.count)) "
                        + operands.joined(separator: " "))
        }
        for option in options where option.isRequired { _ = try required(option.name) }
        for option in options where isGiven(option.name) {
            if let required = option.requires, !isGiven(required) {
                throw UsageError(message: "--\(option.name) needs --\(required)")
            }
            if let excluded = option.excludes, isGiven(excluded) {
                throw UsageError(message: "--\(option.name) cannot be combined with --\(excluded)")
            }
            // A declared choice is the only value taken: a typo must not put a receiver in a state nobody
            // asked for (swift-argument-parser refuses a value its `ExpressibleByArgument` type does not parse).
            if !option.choices.isEmpty, let value = values[option.name], !option.choices.contains(value) {
                throw UsageError(
                    message: "option '--\(option.name)' takes \(option.choices.joined(separator: "|")), not '\(value)'")
            }
        }
    }

    private func isGiven(_ name: String) -> Bool { values[name] != nil || flags.contains(name) }

    /// The declared operand `name` (`<log>`): "import needs <log>" when it is missing.
    func operand(_ name: String) throws(UsageError) -> String {
        guard let index = declaration.arguments.firstIndex(where: { $0.name == name }) else {
            throw UsageError(message: "\(declaration.displayName) declares no <\(name)>")
        }
        guard index < positionals.count else {
            let missing = declaration.arguments.dropFirst(positionals.count).map { "<\($0.name)>" }
            throw UsageError(message: "\(declaration.displayName) needs \(missing.joined(separator: " "))")
        }
        return positionals[index]
    }

    /// The declared optional operand `name`, or nil when it was left out.
    func optionalOperand(_ name: String) -> String? {
        guard let index = declaration.arguments.firstIndex(where: { $0.name == name }), index < positionals.count else {
            return nil
        }
        return positionals[index]
    }

    /// The value of an option declared `isRequired`: "import needs -o <file>" when it is missing.
    func required(_ name: String) throws(UsageError) -> String {
        if let value = values[name] { return value }
        let spelling = declaration.option(name).map { option in
            (option.shortName.map { "-\($0)" } ?? "--\(name)") + (option.valueName.map { " <\($0)>" } ?? "")
        }
        throw UsageError(message: "\(declaration.displayName) needs \(spelling ?? "--\(name)")")
    }

    var wantsHelp: Bool { flags.contains("help") }

    /// `watch`, `receiver sleep`: how messages name the command.
    var commandName: String { declaration.displayName }

    /// The value given on the command line, nil when the option was left out (whatever its default).
    func string(_ name: String) -> String? { values[name] }

    /// The value given, or else the one declared as the option's default.
    func value(_ name: String) -> String? { values[name] ?? declaration.option(name)?.defaultValue }

    /// The value given or declared as the default, read by `read`; a usage error when there is neither, which
    /// only a declaration without its default can cause.
    func defaulted<Value>(
        _ name: String, _ read: (ParsedArguments) throws(UsageError) -> Value?
    ) throws(UsageError) -> Value {
        guard let value = try read(self) else {
            throw UsageError(message: "\(declaration.displayName) declares no default for --\(name)")
        }
        return value
    }

    func positiveInteger(_ name: String) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let value = Int(text), value > 0 else {
            throw UsageError(message: "option '--\(name)' takes a whole number above 0, not '\(text)'")
        }
        return value
    }

    /// A number flag within `range` (whose lower bound is above 0): the range is what the arithmetic behind
    /// the flag survives (a clock rate of 1e20 overflows the service's Int conversions; a speed of 1e-300
    /// never gets anywhere), so a value outside it is a usage error, never a trap or a hang.
    func positiveNumber(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let value = Double(text), range.contains(value) else {
            throw UsageError(
                message: "option '--\(name)' takes a number from \(Self.numberText(range.lowerBound)) to "
                    + "\(Self.numberText(range.upperBound)), not '\(text)'")
        }
        return value
    }

    /// 0.01, 1000, 31536000: a bound as a user types it.
    static func numberText(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }


    /// A declared choice as its type (argument-parser's `ExpressibleByArgument` for a `String` enum), given or
    /// the default.
    func choice<Value: RawRepresentable>(_ name: String, as type: Value.Type) throws(UsageError) -> Value
    where Value.RawValue == String {
        let text = value(name)
        guard let text, let choice = Value(rawValue: text) else {
            let allowed = declaration.option(name)?.choices.joined(separator: "|") ?? ""
            throw UsageError(message: "option '--\(name)' takes \(allowed), not '\(text ?? "")'")
        }
        return choice
    }
}
