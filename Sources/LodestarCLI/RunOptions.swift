import Daemon
import JSON
import Lodestar
import SystemInterface

#if canImport(Glibc)
    import Glibc
#endif

/// The flags of `lodestar run` and how they make its configuration: the config file, then each flag as an
/// edit of one key (docs/config.md lists which), checked together by `DaemonConfigurationReader`.
enum RunOptions {
    static let declarations: [OptionDeclaration] = [
        .value(
            "config", "file", help: "the config file (docs/config.md)",
            default: DaemonConfiguration.defaultPath),
        .value(
            "profile", "name|file", help: "the profile: a built-in, a name in profileDirectory, or a file (profile)"),
    ] + GPSDAddressOption.declarations(
        help: "where gpsd listens (gpsd.host, gpsd.port)", default: nil, oldSpellings: false) + [
        .value("device", "path", help: "the receiver as gpsd names it (gpsd.device)"),
        .value("jsonl", "path|none", help: "the jsonl track file, or none (outputs.jsonl)"),
        .value("gpx", "dir|none", help: "the directory of daily GPX files, or none (outputs.gpx)"),
        .value(
            "stdout", "format", choices: DaemonConfiguration.StdoutOutput.Format.allCases.map(\.rawValue),
            help: "also print locations on stdout in this format (outputs.stdout)"),
        .value("socket", "path|none", help: "the Unix socket clients read locations from, or none (outputs.socket)"),
        .value("capture", "path|none", help: "capture the whole run to this file, or none (outputs.capture)"),
        .value("state-dir", "dir", help: "persisted state and relative track paths (stateDirectory)"),
        .value("runtime-dir", "dir", help: "the status file and a relative socket path (runtimeDirectory)"),
        ConnectionOption.declaration(help: "how the receiver is wired (receiver.connection)", default: nil),
        PowerSwitchOption.declaration(
            help: "a switch on the receiver's supply, usb-port without HUB:PORT: the service finds the port "
                + "from gpsd.device (receiver.powerSwitch)"),
        .flag("no-power-control", help: "never command the receiver (receiver.powerControl false)"),
        .value(
            "log-level", "level", choices: Logger.Level.allCases.map(\.rawValue),
            help: "the least a message must matter to be logged (logLevel)"),
        .value("set", "key=value", help: "set one key of the config, VALUE as JSON when it parses, else as text"),
    ]

    /// The flags as edits of the config, in the order above; a later one wins over an earlier one for the
    /// same key. A flag whose value has the wrong form is a usage error.
    static func overrides(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError)
        -> [DaemonConfigurationOverride]
    {
        var result: [DaemonConfigurationOverride] = []
        func add(_ key: String, _ value: JSONValue, _ flag: String) {
            result.append(DaemonConfigurationOverride(keyPath: key, value: value, source: "--" + flag))
        }
        /// `none` turns an output off; anything else is its path and turns it on.
        func output(_ flag: String, _ key: String) {
            guard let text = parsed.string(flag) else { return }
            if text == "none" {
                add(key, .null, flag)
            } else {
                add(key + "." + (key == "outputs.gpx" ? "directory" : "path"), .string(text), flag)
            }
        }
        if let profile = parsed.string("profile") { add("profile", .string(profile), "profile") }
        let gpsd = try GPSDAddressOption.given(parsed, context: context)
        if let host = gpsd.host { add("gpsd.host", .string(host), "gpsd") }
        if let port = gpsd.port { add("gpsd.port", .string(port), "gpsd") }
        if let device = parsed.string("device") { add("gpsd.device", .string(device), "device") }
        output("jsonl", "outputs.jsonl")
        output("gpx", "outputs.gpx")
        if let format = parsed.string("stdout") {
            add("outputs.stdout.format", .string(format), "stdout")
        }
        output("socket", "outputs.socket")
        output("capture", "outputs.capture")
        if let directory = parsed.string("state-dir") { add("stateDirectory", .string(directory), "state-dir") }
        if let directory = parsed.string("runtime-dir") { add("runtimeDirectory", .string(directory), "runtime-dir") }
        if let connection = parsed.string("connection") {
            add("receiver.connection", .string(connection), "connection")
        }
        if let choice = try PowerSwitchOption.given(parsed) {
            add("receiver.powerSwitch", try powerSwitch(choice), "power-switch")
        }
        if parsed.flags.contains("no-power-control") { add("receiver.powerControl", .bool(false), "no-power-control") }
        if let level = parsed.string("log-level") { add("logLevel", .string(level), "log-level") }
        if let assignment = parsed.string("set") {
            guard let override = DaemonConfigurationOverride(assignment: assignment) else {
                throw UsageError(
                    message: "option '--set' takes KEY=VALUE (outputs.jsonl.fsyncInterval=5), not '\(assignment)'")
            }
            result.append(override)
        }
        return result
    }

    /// The switch as the value of `receiver.powerSwitch`, which has no HUB:PORT: the service finds the port
    /// from gpsd.device (Sources/Daemon/DaemonPowerSetup.swift).
    static func powerSwitch(_ choice: PowerSwitchOption.Choice) throws(UsageError) -> JSONValue {
        switch choice {
        case .none: return .null
        case .usbPort(nil, nil): return .object([("type", .string("usbPort"))])
        case .usbPort:
            throw UsageError(
                message: "option '--power-switch' takes usb-port without HUB:PORT in run: the service switches "
                    + "the port gpsd.device is on")
        case .gpio(let chip, let line, let activeLow):
            return .object([
                ("type", .string("gpio")), ("chip", .string(chip)), ("line", .number(Double(line))),
                ("activeLow", .bool(activeLow)),
            ])
        }
    }

    /// The configuration `lodestar run` starts with: `--config FILE` (or the default file) and the flags.
    /// Problems go to stderr as `FILE: key.path: message`; the failure carries the exit status (66 for a
    /// missing or unreadable file, 78 for an invalid config). A flag of the wrong form throws (64).
    static func configuration(
        _ parsed: ParsedArguments, context: CommandContext, command: String = "run"
    ) throws(UsageError) -> Result<LoadedRunConfiguration, RunConfigurationFailure> {
        var source = try RunConfigurationSource(parsed, context: context)
        source.shouldStop = context.shouldStop
        if source.usesDefaultFile, access(source.file, F_OK) != 0 {
            context.say("lodestar \(command): no config file at \(source.file); using the defaults (docs/config.md)")
        }
        switch source.load() {
        case .success(let loaded): return .success(loaded)
        case .failure(let error):
            return .failure(RunConfigurationFailure(code: report(error, command: command, context: context)))
        }
    }

    /// Says every line of `error` on stderr and a closing line; the exit status it calls for.
    @discardableResult
    static func report(_ error: DaemonConfigurationError, command: String, context: CommandContext) -> ExitCode {
        if case .unreadable(let file, _) = error, let code = context.stoppedReading(file, command: command) {
            return code
        }
        for line in error.lines { context.say(line) }
        switch error {
        case .notFound, .unreadable:
            return .noInput
        case .notJSON(let file, _, _, _):
            context.say("lodestar \(command): \(file) is not a valid config")
            return .config
        case .invalid(let file, let problems):
            let count = problems.count
            let what = file.map { "\($0) is not a valid config" } ?? "the config is not valid"
            context.say("lodestar \(command): \(what) (\(count) problem\(count == 1 ? "" : "s"))")
            return .config
        }
    }
}

/// Why `RunOptions.configuration` gave no configuration; the problems were said on stderr.
struct RunConfigurationFailure: Error {
    var code: ExitCode
}

/// Where a configuration comes from: the file and the flags, kept to read again on SIGHUP.
struct RunConfigurationSource: Sendable {
    var file: String
    /// No `--config`: a missing file means the defaults rather than an error.
    var usesDefaultFile: Bool
    var overrides: [DaemonConfigurationOverride]
    /// The command's stop, asked while a config that is a FIFO or device is waited on.
    var shouldStop: @Sendable () -> Bool = { false }

    init(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) {
        file = parsed.value("config") ?? DaemonConfiguration.defaultPath
        usesDefaultFile = parsed.string("config") == nil
        overrides = try RunOptions.overrides(parsed, context: context)
    }

    init(file: String, usesDefaultFile: Bool, overrides: [DaemonConfigurationOverride]) {
        self.file = file
        self.usesDefaultFile = usesDefaultFile
        self.overrides = overrides
    }

    /// Reads the file (or the defaults, when the default file does not exist) with the flags applied. Prints
    /// nothing.
    func load() -> Result<LoadedRunConfiguration, DaemonConfigurationError> {
        do throws(DaemonConfigurationError) {
            let loaded: LoadedDaemonConfiguration
            if usesDefaultFile, access(file, F_OK) != 0 {
                loaded = try DaemonConfigurationReader.defaults(overrides: overrides)
            } else {
                loaded = try DaemonConfigurationReader.read(file: file, overrides: overrides, shouldStop: shouldStop)
            }
            return .success(LoadedRunConfiguration(loaded: loaded, source: self))
        } catch {
            return .failure(error)
        }
    }
}

/// A checked configuration for `lodestar run`, its profile, and how to read it again.
struct LoadedRunConfiguration: Sendable {
    var loaded: LoadedDaemonConfiguration
    var source: RunConfigurationSource

    var configuration: DaemonConfiguration { loaded.configuration }
    var profile: Profile { loaded.profile }
    /// The file read; nil when the default file does not exist and the defaults were used.
    var file: String? { loaded.file }

    /// SIGHUP: the same file and flags read again. Prints nothing and never exits; on failure the caller keeps
    /// this configuration and logs `error.lines`.
    func reloaded() -> Result<LoadedRunConfiguration, DaemonConfigurationError> { source.load() }
}
