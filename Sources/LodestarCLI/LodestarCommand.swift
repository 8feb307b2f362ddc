/// The `lodestar` command: argument dispatch, help and exit codes. The executable's `main.swift` only calls
/// `main(arguments:context:)`, so tests run commands in-process.
public enum LodestarCommand {
    public static let version = "0.1.0"

    /// `lodestar` itself: its subcommands are what it dispatches to.
    static let declaration: CommandDeclaration = CommandDeclaration(
        path: [],
        abstract: "talk to a GPS receiver through gpsd",
        discussion: """
            Lodestar talks to a GPS receiver through gpsd and decides, to save power, when the receiver runs and \
            which fixes reach the application. 'lodestar run' is the service (lodestar.service), configured by \
            /etc/lodestar/lodestar.json; the other commands watch, record, replay and evaluate, and bring a \
            receiver up.
            """,
        options: [
            .flag("version", help: "print the version"),
            .flag(
                "generate-manual",
                help: "print the manual page lodestar(1) in roff, generated from these declarations, as --help is"),
        ],
        subcommands: [
            WatchCommand.declaration, DemoCommand.declaration, RecordCommand.declaration,
            ImportCommand.declaration, ReplayCommand.declaration, ProfilesCommand.declaration,
            ReceiverCommand.declaration, RunCommand.declaration, StatusCommand.declaration, ConfigCommand.declaration,
            StoreCommand.declaration,
        ],
        exitStatuses: ExitCode.allCases.map { ExitStatusDeclaration($0, $0.summary) },
        // Runs only for its own options, `--version` and `--generate-manual`.
        body: { parsed, context in
            let text =
                parsed.flags.contains("generate-manual")
                ? ManualPage.render(declaration, version: version) : "lodestar \(version)\n"
            return context.writeOutput(text, name: "lodestar") ? .success : .ioError
        })

    /// Runs one command line (without the program name) and returns its exit status.
    public static func main(arguments: [String], context: CommandContext) -> Int32 {
        declaration.run(arguments, context: context).rawValue
    }
}
