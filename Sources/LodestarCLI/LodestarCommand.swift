/// The `lodestar` command: argument dispatch, help and exit codes. The executable's `main.swift` only calls
/// `main(arguments:context:)`, so tests run commands in-process.
public enum LodestarCommand {
    public static let version = "0.1.0"

    /// `lodestar` itself: its subcommands are what it dispatches to.
    static let declaration = CommandDeclaration(
        path: [],
        abstract: "talk to a GPS receiver through gpsd",
        discussion: "Lodestar talks to a GPS receiver through gpsd and prints what it hears.",
        options: [.flag("version", help: "print the version")],
        subcommands: [
            WatchCommand.declaration, DemoCommand.declaration, RecordCommand.declaration,
            ImportCommand.declaration, ReplayCommand.declaration, ProfilesCommand.declaration,
        ],
        exitStatuses: ExitCode.allCases.map { ExitStatusDeclaration($0, $0.summary) },
        run: { run($0, context: $1) })

    static var usage: String { declaration.help }

    /// Runs one command line (without the program name) and returns its exit status.
    public static func main(arguments: [String], context: CommandContext) -> Int32 {
        run(arguments, context: context).rawValue
    }

    static func run(_ arguments: [String], context: CommandContext) -> ExitCode {
        guard let subcommand = arguments.first else {
            _ = context.standardError.write(usage + "\n")
            return .usage
        }
        if let declared = declaration.subcommands.first(where: { $0.name == subcommand }) {
            return declared.run(Array(arguments.dropFirst()), context)
        }
        switch subcommand {
        case "-h", "--help", "help":
            _ = context.standardOutput.write(usage + "\n")
            return .success
        case "--version":
            _ = context.standardOutput.write("lodestar \(version)\n")
            return .success
        default:
            return usageFailure(UsageError(message: "unknown subcommand '\(subcommand)'"), usage: usage, context: context)
        }
    }

    static func usageFailure(_ error: UsageError, usage: String, context: CommandContext) -> ExitCode {
        _ = context.standardError.write("lodestar: \(error.message)\n\n\(usage)\n")
        return .usage
    }
}
