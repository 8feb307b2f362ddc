import Daemon
import GPIOLines
import Lodestar
import SystemInterface
import Receivers

/// `lodestar run`: the service. Reads its config (docs/config.md), runs the profile against gpsd with the
/// receiver powered, writes the track to the outputs, publishes its status, and lives until SIGTERM/SIGINT.
enum RunCommand {
    /// --clock-rate: the service's clock times this (its waits, its Int conversions of the receiver's time);
    /// above 1000 it only spins and floods the log, and 1e20 overflowed.
    static let clockRateRange = 0.01...1000.0

    static let declaration = CommandDeclaration(
        path: ["run"],
        abstract: "the service: run a profile against gpsd, power the receiver, write the track",
        discussion: """
            Reads the config file (by default \(DaemonConfiguration.defaultPath); without it the defaults, see
            docs/config.md), connects to gpsd, lets power control identify the receiver, and runs the profile
            through a location manager that powers the receiver with real commands. Delivered locations go to
            the outputs configured: a jsonl file and daily GPX files (rotated), stdout, and a Unix socket any
            local program can read them from. Every flag sets one config key.
            SIGHUP reads the config and profile again; if the new config is invalid, the running one stays and
            the problems are logged. SIGTERM or SIGINT puts the receiver in the profile's exit regime, flushes
            the outputs and exits 0. The state directory keeps the last location and the counters across
            restarts; the runtime directory holds status.json, which 'lodestar status' reads. Under systemd
            (Type=notify) it sends READY=1, STATUS=… and watchdog pings over NOTIFY_SOCKET.
            """,
        options: RunOptions.declarations + [
            .value(
                "clock-rate", "factor",
                help: "run the policy's clock this many times faster than real time (for a receiver emulator "
                    + "played faster, as the demo and the tests do; 1 for a real receiver; 0.01 to 1000)",
                default: "1")
        ],
        exitStatuses: [
            ExitStatusDeclaration(
                .success, "stopped by SIGTERM or SIGINT: the receiver in its exit regime, the outputs flushed"),
            .usageError,
            ExitStatusDeclaration(.noInput, "the config file given with --config is missing or cannot be read"),
            ExitStatusDeclaration(.unavailable, "the configured power switch (GPIO line, USB port) or motion source (GPIO line, IIO accelerometer) cannot be used"),
            ExitStatusDeclaration(.cannotCreate, "the state or runtime directory cannot be made or written"),
            ExitStatusDeclaration(
                .config, "the config or its profile is not valid (or larger than 1 MiB): every problem with its key path"),
            ExitStatusDeclaration(
                .ioError, "--help could not be written (a stdout output that fails while running is logged instead)"),
            ExitStatusDeclaration(.interrupted, "SIGINT while the config (a FIFO or device) was still being read"),
            ExitStatusDeclaration(.terminated, "SIGTERM while the config (a FIFO or device) was still being read"),
        ],
        body: run(_:context:))

    static func run(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let clockRate = try parsed.defaulted("clock-rate") { p throws(UsageError) in try p.positiveNumber("clock-rate", in: clockRateRange) }
        var loaded: LoadedRunConfiguration
        switch try RunOptions.configuration(parsed, context: context, command: "run") {
        case .success(let configuration): loaded = configuration
        case .failure(let failure): return failure.code
        }
        let setup: DaemonSetup
        switch makeSetup(loaded, clockRate: clockRate) {
        case .success(let made): setup = made
        case .failure(let problem):
            context.say("lodestar run: \(problem)")
            return .unavailable
        }
        let format = LogLineFormat.forStandardError()
        let logger = Logger(label: "lodestar run", logLevel: loaded.configuration.logLevel) { message in
            context.say(format.line(message))
        }
        HangupSignal.install()
        ProcessMemory.keepLargeBlocksMapped()
        var current = setup
        let service = DaemonService(
            setup: setup,
            hooks: DaemonService.Hooks(
                logger: logger,
                makeOutputs: { configuration in
                    DaemonOutputs.open(
                        configuration,
                        standardOutput: { text throws(OutputFailure) in
                            switch context.standardOutput.write(text) {
                            case .written: break
                            case .readerGone: throw OutputFailure(path: "stdout", reason: "the reader went away")
                            case .failed(let code):
                                throw OutputFailure(path: "stdout", reason: CommandContext.reason(code))
                            }
                        }, logger: logger)
                },
                shouldStop: context.shouldStop,
                wakeUp: StopRequest.wakeUp,
                takeReload: {
                    guard HangupSignal.take() else { return nil }
                    switch loaded.reloaded() {
                    case .failure(let error):
                        return .rejected(error.lines)
                    case .success(let new):
                        switch makeSetup(new, clockRate: clockRate, keeping: current) {
                        case .failure(let problem): return .rejected([problem.description])
                        case .success(let made):
                            loaded = new
                            current = made
                            return .accepted(made)
                        }
                    }
                }))
        switch service.runUntilStopped() {
        case .stopped:
            return .success
        case .cannotCreate(let problem):
            context.say("lodestar run: \(problem)")
            return .cannotCreate
        }
    }

    /// The setup a config asks for, its power switch and motion line opened. On a reload, `old`'s switch and line
    /// are kept while their settings are unchanged: a GPIO line cannot be requested twice.
    private static func makeSetup(
        _ loaded: LoadedRunConfiguration, clockRate: Double, keeping old: DaemonSetup? = nil
    ) -> Result<DaemonSetup, SetupFailure> {
        let configuration = loaded.configuration
        let power: ReceiverPowerSetup?
        if let old, configuration.receiver == old.configuration.receiver,
            configuration.gpsd.device == old.configuration.gpsd.device
        {
            power = old.power
        } else {
            do throws(PowerSwitchError) {
                power = try DaemonSetup.power(for: configuration)
            } catch {
                return .failure(SetupFailure(description: error.description))
            }
        }
        var motion: MotionSetup?
        if let old, let settings = configuration.motion, let kept = old.motion,
            let was = old.configuration.motion, (settings.chip, settings.line, settings.activeLow) == (was.chip, was.line, was.activeLow)
        {
            motion = MotionSetup(source: kept.source, debounce: settings.debounce, ignition: settings.ignition)
        } else {
            do throws(MotionSourceError) {
                motion = try DaemonSetup.motion(for: configuration)
            } catch {
                return .failure(SetupFailure(description: error.description))
            }
        }
        return .success(
            DaemonSetup(
                configuration: configuration, profile: loaded.profile, power: power, motion: motion, clockRate: clockRate))
    }

    /// A power switch or motion line that cannot be used: the message names it and why.
    struct SetupFailure: Error, CustomStringConvertible {
        var description: String
    }
}
