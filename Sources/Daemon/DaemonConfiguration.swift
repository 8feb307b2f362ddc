import Policy

/// What `lodestar run` does, as read from its config file (docs/config.md) and flags. Every member has the
/// default an empty config `{}` gives; `DaemonConfigurationReader` (DaemonConfigurationFile.swift) reads and
/// validates a file into one.
public struct DaemonConfiguration: Sendable, Equatable {
    /// The default config file.
    public static let defaultPath = "/etc/lodestar/lodestar.json"

    /// A built-in profile's name, a name in `profileDirectory`, or a file path (as `--profile` takes it).
    public var profile: String = "car"
    /// Where named profiles are looked up.
    public var profileDirectory: String = "/etc/lodestar/profiles"
    public var gpsd = GPSDSettings()
    public var receiver = ReceiverSettings()
    public var outputs = OutputSettings()
    /// Persisted state (`state.json`) and, by default, the track files. systemd's `StateDirectory`.
    public var stateDirectory: String = "/var/lib/lodestar"
    /// The status file `lodestar status` reads and the default socket. systemd's `RuntimeDirectory`.
    public var runtimeDirectory: String = "/run/lodestar"
    public var status = StatusSettings()

    public init() {}

    public struct GPSDSettings: Sendable, Equatable {
        public var host: String = "localhost"
        public var port: String = "2947"
        /// The receiver's device as gpsd names it; nil takes the first receiver gpsd has.
        public var device: String?
        public init() {}
    }

    public struct ReceiverSettings: Sendable, Equatable {
        /// false: the policy chooses which fixes reach the outputs but the receiver is never commanded.
        public var powerControl: Bool = true
        /// How the receiver is wired; nil reads it from the device name.
        public var connection: ReceiverConnection?
        /// A switch on the receiver's supply, for receivers without a stop command.
        public var powerSwitch: PowerSwitchSettings?
        public init() {}
    }

    public enum PowerSwitchSettings: Sendable, Equatable {
        /// An enable line: chip (`gpiochip0` or a path), line offset, whether low means on.
        case gpio(chip: String, line: Int, activeLow: Bool)
        /// The power of the USB hub port the receiver is plugged into (Linux 6.0+, a hub that switches ports).
        case usbPort
    }

    public struct OutputSettings: Sendable, Equatable {
        public var jsonl: JSONLOutput? = JSONLOutput()
        public var gpx: GPXOutput? = GPXOutput()
        public var stdout: StdoutOutput?
        public var socket: SocketOutput? = SocketOutput()
        public var capture: CaptureOutput?
        public init() {}
    }

    /// When a growing file is closed and a new one started, and how many old ones are kept.
    public struct Rotation: Sendable, Equatable {
        /// Bytes; nil: no limit by size.
        public var maxBytes: Int? = 10_000_000
        /// A new file at each UTC midnight.
        public var daily: Bool = true
        /// Rotated files kept (the oldest go first); nil keeps them all.
        public var keep: Int? = 30
        public init() {}
    }

    /// Delivered locations, one JSON object per line (the README's schema), plus the events and regime changes.
    public struct JSONLOutput: Sendable, Equatable {
        /// Relative paths are under `stateDirectory`.
        public var path: String = "track/locations.jsonl"
        public var rotation = Rotation()
        /// Seconds between fsyncs; 0 after every line.
        public var fsyncInterval: Double = 10
        public init() {}
    }

    /// One GPX 1.1 file per UTC day (`YYYY-MM-DD.gpx`), valid after every point.
    public struct GPXOutput: Sendable, Equatable {
        /// Relative paths are under `stateDirectory`.
        public var directory: String = "track/gpx"
        /// Days kept; nil keeps them all.
        public var keepDays: Int?
        public init() {}
    }

    public struct StdoutOutput: Sendable, Equatable {
        public enum Format: String, Sendable, Equatable, CaseIterable { case jsonl, text }
        public var format: Format = .text
        public init() {}
    }

    /// A Unix stream socket; every client gets the delivered locations as jsonl from when it connects.
    public struct SocketOutput: Sendable, Equatable {
        /// Relative paths are under `runtimeDirectory`.
        public var path: String = "locations.sock"
        /// The socket file's group; nil leaves the daemon's own.
        public var group: String? = "lodestar"
        /// The socket file's permission bits.
        public var mode: Int = 0o660
        public init() {}
    }

    /// A capture of the whole run (docs/capture-format.md), for tuning a profile later.
    public struct CaptureOutput: Sendable, Equatable {
        /// Relative paths are under `stateDirectory`.
        public var path: String = "captures/run.capture"
        public var rotation = Rotation()
        /// Also the receiver's own bytes (gpsd's raw mode), for `replay --through-gpsd`.
        public var raw: Bool = false
        public init() {}
    }

    public struct StatusSettings: Sendable, Equatable {
        /// Seconds between "no fix" lines on stderr while the receiver should be navigating but is not.
        public var noFixInterval: Double = 30
        /// Seconds between writes of the status file (and systemd STATUS= lines).
        public var updateInterval: Double = 5
        public init() {}
    }

    /// `path` resolved against `directory` when relative.
    public static func resolve(_ path: String, under directory: String) -> String {
        if path.hasPrefix("/") { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }
}
