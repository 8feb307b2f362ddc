/// sysexits(3) codes, as swift-argument-parser and gpsd's own tools use them. Documented in the README.
public enum ExitCode: Int32, Sendable {
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
    /// EX_CONFIG: a configuration (profile) error.
    case config = 78
}
