/// Where a `Location`'s horizontal accuracy came from (docs/contract.md §1). Kept so users can judge the figure.
public enum AccuracySource: String, Sendable, Equatable {
    /// GST pseudorange statistics: `sqrt(σlat² + σlon²)`, a 1-σ (about 68 %) radius.
    case gst
    /// A u-blox binary receiver's own `hAcc`, reported by gpsd unscaled (1-σ-like).
    case receiver
    /// gpsd's `eph`, which it calls a 95 % guess (often HDOP × 19 m), scaled to 68 %.
    case gpsdEstimate
}

/// Where a location came from.
public enum LocationOrigin: String, Sendable, Equatable {
    case live
    case replay
}

/// One accepted fix, as delivered to an application (docs/contract.md §1). No value is NaN; unknown is nil.
public struct Location: Sendable, Equatable {
    public var timestamp: UTCTime
    public var latitude: Double
    public var longitude: Double
    /// Metres above mean sea level.
    public var altitude: Double?
    /// 68 % radius in metres (Core Location's meaning).
    public var horizontalAccuracy: Double?
    public var horizontalAccuracySource: AccuracySource?
    /// 68 % in metres.
    public var verticalAccuracy: Double?
    /// m/s and its 68 % accuracy.
    public var speed: Double?
    public var speedAccuracy: Double?
    /// Degrees true and its 68 % accuracy.
    public var course: Double?
    public var courseAccuracy: Double?
    public var fixMode: FixMode
    public var satellitesUsed: Int?
    public var hdop: Double?
    public var device: String?
    public var origin: LocationOrigin

    public init(
        timestamp: UTCTime, latitude: Double, longitude: Double, altitude: Double? = nil,
        horizontalAccuracy: Double? = nil, horizontalAccuracySource: AccuracySource? = nil,
        verticalAccuracy: Double? = nil, speed: Double? = nil, speedAccuracy: Double? = nil,
        course: Double? = nil, courseAccuracy: Double? = nil, fixMode: FixMode,
        satellitesUsed: Int? = nil, hdop: Double? = nil, device: String? = nil, origin: LocationOrigin = .live
    ) {
        self.timestamp = timestamp
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.horizontalAccuracySource = horizontalAccuracySource
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.speedAccuracy = speedAccuracy
        self.course = course
        self.courseAccuracy = courseAccuracy
        self.fixMode = fixMode
        self.satellitesUsed = satellitesUsed
        self.hdop = hdop
        self.device = device
        self.origin = origin
    }
}

/// Conversions from gpsd's error figures to 68 % values (gpsd's `include/gpsd.h` constants).
public enum AccuracyScale {
    /// gpsd calls `eph` a 95 % circular figure (CEP95_SIGMA 2.45); DRMS (≈ 68 %) is 1.414 σ.
    public static let horizontal95To68 = 1.414 / 2.45
    /// A one-dimensional 95 % figure is 1.96 σ; 68 % is 1 σ.
    public static let oneDimensional95To68 = 1 / 1.96
}

/// Turns fixes into locations, with the context gpsd sends around them: the newest SKY (satellites used,
/// HDOP), the newest GST (1-σ errors) and each device's driver. Pure; the live source and replay both use it.
public struct LocationAssembler: Sendable {
    private var latestSky: [String: SkyView] = [:]
    private var latestGST: [String: GST] = [:]
    private var drivers: [String: String] = [:]
    public var origin: LocationOrigin

    /// A GST this far from the fix's time (either side) still describes it: gpsd may send it before or
    /// after the epoch's TPV.
    public static let gstMatchWindow = 1.5

    public init(origin: LocationOrigin = .live) {
        self.origin = origin
    }

    public mutating func note(_ report: Report) {
        switch report {
        case .sky(let sky): latestSky[sky.device ?? ""] = sky
        case .gst(let gst): latestGST[gst.device ?? ""] = gst
        case .device(let device): note(device)
        case .devices(let devices): devices.forEach { note($0) }
        default: break
        }
    }

    private mutating func note(_ device: DeviceInfo) {
        if let driver = device.driver, !driver.isEmpty { drivers[device.path] = driver }
        if !device.isActive {
            latestSky[device.path] = nil
            latestGST[device.path] = nil
        }
    }

    /// The location for `fix`, or nil when the fix has no usable position or no time.
    public func location(for fix: Fix) -> Location? {
        guard fix.hasPosition, let time = fix.time, let latitude = fix.latitude, let longitude = fix.longitude
        else { return nil }
        let key = fix.device ?? ""
        let sky = latestSky[key]
        let gst = latestGST[key].flatMap { gst -> GST? in
            guard let gstTime = gst.time, abs(gstTime.interval(since: time)) <= Self.gstMatchWindow else {
                return nil
            }
            return gst
        }
        let fromReceiver = drivers[key] == "u-blox"

        var horizontal: (Double, AccuracySource)?
        var vertical: Double?
        if let gst, let latitudeError = gst.latitudeError, let longitudeError = gst.longitudeError {
            horizontal = ((latitudeError * latitudeError + longitudeError * longitudeError).squareRoot(), .gst)
            vertical = gst.altitudeError
        } else if let eph = fix.eph {
            horizontal = fromReceiver ? (eph, .receiver) : (eph * AccuracyScale.horizontal95To68, .gpsdEstimate)
        }
        if vertical == nil, let epv = fix.epv {
            vertical = fromReceiver ? epv : epv * AccuracyScale.oneDimensional95To68
        }
        let scale1D = fromReceiver ? 1 : AccuracyScale.oneDimensional95To68
        let used = sky?.satellitesUsed
        return Location(
            timestamp: time, latitude: latitude, longitude: longitude,
            altitude: fix.mode == .threeD ? fix.altitudeMSL : nil,
            horizontalAccuracy: horizontal?.0, horizontalAccuracySource: horizontal?.1,
            verticalAccuracy: fix.mode == .threeD ? vertical : nil,
            speed: fix.speed, speedAccuracy: fix.eps.map { $0 * scale1D },
            course: fix.track, courseAccuracy: fix.epd.map { $0 * scale1D },
            fixMode: fix.mode, satellitesUsed: used == 0 ? nil : used, hdop: sky?.hdop,
            device: fix.device, origin: origin)
    }
}
