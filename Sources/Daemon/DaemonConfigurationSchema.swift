import GPSModel
import JSON
import Lodestar
import Policy
import SystemInterface

// Every key of `lodestar run`'s config (docs/config.md), declared once: its dotted key path, what it holds and
// may be, and what it means. The reader (DaemonConfigurationWalker.swift), the writer
// (DaemonConfigurationWriter.swift) and docs/config.md's tables (DaemonConfigurationDocument.swift) all walk
// `DaemonConfigurationSchema.tree`, as a profile's do `ProfileSchema.tree` (Sources/Lodestar/Profiles/ProfileSchema.swift).

/// One key of the config file.
struct DaemonConfigurationKey {
    typealias Path<Value> = WritableKeyPath<DaemonConfiguration, Value>

    enum Kind {
        /// A string; `required`: a section's key that has no default (an uploader's address).
        case text(Path<String>, TextKind, required: Bool)
        /// A string, or null meaning `null`.
        case optionalText(Path<String?>, TextKind, null: String)
        case flag(Path<Bool>)
        case number(Path<Double>, NumberRange)
        /// A whole number, or null meaning `null` (nil: null is allowed but the messages do not say it).
        case optionalWhole(Path<Int?>, NumberRange, null: String?)
        case choice(ConfigurationChoice<DaemonConfiguration>)
        /// A value of a form of its own (gpsd's port, a socket's mode, the power switch): its type and allowed
        /// values as docs/config.md says them, how the reader reads it and the writer writes it.
        case custom(Custom)
    }

    struct Custom {
        var type: String
        var allowed: String
        var read: (inout DaemonConfigurationWalker, JSONValue, String, inout DaemonConfiguration) -> Void
        var write: (DaemonConfiguration) -> JSONValue
    }

    var path: String
    var kind: Kind
    /// One line for docs/config.md.
    var meaning: String
    /// docs/config.md's allowed column when it says more than a problem's "(allowed: …)".
    var documentedAllowed: String?

    init(_ path: String, _ kind: Kind, allowed documentedAllowed: String? = nil, _ meaning: String) {
        self.path = path
        self.kind = kind
        self.meaning = meaning
        self.documentedAllowed = documentedAllowed
    }

    static func text(
        _ path: String, _ keyPath: Path<String>, _ kind: TextKind, required: Bool = false, allowed: String? = nil,
        _ meaning: String
    ) -> Self {
        Self(path, .text(keyPath, kind, required: required), allowed: allowed, meaning)
    }

    /// A value of a form of its own at `keyPath`: `read` is the walker's reader of that form, `write` its JSON.
    static func custom<Value>(
        _ path: String, _ keyPath: Path<Value>, type: String, allowed: String,
        read: @escaping (inout DaemonConfigurationWalker, JSONValue, String, inout Value) -> Void,
        write: @escaping (Value) -> JSONValue, _ meaning: String
    ) -> Self {
        let custom = Custom(
            type: type, allowed: allowed,
            read: { walker, value, at, configuration in read(&walker, value, at, &configuration[keyPath: keyPath]) },
            write: { write($0[keyPath: keyPath]) })
        return Self(path, .custom(custom), meaning)
    }

    /// The key's value in `configuration`, as the file writes it.
    func jsonValue(in configuration: DaemonConfiguration) -> JSONValue {
        switch kind {
        case .text(let keyPath, _, _): .string(configuration[keyPath: keyPath])
        case .optionalText(let keyPath, _, _): configuration[keyPath: keyPath].map { .string($0) } ?? .null
        case .flag(let keyPath): .bool(configuration[keyPath: keyPath])
        case .number(let keyPath, _): .number(configuration[keyPath: keyPath])
        case .optionalWhole(let keyPath, _, _): configuration[keyPath: keyPath].map { .number(Double($0)) } ?? .null
        case .choice(let choice): .string(choice.get(configuration))
        case .custom(let custom): custom.write(configuration)
        }
    }
}

/// An object that may be off (an output, the store, an uploader): null or false turn it off, true (where
/// `trueGivesDefaults`) turns it on with its defaults, an object sets its keys over the defaults.
typealias DaemonConfigurationSection = ConfigurationOptionalObject<DaemonConfiguration>

extension ConfigurationOptionalObject where Root == DaemonConfiguration {
    init<Section: DefaultSection>(
        _ path: String, _ keyPath: WritableKeyPath<DaemonConfiguration, Section?>, off: String = "off",
        trueGivesDefaults: Bool = true, _ meaning: String
    ) {
        self.init(
            path, offMeans: off, trueGivesDefaults: trueGivesDefaults, meaning: meaning,
            isOn: { $0[keyPath: keyPath] != nil }, setOff: { $0[keyPath: keyPath] = nil },
            setOn: { $0[keyPath: keyPath] = Section() })
    }
}

package enum DaemonConfigurationSchema {
    typealias Key = DaemonConfigurationKey
    typealias Node = ConfigurationTree<DaemonConfigurationKey>

    // Built once: the tables hold only pure closures and key paths, never changed after this, and building
    // them for each file read cost more instructions at start-up than an hour of fixes.
    nonisolated(unsafe) static let tree = Node(keys, path: \.path)

    /// Every key, in the order of the file `config show` writes and of docs/config.md.
    nonisolated(unsafe) static let keys: [Key] = makeKeys()

    private static func makeKeys() -> [Key] {
        [
            .text(
                "profile", \.profile, .name,
                allowed: "a built-in name (\(ProfileStore.builtInNames.joined(separator: ", "))), a name of `NAME.json` in "
                    + "`profileDirectory`, or a file path (contains `/` or ends in `.json`)",
                "The power-policy profile the daemon runs ([profiles.md](profiles.md)). It must load: its problems are the config's."),
            .text(
                "profileDirectory", \.profileDirectory, .path, allowed: "not empty",
                "Where a profile given by name is looked up. `$LODESTAR_PROFILE_DIR` does not apply to the daemon: this key does."),
            .text(
                "gpsd.host", \.gpsd.host, .host,
                allowed: "a host name (letters, digits, `-`, `_`, `.`), an IPv4 address, or an IPv6 address without brackets "
                    + "(`::1`, `fe80::1%eth0`); at most 253 bytes",
                "gpsd's host name or address."),
            .custom(
                "gpsd.port", \.gpsd.port, type: "number or string",
                allowed: "a whole number from 1 to 65535, the same in a string (`\"2947\"`), or a service name (`\"gpsd\"`)",
                read: { $0.port($1, at: $2, &$3) }, write: { port in Int(port).map { .number(Double($0)) } ?? .string(port) },
                "gpsd's TCP port."),
            Key(
                "gpsd.device", .optionalText(\.gpsd.device, .absolutePath, null: "gpsd's first device"),
                "The receiver's device as gpsd names it (`/dev/ttyACM0`). null: the first receiver gpsd has."),
            Key(
                "receiver.powerControl", .flag(\.receiver.powerControl),
                "false: the policy still chooses which fixes reach the outputs, but the receiver is never commanded (it stays as it is)."),
            Key(
                "receiver.connection",
                .choice(
                    ConfigurationChoice(
                        // `unknown` is what `auto` gives for a device whose name does not say; not a setting.
                        names: ["auto", ReceiverConnection.usb.rawValue, ReceiverConnection.uart.rawValue],
                        get: { $0.receiver.connection?.rawValue ?? "auto" },
                        set: { configuration, name in
                            guard name == "auto" || name == "usb" || name == "uart" else { return false }
                            configuration.receiver.connection = ReceiverConnection(rawValue: name)
                            return true
                        })),
                "How the receiver is wired, which decides what it can be woken from ([power-control.md](power-control.md)). "
                    + "`usb`: its own USB port (`/dev/ttyACM*`); `uart`: its serial pins, or a USB-serial bridge in front "
                    + "of them; `auto`: read from the device name."),
            .custom(
                "receiver.powerSwitch", \.receiver.powerSwitch, type: "null or object", allowed: "see below",
                read: { $0.powerSwitch($1, at: $2, &$3) }, write: powerSwitchValue,
                "A switch on the receiver's supply, for receivers that have no stop command. null: none."),
            .custom(
                "motion.gpio", \.motion, type: "null or object", allowed: "see below",
                read: { $0.motion($1, at: $2, &$3) }, write: motionValue,
                "A motion sensor's or the ignition's GPIO line: with one, a pause keeps the receiver down until the "
                    + "line stirs ([policy.md](policy.md#motion-hints)). null: none."),
            .custom(
                "motion.iio", \.motionIIO, type: "null or object", allowed: "see below",
                read: { $0.motionIIO($1, at: $2, &$3) }, write: motionIIOValue,
                "An accelerometer read through Linux IIO, sampled: with one, a pause keeps the receiver down until "
                    + "it stirs, as with `motion.gpio`. null: none."),
            .text("outputs.jsonl.path", \.outputs.jsonl.orDefault.path, .path, "The file; relative: under `stateDirectory`."),
        ] + rotation("outputs.jsonl", \.outputs.jsonl.orDefault.rotation) + [
            Key(
                "outputs.jsonl.fsyncInterval", .number(\.outputs.jsonl.orDefault.fsyncInterval, ConfigurationRanges.fsyncInterval),
                "Seconds between fsyncs of the file; 0: after every line. What a power cut can lose."),
            .text("outputs.gpx.directory", \.outputs.gpx.orDefault.directory, .path, "Where the day files go; relative: under `stateDirectory`."),
            Key(
                "outputs.gpx.keepDays",
                .optionalWhole(\.outputs.gpx.orDefault.keepDays, ConfigurationRanges.keepDays, null: "keep every day"),
                "Day files kept; older ones are deleted. null: keep every day."),
            Key(
                "outputs.stdout.format", .choice(ConfigurationChoice(\.outputs.stdout.orDefault.format)),
                "jsonl: one JSON object per line; text: aligned columns, as `lodestar watch` prints."),
            .text(
                "outputs.socket.path", \.outputs.socket.orDefault.path, .path,
                allowed: "not empty; the whole path at most \(ConfigurationRanges.socketPathBytes) bytes",
                "The socket file; relative: under `runtimeDirectory`."),
            Key(
                "outputs.socket.group", .optionalText(\.outputs.socket.orDefault.group, .group, null: "the daemon's own group"),
                "The socket file's group, so its members may connect. null: the daemon's own group."),
            .custom(
                "outputs.socket.mode", \.outputs.socket.orDefault.mode, type: "string",
                allowed: "three or four octal digits, at most `\"0777\"`",
                read: { $0.mode($1, at: $2, &$3) }, write: { .string(octal($0)) },
                "The socket file's permission bits. A string, because JSON numbers are decimal."),
            .text(
                "outputs.capture.path", \.outputs.capture.orDefault.path, .path, allowed: "not empty, not the jsonl file",
                "The capture file; relative: under `stateDirectory`."),
        ] + rotation("outputs.capture", \.outputs.capture.orDefault.rotation) + [
            Key(
                "outputs.capture.raw", .flag(\.outputs.capture.orDefault.raw),
                "Also the receiver's own bytes (gpsd's raw mode), for `replay --through-gpsd`."),
            .text(
                "stateDirectory", \.stateDirectory, .absolutePath,
                "Persisted state (`state.json`) and, by default, the track files and captures. systemd's `StateDirectory`."),
            .text(
                "runtimeDirectory", \.runtimeDirectory, .absolutePath,
                "The status file `lodestar status` reads, and by default the socket. systemd's `RuntimeDirectory`."),
            Key(
                "status.noFixInterval", .number(\.status.noFixInterval, ConfigurationRanges.noFixInterval),
                "While the receiver should be navigating but has no fix, a line on stderr this often: satellites seen "
                    + "and used, time since the last fix."),
            Key(
                "status.updateInterval", .number(\.status.updateInterval, ConfigurationRanges.updateInterval),
                "How often the status file (`lodestar status`) and systemd's `STATUS=` line are written."),
        ] + storeAndUploadKeys + [
            Key(
                "coordinates", .choice(ConfigurationChoice(\.coordinates)),
                "The datum the outputs (jsonl, GPX, stdout, socket) and the uploads write coordinates in. `gcj02` is "
                    + "China's map datum, for map apps that expect it; points outside mainland China are written "
                    + "unchanged. The policy, the store, the status, `state.json` and captures always hold WGS-84, the "
                    + "receiver's own."),
            Key(
                "logLevel", .choice(ConfigurationChoice(\.logLevel)),
                "The least a message must matter to be logged. `info` logs every regime change and power step; "
                    + "`notice` only the start, stops, reloads, the receiver identified and what went wrong; `debug` "
                    + "also each command sent to the receiver, in hex. Under systemd each line carries its priority, so "
                    + "`journalctl -u lodestar -p warning` shows only what went wrong whatever this says. A reload applies it."),
        ]
    }

    /// The objects that may be off.
    static var sections: [DaemonConfigurationSection] {
        [
            DaemonConfigurationSection(
                "outputs.jsonl", \.outputs.jsonl,
                "Delivered locations as one JSON object per line (the schema in "
                    + "[cli.md](cli.md#watching-a-receiver-lodestar-watch)), with the policy's events and regime changes."),
            DaemonConfigurationSection(
                "outputs.gpx", \.outputs.gpx, "One GPX 1.1 file per UTC day, `YYYY-MM-DD.gpx`, valid after every point."),
            DaemonConfigurationSection(
                "outputs.stdout", \.outputs.stdout, "Delivered locations on standard output (the journal, under systemd)."),
            DaemonConfigurationSection(
                "outputs.socket", \.outputs.socket,
                "A Unix stream socket: every client gets the delivered locations as jsonl from when it connects, so "
                    + "several programs share one receiver and one policy."),
            DaemonConfigurationSection(
                "outputs.capture", \.outputs.capture,
                "A capture of the whole run ([capture-format.md](capture-format.md)), to replay and tune a profile later."),
            DaemonConfigurationSection(
                "store", \.store, off: "no store",
                "The SQLite store of delivered locations and events ([store.md](store.md))."),
            // An uploader has no defaults for where it sends: `true` is no uploader.
            DaemonConfigurationSection(
                "upload.owntracks", \.upload.owntracks, off: "none", trueGivesDefaults: false, "OwnTracks over MQTT."),
            DaemonConfigurationSection(
                "upload.traccar", \.upload.traccar, off: "none", trueGivesDefaults: false,
                "Traccar (or another OsmAnd-protocol server) over HTTP(S)."),
        ]
    }

    /// What the other objects are, for docs/config.md.
    static let objects: [(path: String, meaning: String)] = [
        ("gpsd", "Where gpsd is."),
        ("receiver", "How the receiver is wired and powered."),
        ("motion", "What tells of motion besides the receiver."),
        ("outputs", "Where delivered locations go."),
        ("outputs.jsonl.rotation", "When the file is closed and a new one started."),
        ("outputs.capture.rotation", "When the capture is closed and a new one started."),
        ("status", "How often the daemon reports."),
        ("upload", "Where the store's locations are sent, and when ([upload.md](upload.md))."),
    ]

    /// A track file's rotation, the same keys under `prefix` for each file that has one.
    private static func rotation(_ prefix: String, _ rotation: Key.Path<DaemonConfiguration.Rotation>) -> [Key] {
        [
            Key(
                "\(prefix).rotation.maxBytes",
                .optionalWhole(rotation.appending(path: \.maxBytes), ConfigurationRanges.maxBytes, null: "no size limit"),
                "A new file once the current one reaches this size. null: no size limit."),
            Key("\(prefix).rotation.daily", .flag(rotation.appending(path: \.daily)), "A new file at each UTC midnight."),
            Key(
                "\(prefix).rotation.keep",
                .optionalWhole(rotation.appending(path: \.keep), ConfigurationRanges.keep, null: "keep them all"),
                "Rotated files kept; the oldest are deleted first. null: keep them all."),
        ]
    }

    private static func powerSwitchValue(_ powerSwitch: DaemonConfiguration.PowerSwitchSettings?) -> JSONValue {
        switch powerSwitch {
        case nil: .null
        case .usbPort: .object([("type", .string("usbPort"))])
        case .gpio(let chip, let line, let activeLow):
            .object([
                ("type", .string("gpio")), ("chip", .string(chip)), ("line", .number(Double(line))),
                ("activeLow", .bool(activeLow)),
            ])
        }
    }

    private static func motionIIOValue(_ motion: DaemonConfiguration.IIOMotionSettings?) -> JSONValue {
        guard let motion else { return .null }
        return .object([
            ("device", .string(motion.device)), ("threshold", .number(motion.threshold)),
            ("sampleInterval", .number(motion.sampleInterval)), ("debounce", .number(motion.debounce)),
        ])
    }

    private static func motionValue(_ motion: DaemonConfiguration.MotionSettings?) -> JSONValue {
        guard let motion else { return .null }
        return .object([
            ("chip", .string(motion.chip)), ("line", .number(Double(motion.line))), ("activeLow", .bool(motion.activeLow)),
            ("debounce", .number(motion.debounce)), ("ignition", .bool(motion.ignition)),
        ])
    }

    /// Permission bits as the file writes them: four octal digits in a string.
    private static func octal(_ mode: Int) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
