/// What gpsd's TPV `mode` says about a fix.
public enum FixMode: Int, Sendable, Comparable {
    case notSeen = 0
    case noFix = 1
    case twoD = 2
    case threeD = 3

    public static func < (lhs: FixMode, rhs: FixMode) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name used in Lodestar's JSON output.
    public var name: String {
        switch self {
        case .notSeen: "none"
        case .noFix: "none"
        case .twoD: "2d"
        case .threeD: "3d"
        }
    }
}

/// One decoded gpsd TPV report. Every unknown value is `nil`: no NaN leaves the GPSD module.
///
/// The `ep*` fields are gpsd's own error estimates, whose basis varies by receiver (see docs/contract.md §1);
/// `Location` turns them into 68 % values.
public struct Fix: Sendable, Equatable {
    public var device: String?
    public var mode: FixMode
    /// gpsd's `status` (0 unknown/plain GPS, 2 DGPS, 3 RTK fixed …); gpsd omits it below 2.
    public var status: Int?
    public var time: UTCTime?
    public var latitude: Double?
    public var longitude: Double?
    /// Metres above mean sea level.
    public var altitudeMSL: Double?
    /// Metres above the WGS-84 ellipsoid.
    public var altitudeHAE: Double?
    /// gpsd's longitude, latitude, horizontal and vertical position errors (m).
    public var epx: Double?
    public var epy: Double?
    public var eph: Double?
    public var epv: Double?
    /// Ground speed (m/s) and its error.
    public var speed: Double?
    public var eps: Double?
    /// Course over ground, degrees true, and its error.
    public var track: Double?
    public var epd: Double?
    /// Vertical speed (m/s).
    public var climb: Double?

    public init(
        device: String? = nil, mode: FixMode, status: Int? = nil, time: UTCTime? = nil,
        latitude: Double? = nil, longitude: Double? = nil, altitudeMSL: Double? = nil,
        altitudeHAE: Double? = nil, epx: Double? = nil, epy: Double? = nil, eph: Double? = nil,
        epv: Double? = nil, speed: Double? = nil, eps: Double? = nil, track: Double? = nil,
        epd: Double? = nil, climb: Double? = nil
    ) {
        self.device = device
        self.mode = mode
        self.status = status
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitudeMSL = altitudeMSL
        self.altitudeHAE = altitudeHAE
        self.epx = epx
        self.epy = epy
        self.eph = eph
        self.epv = epv
        self.speed = speed
        self.eps = eps
        self.track = track
        self.epd = epd
        self.climb = climb
    }

    /// A fix a location can be made of: at least 2D, with finite coordinates in range.
    public var hasPosition: Bool {
        guard mode >= .twoD, let latitude, let longitude else { return false }
        return abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// Why gpsd reports positions without a time, as every message about them says it: gpsd 3.22 dates NMEA's
    /// time of day only from RMC or ZDA.
    public static let untimedPositionsCause = "an NMEA receiver sending GGA but no RMC or ZDA"
}
