/// The `lodestar` command: argument dispatch, help and exit codes. The executable's `main.swift` only calls
/// `main(arguments:context:)`, so tests run commands in-process.
public enum LodestarCommand {
    public static let version = "0.1.0"

    static let usage = """
        USAGE: lodestar <subcommand> [options]

        Lodestar talks to a GPS receiver through gpsd and prints what it hears.

        SUBCOMMANDS:
          watch       print every valid fix from gpsd as it arrives
          demo        replay a bundled real capture through a private gpsd and watch it (no receiver needed)
          record      record a gpsd session to a capture file
          import      turn a raw NMEA/UBX log into a capture file
          replay      replay a capture or raw log and print its locations
          profiles    list, show and validate power-policy profiles (list|show <name>|validate <file>|schema)

        OPTIONS:
          -h, --help  show this help ('lodestar <subcommand> --help' for a subcommand's)
          --version   print the version

        EXIT STATUS: 0 ok, 64 usage, 65 bad data, 66 missing input, 69 gpsd unavailable, 70 internal error,
                     73 output file exists, 74 output error, 78 configuration error.
        """

    /// Runs one command line (without the program name) and returns its exit status.
    public static func main(arguments: [String], context: CommandContext) -> Int32 {
        guard let subcommand = arguments.first else {
            _ = context.standardError.write(usage + "\n")
            return ExitCode.usage.rawValue
        }
        let rest = Array(arguments.dropFirst())
        let code: ExitCode
        switch subcommand {
        case "watch":
            code = WatchCommand.run(rest, context: context)
        case "demo":
            code = DemoCommand.run(rest, context: context)
        case "replay":
            code = ReplayCommand.run(rest, context: context)
        case "import":
            code = ImportCommand.run(rest, context: context)
        case "record":
            code = RecordCommand.run(rest, context: context)
        case "profiles":
            code = ProfilesCommand.run(rest, context: context)
        case "-h", "--help", "help":
            _ = context.standardOutput.write(usage + "\n")
            code = .success
        case "--version":
            _ = context.standardOutput.write("lodestar \(version)\n")
            code = .success
        default:
            code = usageFailure(UsageError(message: "unknown subcommand '\(subcommand)'"), usage: usage, context: context)
        }
        return code.rawValue
    }

    static func usageFailure(_ error: UsageError, usage: String, context: CommandContext) -> ExitCode {
        _ = context.standardError.write("lodestar: \(error.message)\n\n\(usage)\n")
        return .usage
    }
}
