import GPSModel
import Policy
import SystemInterface

/// What `lodestar run` does, as read from its config file (docs/config.md) and flags. Every member has the
/// default an empty config `{}` gives; `DaemonConfigurationReader` (DaemonConfigurationReader.swift) reads and
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
    /// The SQLite store of delivered locations and events (docs/store.md); nil keeps none, and then nothing
    /// can be uploaded.
    public var store: StoreSettings? = StoreSettings()
    /// Where the store's locations are sent (docs/upload.md).
    public var upload = UploadSettings()
    /// The datum outputs and uploads write coordinates in. The policy, the store and captures always hold
    /// WGS-84, the receiver's own.
    public var coordinates: CoordinateSystem = .wgs84
    /// The least a message must matter to reach the journal: `info` (the default) logs every regime change,
    /// `notice` only starts, stops, reloads and what went wrong, `debug` also each command sent to the receiver.
    public var logLevel: Logger.Level = .info
    /// A motion sensor's or the ignition's GPIO line (`motion.gpio`); nil: none.
    public var motion: MotionSettings?
    /// An accelerometer read through Linux IIO (`motion.iio`); nil: none. With neither source a pause wakes the
    /// receiver for probes.
    public var motionIIO: IIOMotionSettings?

    public init() {}

    /// A line whose edges tell of motion (docs/config.md, `motion`): with one, a pause keeps the receiver down
    /// until the line stirs, and probes only as a fallback (docs/policy.md, "Motion hints").
    public struct MotionSettings: Sendable, Equatable {
        /// `gpiochip0`, a /dev path, a number or a label.
        public var chip: String = "gpiochip0"
        public var line: Int
        /// The line is active (the sensor fires, the ignition is on) when low.
        public var activeLow: Bool = false
        /// Seconds in which further activations after a hint are one with it (a switch's bounce); for an
        /// ignition line, how long its level holds before it is taken.
        public var debounce: Double = 1
        /// The line is the ignition and its level is read: the engine on and off (`Policy.ignition(on:now:)`),
        /// not only the edge of its start.
        public var ignition: Bool = false
        public init(line: Int) { self.line = line }
    }

    /// An accelerometer whose samples tell of motion (docs/config.md, `motion.iio`), as a GPIO line's edges do.
    public struct IIOMotionSettings: Sendable, Equatable {
        /// The device's folder under /sys/bus/iio/devices (`iio:device0`), a path to it, or its driver's name
        /// (`mpu6050`).
        public var device: String
        /// m/s²: how far a sample must differ from the recent average to be motion.
        public var threshold: Double = 0.5
        /// Seconds between samples.
        public var sampleInterval: Double = 0.2
        /// Seconds in which further motion after a hint is one with it.
        public var debounce: Double = 1
        public init(device: String) { self.device = device }
    }

    /// The location store: a SQLite file, bounded by size and age; the oldest rows every uploader has go first.
    public struct StoreSettings: Sendable, Equatable {
        /// Relative paths are under `stateDirectory`.
        public var path: String = "store.sqlite"
        /// Bytes the file (with its write-ahead log) may take; nil: no limit by size.
        public var maxBytes: Int? = 100_000_000
        /// Days a row is kept once every uploader has it; nil: no limit by age.
        public var maxAgeDays: Int?
        /// Seconds between syncs of what was committed to the disk, besides the syncs when the receiver goes
        /// down, after a deferred batch, before an upload and at stop; 0: every commit is synced. A power cut
        /// loses at most this much; a crash of the service alone the last 5 s (`StoreForwarder.commitInterval`,
        /// 0 commits each location). journald's default
        /// (SyncIntervalSec=5min), for the same reason: an SD card wears with every sync.
        public var syncInterval: Double = 300
        public init() {}
    }

    /// The uploaders, and when batches go out (`UploadScheduler`).
    public struct UploadSettings: Sendable, Equatable {
        /// Seconds the oldest unsent location may wait before a batch goes; 0 sends every location at once.
        public var maxBatchAge: Double = 900
        /// false: nothing is sent while the receiver sleeps, so the radio sleeps with it.
        public var uploadWhileAsleep: Bool = true
        /// The first retry's delay after a failure, doubling (with jitter) up to `maxBackoff`, in seconds.
        public var initialBackoff: Double = 10
        public var maxBackoff: Double = 900
        public var owntracks: OwnTracksUpload?
        public var traccar: TraccarUpload?
        public init() {}

        /// The uploaders configured, by the names their queue positions have in the store.
        public var names: [String] {
            (owntracks == nil ? [] : ["owntracks"]) + (traccar == nil ? [] : ["traccar"])
        }
    }

    /// OwnTracks over MQTT: topic `owntracks/<user>/<device>`.
    public struct OwnTracksUpload: Sendable, Equatable {
        public var host: String = "localhost"
        /// nil: 1883, or 8883 with TLS.
        public var port: Int?
        public var user: String = ""
        public var device: String = ""
        /// OwnTracks' `tid`, two characters on its map; nil: the device's last two.
        public var trackerID: String?
        public var username: String?
        public var password: String?
        public var tls: Bool = false
        /// A CA certificate file to check the broker against; nil: the system's.
        public var caFile: String?
        /// Accept a certificate whose name does not match the host (for an address in a test network).
        public var insecure: Bool = false
        /// Seconds one connection and its batch may take.
        public var timeout: Double = 30
        public init() {}
    }

    /// Traccar (or any OsmAnd-protocol server) over HTTP(S).
    public struct TraccarUpload: Sendable, Equatable {
        public enum Method: String, Sendable, Equatable, CaseIterable { case post, get }
        /// The server's OsmAnd port: `http://traccar.example:5055`.
        public var url: String = ""
        /// The device's identifier in Traccar.
        public var deviceID: String = ""
        public var method: Method = .post
        /// A file holding the battery's charge in percent (`/sys/class/power_supply/BAT0/capacity`); sent as `batt`.
        public var batterySource: String?
        public var caFile: String?
        public var insecure: Bool = false
        public var username: String?
        public var password: String?
        /// Seconds one request may take.
        public var timeout: Double = 30
        public init() {}
    }

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

    /// Delivered locations, one JSON object per line (the schema in docs/cli.md), plus the events and regime changes.
    public struct JSONLOutput: Sendable, Equatable {
        /// Relative paths are under `stateDirectory`.
        public var path: String = "track/locations.jsonl"
        public var rotation = Rotation()
        /// Seconds between fsyncs; 0 after every line.
        public var fsyncInterval: Double = 300
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
