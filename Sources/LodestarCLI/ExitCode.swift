/// sysexits(3) codes, as swift-argument-parser and gpsd's own tools use them. Documented in docs/cli.md; each
/// command declares which it returns and what they mean for it (`CommandDeclaration.exitStatuses`).
public enum ExitCode: Int32, Sendable, CaseIterable {
    case success = 0
    /// EX_USAGE: unknown option, missing or malformed value.
    case usage = 64
    /// EX_DATAERR: input that cannot be decoded.
    case dataError = 65
    /// EX_NOINPUT: an input file that does not exist or cannot be read.
    case noInput = 66
    /// EX_UNAVAILABLE: gpsd cannot be reached, or a private gpsd cannot be started.
    case unavailable = 69
    /// EX_SOFTWARE: an internal error.
    case software = 70
    /// EX_CANTCREAT: the output file exists (and --force was not given) or cannot be created.
    case cannotCreate = 73
    /// EX_IOERR: writing the output failed (other than the reader going away).
    case ioError = 74
    /// EX_CONFIG: a configuration error (a profile, or the config file of `run`).
    case config = 78
    /// 128 + SIGINT, as a shell reports it: stopped before the result was complete.
    case interrupted = 130
    /// 128 + SIGTERM: stopped before the result was complete.
    case terminated = 143

    /// What the code means for any command (`lodestar --help`).
    var summary: String {
        switch self {
        case .success: "ok"
        case .usage: "usage error: unknown option or subcommand, missing or bad value"
        case .dataError: "bad data: a capture or raw log that cannot be used"
        case .noInput: "missing input: a file or profile that does not exist or cannot be read"
        case .unavailable: "gpsd (or gpsdecode) unavailable"
        case .software: "internal error"
        case .cannotCreate: "the output file exists (without --force) or cannot be created"
        case .ioError: "the output could not be written"
        case .config: "a profile or config file that is not valid"
        case .interrupted: "stopped by SIGINT (Ctrl-C) before the result was complete; what was cut is said"
        case .terminated: "stopped by SIGTERM before the result was complete; what was cut is said"
        }
    }
}
