import Simulation
import GPSD
import Policy

// Options that mean the same thing in every command that takes them, each declared once with its reading, as
// swift-argument-parser's `OptionGroup` shares a `ParsableArguments` type between commands
// (Sources/ArgumentParser/Parsable Properties/OptionGroup.swift there). A command lists the group's
// declarations among its options and reads the group's value; none spells the option or its syntax itself.

/// Where gpsd listens, in gpsd's own `host:port` form (gpsd(8), gpspipe(1)): `--gpsd HOST[:PORT]`, an IPv6
/// address in brackets (`[::1]:2947`). `watch`, `record` and `receiver` still take their old `--host` and
/// `--port` for one release, with a warning.
enum GPSDAddressOption {
    static let defaultAddress = GPSDSession.defaultHost + ":" + GPSDSession.defaultPort

    /// `--gpsd`, and the old spellings when `oldSpellings`. `run` passes no default: its config has one.
    static func declarations(
        help: String = "where gpsd listens", default defaultValue: String? = defaultAddress, oldSpellings: Bool
    ) -> [OptionDeclaration] {
        [.value("gpsd", "host[:port]", help: help, default: defaultValue)]
            + (oldSpellings
                ? [
                    .deprecated("host", "host", replacement: "--gpsd HOST[:PORT]"),
                    .deprecated("port", "port", replacement: "--gpsd HOST[:PORT]"),
                ] : [])
    }

    /// What the command line says of the address: the parts given, nil for a part left out (so a config's
    /// own gpsd.host or gpsd.port stays), unchecked beyond their form. `--host`/`--port` are read as `--gpsd`
    /// and warned of on stderr.
    static func given(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> (
        host: String?, port: String?
    ) {
        let oldHost = parsed.string("host")
        let oldPort = parsed.string("port")
        if oldHost != nil || oldPort != nil {
            if parsed.string("gpsd") != nil {
                throw UsageError(message: "--gpsd cannot be combined with its old spellings --host and --port")
            }
            context.say(
                "lodestar \(parsed.commandName): --host and --port are deprecated and taken until the next release; "
                    + "use --gpsd \(oldHost ?? GPSDSession.defaultHost):\(oldPort ?? GPSDSession.defaultPort)")
            return (oldHost, oldPort)
        }
        guard let text = parsed.string("gpsd") else { return (nil, nil) }
        return try hostAndPort(text)
    }

    /// The address to connect to: what was given (its port checked here; `run` leaves that to its config,
    /// which names gpsd.port), the rest from `defaultAddress`.
    static func address(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> (
        host: String, port: String
    ) {
        let given = try given(parsed, context: context)
        return (given.host ?? GPSDSession.defaultHost, try port(given.port ?? GPSDSession.defaultPort))
    }

    /// `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (more than one ':'). An unclosed
    /// or empty bracket, an empty host or port, or a bracket anywhere else is a usage error; whether the host
    /// is a name or an address is checked where it is used (the config's gpsd.host, or the connection).
    static func hostAndPort(_ text: String) throws(UsageError) -> (host: String, port: String?) {
        let malformed = UsageError(
            message: "option '--gpsd' takes HOST[:PORT] (an IPv6 address in brackets: [::1]:2947), not '\(text)'")
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw malformed }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard host.contains(":"), !host.contains("[") else { throw malformed }
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":"), rest.count > 1 else { throw malformed }
            return (host, String(rest.dropFirst()))
        }
        guard !text.isEmpty, !text.contains("["), !text.contains("]") else { throw malformed }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        // More than one ':' is a bare IPv6 address.
        if parts.count == 2 {
            guard !parts[0].isEmpty, !parts[1].isEmpty else { throw malformed }
            return (String(parts[0]), String(parts[1]))
        }
        return (text, nil)
    }

    private static func port(_ text: String) throws(UsageError) -> String {
        guard let value = Int(text), (1...65_535).contains(value) else {
            throw UsageError(message: "option '--gpsd' takes a port from 1 to 65535, not '\(text)'")
        }
        return String(value)
    }
}

/// How the receiver is wired: `--connection auto|usb|uart`. `auto` forces nothing: a live receiver's wiring
/// is read from its device name, a simulated one keeps its profile's `receiver.connection`.
enum ConnectionOption {
    static let choices = ["auto"] + [ReceiverConnection.usb, .uart].map(\.rawValue)

    /// `run` passes no default: its config has one.
    static func declaration(help: String, default defaultValue: String? = "auto") -> OptionDeclaration {
        .value("connection", "kind", choices: choices, help: help, default: defaultValue)
    }

    /// The wiring given, nil for `auto`.
    static func given(_ parsed: ParsedArguments) -> ReceiverConnection? {
        parsed.value("connection").flatMap(ReceiverConnection.init(rawValue:))
    }
}

/// A switch on the receiver's supply: `--power-switch gpio:CHIP:LINE[:active-low]`, `usb-port` (the port the
/// receiver's device is on), `usb-port:HUB:PORT` (that hub's port, as sysfs names it: `1-1:3`) or `none`.
enum PowerSwitchOption {
    enum Choice: Equatable {
        case none
        case gpio(chip: String, line: UInt32, activeLow: Bool)
        /// The hub and port, or nil for the port the receiver's device is on.
        case usbPort(hub: String?, port: Int?)
    }

    static let syntax = "gpio:CHIP:LINE[:active-low], usb-port[:HUB:PORT] or none"

    static func declaration(help: String) -> OptionDeclaration {
        .value("power-switch", "switch", help: "\(syntax): \(help)")
    }

    static func given(_ parsed: ParsedArguments) throws(UsageError) -> Choice? {
        guard let text = parsed.string("power-switch") else { return nil }
        return try parse(text)
    }

    static func parse(_ text: String) throws(UsageError) -> Choice {
        let malformed = UsageError(message: "option '--power-switch' takes \(syntax), not '\(text)'")
        if text == "none" { return Choice.none }
        if text == "usb-port" { return .usbPort(hub: nil, port: nil) }
        if text.hasPrefix("usb-port:") {
            // The hub's name (1-1, 2-1.4) has no ':'; the port number follows the last one.
            let rest = text.dropFirst("usb-port:".count)
            guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), port > 0,
                !rest[..<colon].isEmpty, !rest[..<colon].contains(":")
            else { throw malformed }
            return .usbPort(hub: String(rest[..<colon]), port: port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 || (parts.count == 4 && parts[3] == "active-low"), parts[0] == "gpio",
            !parts[1].isEmpty, let line = UInt32(parts[2])
        else { throw malformed }
        return .gpio(chip: parts[1], line: line, activeLow: parts.count == 4)
    }
}

/// How fast a capture plays: `--speed N|max`, N times the pace it was recorded at, or `max`, as fast as the
/// command can (a replay without pacing; the demo at the top of its range, where its emulator still keeps
/// pace).
enum SpeedOption {
    static func declaration(range: ClosedRange<Double>, default defaultValue: String, help: String)
        -> OptionDeclaration
    {
        .value(
            "speed", "n|max",
            help: "n times the pace it was recorded at (\(ParsedArguments.numberText(range.lowerBound)) to "
                + "\(ParsedArguments.numberText(range.upperBound))), or max: \(help)",
            default: defaultValue)
    }

    /// The factor, or nil for `max`.
    static func factor(_ parsed: ParsedArguments, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        parsed.value("speed") == "max" ? nil : try parsed.positiveNumber("speed", in: range)
    }
}

/// `--board` and `--battery`: the whole system's figures beside the receiver's (replay --evaluate, demo), and
/// `lodestar status`'s board in place of the one the device tree names.
enum BoardOption {
    static let declaration = declaration(default: nil)

    /// `defaultValue`: the board assumed without the option (the demo's closing lines always give the system's
    /// figures); nil, none unless asked.
    static func declaration(default defaultValue: String?) -> OptionDeclaration {
        OptionDeclaration.value(
            "board", "name", choices: BoardModel.builtIn.map(\.name),
            help: """
                also give the whole system's figures: this board's draw at 5 V (docs/policy.md, 'The whole \
                board', says where each figure comes from) with the receiver's, against the same board with the \
                receiver always on
                """, default: defaultValue)
    }
    static let batteryDeclaration = batteryDeclaration(requiresBoard: true)
    /// Watt-hours from a coin cell's to a car battery bank's.
    static let batteryRange = 0.001...1_000_000.0

    /// `requiresBoard`: false where a board is assumed without --board.
    static func batteryDeclaration(requiresBoard: Bool) -> OptionDeclaration {
        OptionDeclaration.value(
            "battery", "Wh", help: "how many hours a battery of this many watt-hours lasts on the board, and always on",
            requires: requiresBoard ? "board" : nil)
    }

    /// The board named and the battery, nil without --board (the declaration's choices are checked by the parser).
    static func given(_ parsed: ParsedArguments, default defaultValue: String? = nil) throws(UsageError) -> (
        board: BoardModel, batteryWh: Double?
    )? {
        guard let name = parsed.string("board") ?? defaultValue else { return nil }
        guard let board = BoardModel.named(name) else { throw UsageError(message: "no board is named '\(name)'") }
        return (board, try parsed.positiveNumber("battery", in: batteryRange))
    }
}
