import GPSModel

/// Why the policy delivered a location. Stored with it (LocationStore), sent as OwnTracks' `t` trigger, and
/// read by `UploadScheduler`: a delivery that ends a batch (a deferral, a significant change, a request) sends
/// what is waiting at once.
public enum DeliveryReason: String, Sendable, Equatable, CaseIterable {
    /// A standard update: continuous tracking or a duty-cycle wake.
    case update
    /// One of the locations of a deferred batch (`allowDeferredUpdates`).
    case deferredBatch
    /// Significant-change monitoring's location.
    case significantChange
    /// The answer to a single-shot request.
    case request
}

/// A delivered location as the store holds it. `id` is the store's row id: stable, increasing in delivery
/// order, never reused, so a server (or a test) can drop duplicates by it.
public struct StoredLocation: Sendable, Equatable {
    public var id: Int64
    public var location: Location
    public var reason: DeliveryReason
    /// When it was stored, UTC on the daemon's clock.
    public var stored: UTCTime

    public init(id: Int64, location: Location, reason: DeliveryReason, stored: UTCTime) {
        self.id = id
        self.location = location
        self.reason = reason
        self.stored = stored
    }
}

/// What one attempt to send a batch did.
public struct UploadOutcome: Sendable, Equatable {
    /// How many of the batch's leading locations the server acknowledged (an MQTT QoS 1 PUBACK, an HTTP 2xx):
    /// those are done; the rest go again, in order, on the next attempt.
    public var acknowledged: Int
    /// Network connections opened for the attempt (radio wake-ups), counted whether or not they succeeded.
    public var connectionsOpened: Int
    /// nil when every location of the batch was acknowledged; otherwise why the attempt stopped, for the log
    /// (`connection refused by broker.example:8883`, `HTTP 500 from …`, `timed out after 30 s`).
    public var failure: String?

    public init(acknowledged: Int, connectionsOpened: Int, failure: String? = nil) {
        self.acknowledged = acknowledged
        self.connectionsOpened = connectionsOpened
        self.failure = failure
    }
}

/// One server the store's locations go to (OwnTracks over MQTT, Traccar over HTTP). Called on its uploader's
/// thread only, one batch at a time.
public protocol UploadTransport: AnyObject {
    /// What it is, for log lines and `lodestar status`: `owntracks mqtt://broker:1883 owntracks/pi/car`.
    var name: String { get }
    /// Opens a connection, sends `batch` in order, and closes it: each call is one radio wake-up. Stops at the
    /// first location the server does not take. Returns within its timeout, and within about a second once
    /// `shouldStop` turns true (what was not acknowledged is sent again later).
    func send(_ batch: [StoredLocation], shouldStop: () -> Bool) -> UploadOutcome
}
