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
            ReceiverCommand.declaration, RunCommand.declaration, StatusCommand.declaration, ConfigCommand.declaration,
            StoreCommand.declaration,
        ],
        exitStatuses: ExitCode.allCases.map { ExitStatusDeclaration($0, $0.summary) },
        // Runs only for `--version`, the one option of its own.
        body: { _, context in
            context.writeOutput("lodestar \(version)\n", name: "lodestar") ? .success : .ioError
        })

    /// Runs one command line (without the program name) and returns its exit status.
    public static func main(arguments: [String], context: CommandContext) -> Int32 {
        declaration.run(arguments, context: context).rawValue
    }
}
