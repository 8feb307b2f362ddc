import GPSD

/// One command of `lodestar`, declared once: the parser accepts exactly its options and `--help` is generated
/// from it, so the two cannot drift apart (swift-argument-parser's idea, by hand).
struct CommandDeclaration: Sendable {
    /// The words after `lodestar`: `["watch"]`, `["profiles", "show"]`; empty for `lodestar` itself.
    var path: [String]
    /// One line for the parent's SUBCOMMANDS list.
    var abstract: String
    /// Paragraphs separated by blank lines, rewrapped to the help's width; a line that starts with a space is
    /// kept as written (examples).
    var discussion: String
    var arguments: [ArgumentDeclaration] = []
    var options: [OptionDeclaration] = []
    var subcommands: [CommandDeclaration] = []
    /// Every status the command can return, with what it means for this command.
    var exitStatuses: [ExitStatusDeclaration]
    /// What the command does once `run` has parsed and checked its arguments: it reads its options and
    /// works. A usage error it throws is answered as one (exit 64). A group's body runs only for its own
    /// options given without a subcommand (`lodestar --version`); nil when it has none.
    var body: (@Sendable (ParsedArguments, CommandContext) throws(UsageError) -> ExitCode)?

    var name: String { path.last ?? "lodestar" }

    /// `lodestar watch`, `lodestar profiles show`.
    var commandLine: String { (["lodestar"] + path).joined(separator: " ") }

    /// How usage errors name the command: `import`, `profiles show`, `lodestar`.
    var displayName: String { path.isEmpty ? "lodestar" : path.joined(separator: " ") }

    /// Parses `arguments` against the declared operands and options; see `ParsedArguments`.
    func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        try ParsedArguments(arguments, declaration: self)
    }

    func option(_ name: String) -> OptionDeclaration? { options.first { $0.name == name } }

    /// Runs the command on the arguments after its path, the same way for every command: a group hands
    /// them to the subcommand its first word names; otherwise `--help` is answered with the generated help,
    /// the operands and options are checked against the declaration, and `body` runs. Every usage error
    /// goes to stderr with the help, exit 64.
    func run(_ arguments: [String], context: CommandContext) -> ExitCode {
        if !subcommands.isEmpty, let word = arguments.first, !word.hasPrefix("-"), word != "help" {
            guard let subcommand = subcommands.first(where: { $0.name == word }) else {
                let group = (path + ["subcommand"]).joined(separator: " ")
                return usageFailure(UsageError(message: "unknown \(group) '\(word)'"), context: context)
            }
            return subcommand.run(Array(arguments.dropFirst()), context: context)
        }
        do throws(UsageError) {
            // A group takes `help` for `--help` (`lodestar help`).
            let parsed = try parse(arguments.first == "help" && !subcommands.isEmpty ? ["--help"] : arguments)
            if parsed.wantsHelp {
                return context.writeOutput(help + "\n", name: (["lodestar"] + path).joined(separator: " "))
                    ? .success : .ioError
            }
            guard let body, subcommands.isEmpty || !arguments.isEmpty else {
                // "list, show, validate or schema"
                var names = subcommands.map(\.name)
                let last = names.popLast() ?? ""
                let list = names.isEmpty ? last : names.joined(separator: ", ") + " or " + last
                throw UsageError(message: "\(displayName) needs a subcommand: \(list)")
            }
            return try body(parsed, context)
        } catch {
            return usageFailure(error, context: context)
        }
    }

    /// A usage error: what was wrong and the help on stderr, exit 64.
    func usageFailure(_ error: UsageError, context: CommandContext) -> ExitCode {
        _ = context.standardError.write("lodestar: \(error.message)\n\n\(help)\n")
        return .usage
    }
}

/// An option: `--name value` (or `--name=value`) when it has a value name, a flag otherwise.
struct OptionDeclaration: Sendable {
    var name: String
    /// A one-letter alias (`-o`), accepted only on its own (not `-o=file`).
    var shortName: Character?
    /// Nil for a flag.
    var valueName: String?
    /// The values it takes, shown in the USAGE line instead of `<valueName>`.
    var choices: [String] = []
    var help: String
    /// The value taken when the option is not given: the typed readers of `ParsedArguments` parse it as they
    /// parse a given one, so a default is written once, here, and the help shows this very text.
    var defaultValue: String?
    /// What happens without the option when that is no value (`the first device gpsd has`): help only.
    var defaultDescription: String?
    /// An old spelling still taken for one release: left out of the USAGE line, its help says what replaces it.
    var isDeprecated = false
    /// Another option this one is meaningless without.
    var requires: String?
    /// An option this one cannot be given with.
    var excludes: String?
    /// Shown without brackets in the USAGE line; the parser refuses the command without it.
    var isRequired = false

    static func value(
        _ name: String, _ valueName: String, short: Character? = nil, choices: [String] = [], help: String,
        default defaultValue: String? = nil, defaultDescription: String? = nil, requires: String? = nil,
        excludes: String? = nil, isRequired: Bool = false
    ) -> OptionDeclaration {
        OptionDeclaration(
            name: name, shortName: short, valueName: valueName, choices: choices, help: help,
            defaultValue: defaultValue, defaultDescription: defaultDescription, requires: requires, excludes: excludes,
            isRequired: isRequired)
    }

    /// An old spelling kept for one release: `replacement` says what to write instead.
    static func deprecated(_ name: String, _ valueName: String?, replacement: String) -> OptionDeclaration {
        OptionDeclaration(
            name: name, valueName: valueName, help: "deprecated, taken until the next release: use \(replacement)",
            isDeprecated: true)
    }

    static func flag(
        _ name: String, help: String, requires: String? = nil, excludes: String? = nil
    ) -> OptionDeclaration {
        OptionDeclaration(name: name, valueName: nil, help: help, requires: requires, excludes: excludes)
    }

    var takesValue: Bool { valueName != nil }
}

struct ArgumentDeclaration: Sendable {
    var name: String
    var help: String
    /// May be left out (only the last operands): shown as `[<name>]`.
    var isOptional = false

    /// `<name>`, or `[<name>]` when it may be left out.
    var spelling: String { isOptional ? "[<\(name)>]" : "<\(name)>" }
}

struct ExitStatusDeclaration: Sendable {
    var code: ExitCode
    var meaning: String

    init(_ code: ExitCode, _ meaning: String) {
        self.code = code
        self.meaning = meaning
    }
}

extension ExitStatusDeclaration {
    static let usageError = ExitStatusDeclaration(.usage, "usage error")
    static let outputNotWritten = ExitStatusDeclaration(.ioError, "the output could not be written")
    static let profileNotValid = ExitStatusDeclaration(.config, "the profile is not valid, or larger than 1 MiB")
    static let configNotValid = ExitStatusDeclaration(.config, "the config is not valid, or larger than 1 MiB")
    /// A FIFO or device given as a config or profile is read until it ends; a stop while it waits.
    static let stoppedReadingInterrupted = ExitStatusDeclaration(.interrupted, "SIGINT while a FIFO or device was read")
    static let stoppedReadingTerminated = ExitStatusDeclaration(.terminated, "SIGTERM while a FIFO or device was read")

    /// Every code of `lists` once, in order, with the meaning the first list gives it (a command group's
    /// statuses from its subcommands').
    static func union(_ lists: [[ExitStatusDeclaration]]) -> [ExitStatusDeclaration] {
        var seen: Set<Int32> = []
        return lists.joined().filter { seen.insert($0.code.rawValue).inserted }.sorted {
            $0.code.rawValue < $1.code.rawValue
        }
    }
}

extension [ExitStatusDeclaration] {
    /// The statuses of a command that reads one profile or config file: `success`, a usage error, the file
    /// not read (`noInput`), the output not written, the file not valid (`notValid`), and a stop while a FIFO
    /// or device given as the file is read.
    static func readingAFile(success: String, noInput: String, notValid: ExitStatusDeclaration) -> Self {
        [
            ExitStatusDeclaration(.success, success), .usageError, ExitStatusDeclaration(.noInput, noInput),
            .outputNotWritten, notValid, .stoppedReadingInterrupted, .stoppedReadingTerminated,
        ]
    }
}

extension CommandDeclaration {
    /// A group's `schema` subcommand: prints `markdown`, the tables a page of docs/ holds between its
    /// generated markers; a failed write is named after the group, as its other subcommands' are.
    static func schema(
        group: String, abstract: String, discussion: String, markdown: @escaping @Sendable () -> String
    ) -> CommandDeclaration {
        CommandDeclaration(
            path: [group, "schema"], abstract: abstract, discussion: discussion,
            exitStatuses: [ExitStatusDeclaration(.success, "ok"), .usageError, .outputNotWritten],
            body: { _, context in context.writeOutput(markdown(), name: "lodestar \(group)") ? .success : .ioError })
    }
}

// MARK: - Help

extension CommandDeclaration {
    /// The width the help is wrapped to.
    static let helpWidth = 100
    /// Where the descriptions in OPTIONS, ARGUMENTS and SUBCOMMANDS start.
    private static let descriptionColumn = 26

    /// The whole `--help` text, without the final newline.
    var help: String {
        var sections = [usageLine]
        if !discussion.isEmpty { sections.append(Self.wrapParagraphs(discussion)) }
        if !arguments.isEmpty {
            sections.append(
                "ARGUMENTS:\n" + arguments.map { Self.row($0.spelling, $0.help) }.joined(separator: "\n"))
        }
        if !subcommands.isEmpty {
            let rows = subcommands.map { subcommand in
                let operands =
                    subcommand.subcommands.isEmpty ? subcommand.arguments.map(\.spelling) : ["<subcommand>"]
                let label = ([subcommand.name] + operands).joined(separator: " ")
                return Self.row(label, subcommand.abstract)
            }
            sections.append("SUBCOMMANDS:\n" + rows.joined(separator: "\n"))
        }
        let helpText =
            subcommands.isEmpty
            ? "show this help" : "show this help ('\(commandLine) <subcommand> --help' for a subcommand's)"
        let optionRows = options.map { Self.row($0.label, $0.fullHelp) } + [Self.row("-h, --help", helpText)]
        sections.append("OPTIONS:\n" + optionRows.joined(separator: "\n"))
        let statusRows = exitStatuses.map { status in
            Self.row(String(status.code.rawValue), status.meaning, labelWidth: 4)
        }
        sections.append("EXIT STATUS:\n" + statusRows.joined(separator: "\n"))
        return sections.joined(separator: "\n\n")
    }

    /// `USAGE: lodestar replay <file> [--speed <n|max>] …`, wrapped under its first option.
    var usageLine: String {
        let head = "USAGE: \(commandLine)"
        var words = arguments.map(\.spelling)
        if !subcommands.isEmpty { words.insert("<subcommand>", at: 0) }
        words += options.filter { $0.requires == nil && !$0.isDeprecated }.map(synopsis)
        if words.isEmpty { return head }
        return Self.wrap(
            words, width: Self.helpWidth, firstPrefix: head + " ", prefix: String(repeating: " ", count: head.count + 1))
    }

    /// One option in the USAGE line, with the options that require it nested inside its brackets.
    private func synopsis(_ option: OptionDeclaration) -> String {
        var text = option.shortName.map { "-\($0)" } ?? "--\(option.name)"
        if let valueName = option.valueName {
            text += " " + (option.choices.isEmpty ? "<\(valueName)>" : option.choices.joined(separator: "|"))
        }
        for dependent in options where dependent.requires == option.name { text += " " + synopsis(dependent) }
        return option.isRequired ? text : "[\(text)]"
    }

    /// A label in the first column and its description wrapped beside it (or under it, when the label is too
    /// long for the column).
    private static func row(_ label: String, _ text: String, labelWidth: Int? = nil) -> String {
        let column = labelWidth.map { $0 + 4 } ?? descriptionColumn
        let indent = String(repeating: " ", count: column)
        let words = text.split(separator: " ").map(String.init)
        let labelled = "  " + label
        if labelled.count + 2 > column {
            return labelled + "\n" + wrap(words, width: helpWidth, firstPrefix: indent, prefix: indent)
        }
        let first = labelled + String(repeating: " ", count: column - labelled.count)
        return wrap(words, width: helpWidth, firstPrefix: first, prefix: indent)
    }

    private static func wrapParagraphs(_ text: String) -> String {
        var lines: [String] = []
        var words: [String] = []
        func flush() {
            if !words.isEmpty { lines.append(wrap(words, width: helpWidth, firstPrefix: "", prefix: "")) }
            words = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty || line.hasPrefix(" ") {
                flush()
                lines.append(String(line))
            } else {
                words += line.split(separator: " ").map(String.init)
            }
        }
        flush()
        return lines.joined(separator: "\n")
    }

    /// Greedy wrapping: as many words on a line as fit in `width`; a longer word gets a line of its own.
    private static func wrap(_ words: [String], width: Int, firstPrefix: String, prefix: String) -> String {
        var lines: [String] = []
        var line = firstPrefix
        var lineHasWord = false
        for word in words {
            if lineHasWord, line.count + 1 + word.count > width {
                lines.append(line)
                line = prefix
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}

extension OptionDeclaration {
    /// `-o, --output <file>`, `--raw`.
    var label: String {
        var text = shortName.map { "-\($0), " } ?? ""
        text += "--\(name)"
        if let valueName { text += " <\(valueName)>" }
        return text
    }

    /// The help with what the table says about default, requirement and exclusion.
    var fullHelp: String {
        var text = help
        if let shown = defaultDescription ?? defaultValue { text += " (default: \(shown))" }
        if let requires { text += " (needs --\(requires))" }
        if let excludes { text += " (not with --\(excludes))" }
        return text
    }
}
