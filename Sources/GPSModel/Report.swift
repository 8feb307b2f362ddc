/// One gpsd report, typed. The vocabulary is gpsd's JSON protocol (`man gpsd_json`).
public enum Report: Sendable, Equatable {
    case fix(Fix)
    case sky(SkyView)
    case gst(GST)
    /// A device was activated (`activated` is set) or closed (`activated` is nil: gpsd's `"activated":0`).
    case device(DeviceInfo)
    case devices([DeviceInfo])
    case version(GPSDVersion)
    /// gpsd's echo of a `?WATCH`: the watch is in effect from here on.
    case watch(enabled: Bool)
    case error(message: String)
    /// A class Lodestar does not use (PPS, TOFF, ATT, AIS, …), kept by name.
    case other(className: String)

    /// gpsd's class name for the report.
    public var className: String {
        switch self {
        case .fix: "TPV"
        case .sky: "SKY"
        case .gst: "GST"
        case .device: "DEVICE"
        case .devices: "DEVICES"
        case .version: "VERSION"
        case .watch: "WATCH"
        case .error: "ERROR"
        case .other(let name): name
        }
    }
}

public struct GPSDVersion: Sendable, Equatable {
    public var release: String
    public var protocolMajor: Int
    public var protocolMinor: Int

    public init(release: String, protocolMajor: Int, protocolMinor: Int) {
        self.release = release
        self.protocolMajor = protocolMajor
        self.protocolMinor = protocolMinor
    }
}

public struct DeviceInfo: Sendable, Equatable {
    public var path: String
    /// gpsd's driver name once it has identified the receiver (`NMEA0183`, `u-blox`, `SiRF`, …).
    public var driver: String?
    /// What the receiver says it is, as far as gpsd's driver asked it: for a u-blox the software and hardware
    /// versions (`SW ROM CORE 3.01 (107888),HW 00080000`).
    public var subtype: String?
    /// More of the same where the driver has it: for a u-blox the firmware, protocol version and GNSS
    /// (`FWVER=SPG 3.01,PROTVER=18.00,GPS;GLO;GAL;BDS`).
    public var subtype1: String?
    /// When gpsd opened the device; nil when gpsd reports it closed.
    public var activated: UTCTime?

    public init(
        path: String, driver: String? = nil, subtype: String? = nil, subtype1: String? = nil,
        activated: UTCTime? = nil
    ) {
        (self.path, self.driver, self.subtype, self.subtype1, self.activated)
            = (path, driver, subtype, subtype1, activated)
    }

    public var isActive: Bool { activated != nil }
}

/// gpsd's GST: pseudorange error statistics, 1-σ metres (from NMEA GST or a binary equivalent).
public struct GST: Sendable, Equatable {
    public var device: String?
    public var time: UTCTime?
    public var rms: Double?
    public var major: Double?
    public var minor: Double?
    public var orientation: Double?
    public var latitudeError: Double?
    public var longitudeError: Double?
    public var altitudeError: Double?

    public init(
        device: String? = nil, time: UTCTime? = nil, rms: Double? = nil, major: Double? = nil,
        minor: Double? = nil, orientation: Double? = nil, latitudeError: Double? = nil,
        longitudeError: Double? = nil, altitudeError: Double? = nil
    ) {
        self.device = device
        self.time = time
        self.rms = rms
        self.major = major
        self.minor = minor
        self.orientation = orientation
        self.latitudeError = latitudeError
        self.longitudeError = longitudeError
        self.altitudeError = altitudeError
    }
}

public struct Satellite: Sendable, Equatable {
    public var prn: Int
    public var elevation: Double?
    public var azimuth: Double?
    /// Signal strength, dB-Hz.
    public var signalStrength: Double?
    public var used: Bool

    public init(prn: Int, elevation: Double?, azimuth: Double?, signalStrength: Double?, used: Bool) {
        (self.prn, self.elevation, self.azimuth, self.signalStrength, self.used)
            = (prn, elevation, azimuth, signalStrength, used)
    }
}

/// gpsd's SKY: dilutions of precision and the satellites in view.
public struct SkyView: Sendable, Equatable {
    public var device: String?
    public var time: UTCTime?
    public var hdop: Double?
    public var vdop: Double?
    public var pdop: Double?
    /// Each satellite; empty when the source was asked for counts only (`satelliteDetail: false`).
    public var satellites: [Satellite]
    public var satellitesUsed: Int
    public var satellitesVisible: Int

    /// Counts default to those of `satellites`.
    public init(
        device: String? = nil, time: UTCTime? = nil, hdop: Double? = nil, vdop: Double? = nil,
        pdop: Double? = nil, satellites: [Satellite] = [], satellitesUsed: Int? = nil, satellitesVisible: Int? = nil
    ) {
        self.device = device
        self.time = time
        self.hdop = hdop
        self.vdop = vdop
        self.pdop = pdop
        self.satellites = satellites
        self.satellitesUsed = satellitesUsed ?? satellites.count(where: \.used)
        self.satellitesVisible = satellitesVisible ?? satellites.count
    }
}
