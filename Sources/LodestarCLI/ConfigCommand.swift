import Daemon

#if canImport(Glibc)
    import Glibc
#endif

/// `lodestar config validate|show|schema`: checking `lodestar run`'s config file, the configuration it gives
/// with every default written out, and the tables of its keys. Both take `run`'s flags, so they answer for a whole `run` command line.
enum ConfigCommand {
    static let declaration = CommandDeclaration(
        path: ["config"],
        abstract: "check lodestar run's config file, show the configuration it gives and print its schema",
        discussion: """
            lodestar run reads its settings from a JSON config file, /etc/lodestar/lodestar.json unless --config
            names another; every key, its default and range are in docs/config.md. Both subcommands take the
            flags of lodestar run, so they check or show what that command line would run with.
            """,
        subcommands: [validateDeclaration, showDeclaration, schemaDeclaration],
        exitStatuses: ExitStatusDeclaration.union(
            [validateDeclaration, showDeclaration, schemaDeclaration].map(\.exitStatuses)))

    static let validateDeclaration = CommandDeclaration(
        path: ["config", "validate"],
        abstract: "check a config file, its profile and the flags, and say everything wrong",
        discussion: """
            Checks the config file completely: unknown keys, values of the wrong type or out of range, and the
            profile it names (which must load). Prints '<file>: valid' and a summary line, or every problem on
            standard error as '<file>: key.path: what is wrong (allowed: ...)'; a value a flag gave is named by
            the flag instead of the file. The file is the operand, or --config, or /etc/lodestar/lodestar.json.

              lodestar config validate examples/lodestar.json
            """,
        arguments: [ArgumentDeclaration(name: "file", help: "the config file to check (the same as --config FILE)", isOptional: true)],
        options: RunOptions.declarations,
        exitStatuses: .readingAFile(
            success: "valid", noInput: "the config file does not exist or cannot be read (a directory)",
            notValid: .configNotValid),
        body: validate(_:context:))

    static let showDeclaration = CommandDeclaration(
        path: ["config", "show"],
        abstract: "print the configuration lodestar run would use, every default written out",
        discussion: """
            Prints the configuration the config file and the flags give, as a complete config file: every key
            with its value, defaults written out, in the order of docs/config.md. Without a config file at the
            default path it prints the defaults (and says so on standard error).

              lodestar config show --gpsd pi.local:2947 --stdout jsonl
            """,
        options: RunOptions.declarations,
        exitStatuses: .readingAFile(
            success: "ok", noInput: "the config file named by --config does not exist or cannot be read",
            notValid: .configNotValid),
        body: show(_:context:))

    static let schemaDeclaration = CommandDeclaration.schema(
        group: "config",
        abstract: "print the tables of every key (type, default, allowed values) as Markdown",
        discussion: """
            Prints the tables of every key a config file may hold, as Markdown: its key path, type, default, the
            values allowed and what it does. docs/config.md holds these tables between its 'generated' markers
            (scripts/update-profiles-doc puts them there).
            """,
        markdown: { DaemonConfigurationSchema.markdown })

    static func validate(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        var source = try RunConfigurationSource(parsed, context: context)
        source.shouldStop = context.shouldStop
        if let file = parsed.optionalOperand("file") {
            if parsed.string("config") != nil {
                throw UsageError(message: "config validate takes the file as <file> or --config, not both")
            }
            source.file = file
        }
        // Checking a file that is not there is an error even at the default path.
        source.usesDefaultFile = false
        switch source.load() {
        case .success(let loaded):
            let text = "\(source.file): valid\n\(loaded.configuration.summary)\n"
            return write(text, context: context) ? .success : .ioError
        case .failure(let error):
            return RunOptions.report(error, command: "config validate", context: context)
        }
    }

    static func show(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        switch try RunOptions.configuration(parsed, context: context, command: "config show") {
        case .success(let loaded):
            return write(loaded.configuration.jsonText, context: context) ? .success : .ioError
        case .failure(let failure):
            return failure.code
        }
    }

    /// The reader going away (`| head`) is not a failure.
    private static func write(_ text: String, context: CommandContext) -> Bool {
        context.writeOutput(text, name: "lodestar config")
    }
}
