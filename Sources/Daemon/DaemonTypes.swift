import GPSModel
import Policy
import Receivers

/// One thing the service hands its outputs, in the order it happened. `t` is seconds on the service's
/// monotonic clock since it started; `at` is the UTC wall-clock time it happened.
public enum TrackRecord: Sendable, Equatable {
    /// A location the policy delivered.
    case location(Location)
    /// A policy event (docs/contract.md §10) and why.
    case event(PolicyEventKind, detail: String, t: Double, at: UTCTime)
    /// The regime the policy chose, and why.
    case regime(ReceiverRegime, reason: String, t: Double, at: UTCTime)
    /// What receiver power control did and saw.
    case power(PowerEvent, t: Double, at: UTCTime)
}

/// Why an output could not be written: names the file and the system's reason. The service logs it once per
/// change, keeps running with the other outputs, and tries the failed one again later.
public struct OutputFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
    public var description: String { "\(path): \(reason)" }
}

/// A place delivered locations go (a jsonl file, the day's GPX file, stdout, the socket, a capture). Called on
/// the service's thread only.
public protocol TrackOutput: AnyObject {
    /// What it is, for log lines: `jsonl /var/lib/lodestar/track/locations.jsonl`.
    var name: String { get }
    /// Takes one record; outputs that only keep locations ignore the rest.
    func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure)
    /// Called about once a second: fsync cadence, rotation at midnight, accepting socket clients.
    func tick(now: UTCTime) throws(OutputFailure)
    /// Puts what was written on the disk now: the service calls it whenever the store syncs something new (its
    /// interval, the receiver going down, a deferred batch, stop), so a power cut costs each file what it costs
    /// the store. Outputs without a file do nothing.
    func sync(now: UTCTime) throws(OutputFailure)
    /// Writes and syncs everything held, and closes (a GPX file is left complete).
    func close()
    /// Descriptors to watch for readability: when one is, the service calls `tick` at once (a socket client
    /// waiting to be accepted).
    var pollDescriptors: [Int32] { get }
    /// What happened since the last call that the journal should hear (the socket dropped a client that
    /// stopped reading, its group does not exist); read after every write and tick, so it is logged when it
    /// happens.
    func takeNotices() -> [String]
}

extension TrackOutput {
    public var pollDescriptors: [Int32] { [] }
    public func takeNotices() -> [String] { [] }
    public func sync(now: UTCTime) throws(OutputFailure) {}
}

/// What `lodestar status` shows: written by the running service to `status.json` in its runtime directory.
public struct DaemonStatus: Sendable, Equatable {
    public var pid: Int32
    /// When the service started and when this was written, UTC.
    public var started: UTCTime
    public var updated: UTCTime
    public var profile: String
    /// gpsd's device path and the receiver as identified (`u-blox 8 (UBX)`), nil until gpsd names one.
    public var device: String?
    public var receiver: String?
    /// The power mechanism in use (`ubx`, `pmtk`, `gpio`, `usbPort`, `closeDevice`, or `none`).
    public var mechanism: String
    public var regime: ReceiverRegime
    public var regimeReason: String
    /// UTC time of the last delivered location (its receiver timestamp), nil before the first.
    public var lastFix: UTCTime?
    public var lastLocation: Location?
    public var fixesDelivered: Int = 0
    /// Estimated charge drawn by the receiver since start, and what always-on would have drawn (mAh), from the
    /// profile's receiver model and only the regimes power control saw reached.
    public var chargeMilliampHours: Double = 0
    public var alwaysOnMilliampHours: Double = 0
    /// The newest problem still true, and when it began.
    public var lastError: String?
    public var lastErrorAt: UTCTime?
    /// Every problem still true, oldest first (`lastError` is the last): a full store that keeps failing does
    /// not hide a refused reload behind it.
    public var errors: [String] = []
    /// Seconds between writes of the status (the config's `status.updateInterval`): a status much older than
    /// this comes from a service that is hung or gone.
    public var updateInterval: Double = 5
    /// Each uploader's queue and last success (docs/upload.md); empty without uploads.
    public var uploads: [UploadStatus] = []
    /// The store's file, nil without a store, and the locations it dropped unsent because it was full.
    public var store: String?
    public var storeDropped: Int = 0
    /// Locations the store could not write (a full disk, an I/O error): lost to the store and the uploads.
    public var storeLost: Int = 0
    /// Each output, whether it is failing now and how many locations it could not take since the start.
    public var outputs: [OutputStatus] = []
}

/// One output in the status: `gpx /var/lib/lodestar/track/gpx`, its failure while it lasts, and the
/// locations it lost (failed or skipped while it backed off) since the service started.
public struct OutputStatus: Sendable, Equatable {
    public var name: String
    public var failure: String?
    public var lost: Int = 0
}

/// What survives a restart, in `state.json` in the state directory: restored at start as Core Location
/// resumes an app after a relaunch.
public struct PersistedState: Sendable, Equatable {
    /// The last delivered location.
    public var lastLocation: Location?
    /// The regime the receiver was left in.
    public var regime: ReceiverRegime?
    /// UTC time the receiver last had a fix: with the model's hot window it says how the next start goes.
    public var lastNavigating: UTCTime?
    /// Totals over every run.
    public var fixesDelivered: Int = 0
    public var chargeMilliampHours: Double = 0
    public var alwaysOnMilliampHours: Double = 0
    public var runs: Int = 0
}
