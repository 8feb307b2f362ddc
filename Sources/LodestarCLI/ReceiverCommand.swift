import Capture
import GPIOLines
import GPSD
import Lodestar
import Policy
import Receivers
import SystemInterface

/// `lodestar receiver identify|sleep|wake|test`: receiver power control by hand, to find out what a new board
/// really does (hardware.md, "Bring-up").
enum ReceiverCommand {
    static let commonOptions: [OptionDeclaration] =
        GPSDAddressOption.declarations(oldSpellings: true) + [
            .value("device", "path", help: "the receiver's device", defaultDescription: "the first device gpsd has"),
            .value(
                "model", "name", choices: ReceiverModel.builtIn.map(\.name),
                help: "the receiver model whose times bound the waits", default: ReceiverModel.genericNMEA.name),
            .value(
                "mechanism", "name", choices: PowerControl.allCases.map(\.rawValue),
                help: "how to power it down and up",
                defaultDescription: "from gpsd's identification, or the switch given"),
            ConnectionOption.declaration(help: "how it is wired; auto reads it from the device name"),
            PowerSwitchOption.declaration(
                help: "a switch on the receiver's supply; usb-port alone is the port --device is on"),
            .value("timeout", "seconds", help: "how long to wait for each effect", default: "90"),
            .deprecated("gpio-chip", "name", replacement: "--power-switch gpio:CHIP:LINE"),
            .deprecated("gpio-line", "n", replacement: "--power-switch gpio:CHIP:LINE"),
            .deprecated("active-low", nil, replacement: "--power-switch gpio:CHIP:LINE:active-low"),
            .deprecated("usb-port", "hub:port", replacement: "--power-switch usb-port:HUB:PORT"),
        ]

    static let exitStatuses: [ExitStatusDeclaration] = [
        ExitStatusDeclaration(.success, "done, and the receiver did what was asked"),
        .usageError,
        ExitStatusDeclaration(
            .unavailable,
            "gpsd unreachable, no receiver identified, or the receiver did not do what was asked (no effect, did not"
                + " wake)"),
        ExitStatusDeclaration(.cannotCreate, "the --model-file could not be written"),
        .outputNotWritten,
    ]

    static let declaration = CommandDeclaration(
        path: ["receiver"],
        abstract: "identify the receiver, put it to sleep, wake it, and time it (bring-up)",
        discussion: """
            Drives receiver power control by hand through gpsd, as a location manager would, and says what the
            receiver really did: went quiet, gave its first fix after so many seconds, or ignored the command.
            gpsd must not run with -b (read-only): it drops every command.
            """,
        subcommands: [identifyDeclaration, sleepDeclaration, wakeDeclaration, testDeclaration],
        exitStatuses: exitStatuses)

    /// A subcommand: `commonOptions` and then its own, and the statuses every subcommand shares.
    private static func subcommand(
        _ name: String, abstract: String, discussion: String, options: [OptionDeclaration] = [],
        body: @escaping @Sendable (ParsedArguments, CommandContext) throws(UsageError) -> ExitCode
    ) -> CommandDeclaration {
        CommandDeclaration(
            path: ["receiver", name], abstract: abstract, discussion: discussion, options: commonOptions + options,
            exitStatuses: exitStatuses, body: body)
    }

    static let identifyDeclaration = subcommand(
        "identify", abstract: "print gpsd's driver, the model, the mechanism and the regimes it reaches",
        discussion: "Waits for gpsd to identify the receiver (it wakes it first, whatever state it was left in).",
        body: identify(_:context:))

    static let sleepDeclaration = subcommand(
        "sleep", abstract: "put the receiver down and say how long it took to go quiet",
        discussion: """
            Leaves it down when the command ends; gpsd closes the device a minute later, and a gpsd that opens it
            again probes it, which wakes most receivers ('lodestar receiver wake' then times the wake).
            """,
        options: [.value("regime", "name", choices: ["standby", "off"], help: "how far down", default: "standby")],
        body: sleep(_:context:))

    static let wakeDeclaration = subcommand(
        "wake", abstract: "wake the receiver and time its first fix",
        discussion: "Wakes it whatever state it was left in and times the first fix after the wake.",
        body: wake(_:context:))

    static let testDeclaration = subcommand(
        "test", abstract: "cycle the receiver down and up and print each time to first fix",
        discussion: """
            Each cycle puts the receiver in standby (or off where standby is out of reach) for --down seconds
            and wakes it: a hot start. With --warm-down S, as many cycles again stay down S seconds, longer than
            the receiver's hot window (hours for most), for warm starts. Prints each time to first fix and their
            median; --model-file writes a receiver-model file with them (docs/power-control.md).
            """,
        options: [
            .value("cycles", "n", help: "how many cycles", default: "3"),
            .value("down", "seconds", help: "how long each hot cycle stays down", default: "10"),
            .value("warm-down", "seconds", help: "also run warm cycles, each down this long"),
            .value("model-file", "file", help: "write the model with the measured times to this file"),
        ],
        body: test(_:context:))

    // MARK: - Commands

    static func identify(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let (bench, timeout) = try open(parsed, context: context)
        defer { bench.close() }
        guard identified(bench, timeout: timeout, context: context) else { return .unavailable }
        let offered = bench.offered.map(regimeList) ?? "continuous"
        var lines: [String] = []
        if let identity = bench.identity {
            lines.append("device: \(identity.path)")
            lines.append("driver: \(identity.driver)")
            if let subtype = identity.subtype { lines.append("subtype: \(subtype)") }
            if let subtype1 = identity.subtype1 { lines.append("subtype1: \(subtype1)") }
            let identification = ReceiverIdentification(identity)
            lines.append(modelLine(identification, given: try model(parsed)))
            let connection = ConnectionOption.given(parsed) ?? ReceiverConnection(devicePath: identity.path)
            lines.append("connection: \(connection.rawValue)")
            let commands = identification.commands.map(\.rawValue).sorted()
            lines.append("commands: \(commands.isEmpty ? "none" : commands.joined(separator: ", "))")
        }
        lines.append("regimes reachable: \(offered)")
        return write(lines, context: context)
    }

    /// The model the waits use, as the log names it: the one identified, else `given` (--model, generic-nmea
    /// by default) with the note that none is built in for this receiver.
    static func modelLine(_ identification: ReceiverIdentification, given: ReceiverModel) -> String {
        if let model = identification.model { return "model: \(model.name) (\(identification.summary))" }
        return "model: \(given.name), none built in for this receiver (\(identification.summary))"
    }

    static func sleep(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let regime = try parsed.choice("regime", as: ReceiverRegime.self)
        let (bench, timeout) = try open(parsed, context: context)
        defer { bench.close() }
        guard identified(bench, timeout: timeout, context: context) else { return .unavailable }
        // The wake at start must be over before the way down is timed.
        _ = bench.setRegime(.continuous, timeout: timeout)
        let seen = bench.setRegime(regime, timeout: timeout)
        if let quiet = seen.events.last(where: { $0.event.kind == .quiet })?.event {
            return write(["\(quiet.regime?.rawValue ?? regime.rawValue): quiet after \(seconds(quiet.seconds))"], context: context)
        }
        // Power control gives up on a command it sees no effect of long before --timeout: say what it saw.
        if let noEffect = seen.events.last(where: { $0.event.kind == .noEffect })?.event {
            context.say(
                "lodestar receiver sleep: the receiver did not go quiet: it kept running "
                    + "\(seconds(noEffect.seconds)) after the \(regime.rawValue) command, and power control gave up")
        } else {
            context.say("lodestar receiver sleep: the receiver did not go quiet within \(Int(timeout)) s")
        }
        return .unavailable
    }

    static func wake(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let (bench, timeout) = try open(parsed, context: context)
        defer { bench.close() }
        let start = bench.now
        guard identified(bench, timeout: timeout, context: context) else { return .unavailable }
        let seen = bench.setRegime(.continuous, timeout: timeout)
        if let first = seen.events.last(where: { $0.event.kind == .firstFixAfterWake })?.event {
            return write(["first fix \(seconds(first.seconds)) after the wake"], context: context)
        }
        if let at = seen.firstFixAt {
            return write(["running: a fix \(seconds(at - start)) after connecting"], context: context)
        }
        context.say("lodestar receiver wake: no fix within \(Int(timeout)) s")
        return .unavailable
    }

    static func test(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let cycles = try parsed.defaulted("cycles") { p throws(UsageError) in try p.positiveInteger("cycles") }
        let down = try parsed.defaulted("down") { p throws(UsageError) in try p.positiveNumber("down", in: waitRange) }
        let warmDown = try parsed.positiveNumber("warm-down", in: waitRange)
        let (bench, timeout) = try open(parsed, context: context)
        defer { bench.close() }
        guard identified(bench, timeout: timeout, context: context) else { return .unavailable }
        _ = bench.setRegime(.continuous, timeout: timeout)
        let offered = bench.offered ?? [.continuous]
        guard let way = [ReceiverRegime.standby, .off].first(where: offered.contains) else {
            context.say(
                "lodestar receiver test: power control reaches no regime below running for this receiver"
                    + " (reachable: \(regimeList(offered))); give --mechanism with a switch")
            return .unavailable
        }
        var hot: [Double] = []
        var warm: [Double] = []
        var runs: [(kind: String, down: Double)] = Array(repeating: ("hot", down), count: cycles)
        if let warmDown { runs += Array(repeating: ("warm", warmDown), count: cycles) }
        for (index, run) in runs.enumerated() {
            guard !context.shouldStop() else { break }
            let asleep = bench.setRegime(way, timeout: timeout)
            guard asleep.events.contains(where: { $0.event.kind == .quiet }) else {
                context.say("lodestar receiver test: cycle \(index + 1): the receiver did not go quiet")
                return .unavailable
            }
            let until = bench.now + run.down
            while bench.now < until, !context.shouldStop() { sleepSeconds(min(0.1, until - bench.now)) }
            let awake = bench.setRegime(.continuous, timeout: timeout)
            guard let first = awake.events.last(where: { $0.event.kind == .firstFixAfterWake })?.event.seconds else {
                context.say("lodestar receiver test: cycle \(index + 1): no first fix after the wake")
                return .unavailable
            }
            if run.kind == "hot" { hot.append(first) } else { warm.append(first) }
            guard write(["cycle \(index + 1): \(run.kind), down \(seconds(run.down)) in \(way.rawValue), first fix after \(seconds(first))"], context: context) == .success else {
                return .ioError
            }
        }
        var summary: [String] = []
        if let median = median(hot) { summary.append("hot: median \(seconds(median)) over \(hot.count)") }
        if let median = median(warm) { summary.append("warm: median \(seconds(median)) over \(warm.count)") }
        guard write(summary, context: context) == .success else { return .ioError }
        if let path = parsed.string("model-file") {
            let identified = bench.identity.map { ReceiverIdentification($0).model } ?? nil
            let given = try Self.model(parsed)
            var model = parsed.string("model") != nil ? given : identified ?? given
            let measuredOn = "measured by lodestar receiver test"
            if let median = median(hot) {
                model.timeToFirstFix.hot = (median * 10).rounded() / 10
                model.sources["timeToFirstFix.hot"] = "\(measuredOn), median of \(hot.count)"
            }
            if let median = median(warm) {
                model.timeToFirstFix.warm = (median * 10).rounded() / 10
                model.sources["timeToFirstFix.warm"] = "\(measuredOn), median of \(warm.count)"
            }
            // A complete profile: usable as it is with --profile FILE, or its receiver section copied into one.
            var profile = Profile(
                name: "\(model.name)-measured",
                description: "\(model.name) with the times to first fix \(measuredOn)")
            profile.receiver = model
            do throws(SystemError) {
                let writer = try CaptureFileWriter(path: path, replacing: true)
                try writer.write(Array(profile.jsonText.utf8))
                try writer.close()
            } catch {
                context.say("lodestar receiver test: cannot write \(path): \(error.reason)")
                return .cannotCreate
            }
            context.say("lodestar receiver test: wrote \(path)")
        }
        return .success
    }

    // MARK: - Helpers

    private static func open(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError)
        -> (ReceiverBench, Double)
    {
        let timeout = try parsed.defaulted("timeout") { p throws(UsageError) in
            try p.positiveNumber("timeout", in: waitRange)
        }
        var setup = ReceiverPowerSetup()
        setup.mechanism = parsed.string("mechanism").flatMap(PowerControl.init(rawValue:))
        setup.connection = ConnectionOption.given(parsed)
        let choice = try powerSwitch(parsed, context: context)
        if case .usbPort(nil, nil)? = choice, parsed.string("device") == nil {
            throw UsageError(
                message: "--power-switch usb-port needs --device, the tty whose port it is, or usb-port:HUB:PORT")
        }
        do throws(PowerSwitchError) {
            switch choice {
            case nil, .none?: break
            case .gpio(let chip, let line, let activeLow)?:
                setup.powerSwitch = try GPIOEnableLine(chip: chip, line: .offset(line), activeLow: activeLow)
            case .usbPort(let hub?, let port?)?:
                setup.powerSwitch = try USBPortPowerSwitch(hub: hub, port: port)
            case .usbPort?:
                setup.powerSwitch = try USBPortPowerSwitch(device: parsed.string("device") ?? "")
            }
        } catch {
            throw UsageError(message: "\(error)")
        }
        let gpsd = try GPSDAddressOption.address(parsed, context: context)
        let bench = ReceiverBench(
            host: gpsd.host, port: gpsd.port, device: parsed.string("device"), model: try model(parsed),
            power: setup, shouldStop: context.shouldStop)
        bench.onEvent = { event in context.say("lodestar receiver: \(event.kind.rawValue): \(event.detail)") }
        return (bench, timeout)
    }

    /// Waits and cycles stay between a tenth of a second and a day.
    static let waitRange = 0.1...86_400.0

    /// --model, or its default.
    private static func model(_ parsed: ParsedArguments) throws(UsageError) -> ReceiverModel {
        try parsed.defaulted("model") { p in p.value("model").flatMap(ReceiverModel.named) }
    }

    /// --power-switch, or the old --gpio-chip/--gpio-line/--active-low/--usb-port, taken until the next
    /// release with a warning.
    private static func powerSwitch(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError)
        -> PowerSwitchOption.Choice?
    {
        let old = ["gpio-chip", "gpio-line", "usb-port"].filter { parsed.string($0) != nil }
            + (parsed.flags.contains("active-low") ? ["active-low"] : [])
        guard !old.isEmpty else { return try PowerSwitchOption.given(parsed) }
        guard parsed.string("power-switch") == nil else {
            throw UsageError(message: "--power-switch cannot be combined with its old spellings --\(old[0])")
        }
        let spelled: String
        if let port = parsed.string("usb-port") {
            spelled = "usb-port:\(port)"
        } else {
            guard let chip = parsed.string("gpio-chip"), let line = parsed.string("gpio-line") else {
                throw UsageError(message: "--gpio-chip needs --gpio-line with the line's offset")
            }
            spelled = "gpio:\(chip):\(line)" + (parsed.flags.contains("active-low") ? ":active-low" : "")
        }
        context.say(
            "lodestar \(parsed.commandName): --\(old.joined(separator: ", --")) deprecated and taken until the next "
                + "release; use --power-switch \(spelled)")
        return try PowerSwitchOption.parse(spelled)
    }

    private static func identified(_ bench: ReceiverBench, timeout: Double, context: CommandContext) -> Bool {
        let seen = bench.identify(timeout: timeout)
        if seen.events.contains(where: { [.receiverIdentified, .receiverUnknown].contains($0.event.kind) }) {
            return true
        }
        context.say(
            "lodestar receiver: gpsd identified no receiver within \(Int(timeout)) s (is gpsd running, with the"
                + " receiver's device, and is the receiver talking?)")
        return false
    }

    private static func write(_ lines: [String], context: CommandContext) -> ExitCode {
        guard !lines.isEmpty else { return .success }
        return context.writeOutput(lines.joined(separator: "\n") + "\n", name: "lodestar receiver") ? .success : .ioError
    }

    private static func regimeList(_ regimes: Set<ReceiverRegime>) -> String {
        ReceiverRegime.allCases.reversed().filter(regimes.contains).map(\.rawValue).joined(separator: ", ")
    }

    private static func seconds(_ value: Double?) -> String {
        guard let value else { return "? s" }
        return TextLine.fixed(value, decimals: 1, width: 1) + " s"
    }

    private static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
