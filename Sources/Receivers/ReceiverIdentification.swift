import Policy

/// u-blox receiver generations, by which power commands they take.
public enum UBloxGeneration: String, Sendable, Hashable, CaseIterable {
    /// u-blox 5, 6 and 7: CFG-RXM with CFG-PM2, 8-byte RXM-PMREQ.
    case legacy
    /// u-blox 8 / M8: CFG-PMS, CFG-RXM, both RXM-PMREQ forms (the 16-byte one from protocol 18).
    case m8
    /// M9, M10 and F9: the configuration interface (CFG-VALSET), 16-byte RXM-PMREQ; CFG-RXM/PMS are gone.
    case configurationInterface

    /// From MON-VER's hardware version (`00040007`, `00070000`, `00080000`, `00190000`, `000A0000`), else the
    /// protocol version (u-blox 7 speaks 14, u-blox 8 15 to 23, F9/M9/M10 27 on).
    public init?(hardware: String?, protocolVersion: Double?) {
        switch hardware?.uppercased() {
        case "00040005", "00040007", "00070000": self = .legacy
        case "00080000": self = .m8
        case "00190000", "000A0000": self = .configurationInterface
        default:
            guard let protocolVersion else { return nil }
            if protocolVersion < 15 {
                self = .legacy
            } else if protocolVersion < 27 {
                self = .m8
            } else {
                self = .configurationInterface
            }
        }
    }
}

/// Power commands Lodestar knows how to send (`UBXCommand`, `PMTKCommand`).
public enum PowerCommand: String, Sendable, Hashable, CaseIterable {
    /// UBX-CFG-RST controlled GNSS stop / start.
    case ubxGNSSStopStart
    /// UBX-RXM-PMREQ, 8-byte form.
    case ubxBackupRequest
    /// UBX-RXM-PMREQ, 16-byte form with wake-up sources and `force`.
    case ubxBackupRequestWithWakeupSources
    /// UBX-CFG-RXM power save / continuous.
    case ubxReceiverMode
    /// UBX-CFG-PMS.
    case ubxPowerSetup
    /// UBX-CFG-VALSET of CFG-PM-OPERATEMODE.
    case ubxOperateMode
    /// PMTK161 standby.
    case pmtkStandby
    /// PMTK225 periodic and AlwaysLocate modes.
    case pmtkPeriodic
}

/// What gpsd's identification of a receiver means for power control: which built-in model fits, which
/// commands apply, and what Lodestar will and won't do with it.
public struct ReceiverIdentification: Sendable, Hashable {
    public enum Family: Sendable, Hashable {
        /// u-blox; the generation is nil when gpsd has not (yet) reported the versions.
        case ublox(UBloxGeneration?)
        case mediatek
        case sirf
        /// An NMEA receiver gpsd knows nothing more about.
        case nmea
        /// Another gpsd driver: Lodestar has no commands for it.
        case unknown(driver: String)
    }

    public var family: Family
    /// The built-in model that describes it; nil when none does.
    public var model: ReceiverModel?
    /// The commands that apply; empty when Lodestar can only close the device.
    public var commands: Set<PowerCommand>
    /// One sentence on what Lodestar will and won't do with this receiver.
    public var summary: String

    /// From what gpsd reported (gpsd's driver names: `u-blox`, `MTK-3301`, `SiRF`, `NMEA0183`).
    public init(_ identity: ReceiverIdentity) {
        switch identity.driver {
        case "u-blox":
            let versions = Self.ubloxVersions(identity)
            let generation = UBloxGeneration(hardware: versions.hardware, protocolVersion: versions.protocolVersion)
            family = .ublox(generation)
            switch generation {
            case .legacy:
                model = .ublox6
                commands = [.ubxGNSSStopStart, .ubxBackupRequest, .ubxReceiverMode]
                summary = "u-blox 6/7: GNSS stop/start, backup by RXM-PMREQ, power save by CFG-RXM"
            case .m8:
                model = .ublox8
                commands = [.ubxGNSSStopStart, .ubxBackupRequest, .ubxReceiverMode, .ubxPowerSetup]
                if let version = versions.protocolVersion, version >= 18 {
                    commands.insert(.ubxBackupRequestWithWakeupSources)
                }
                summary = "u-blox 8: GNSS stop/start, backup by RXM-PMREQ, power save by CFG-RXM or CFG-PMS"
            case .configurationInterface:
                // No built-in model has M9/M10 currents: the configured model stays.
                model = nil
                commands = [.ubxGNSSStopStart, .ubxBackupRequestWithWakeupSources, .ubxOperateMode]
                summary =
                    "u-blox M9/M10/F9: GNSS stop/start, backup by RXM-PMREQ, power save by CFG-VALSET;"
                    + " no built-in model, the configured one is used"
            case nil:
                model = nil
                commands = [.ubxGNSSStopStart]
                summary =
                    "u-blox of unknown generation: only GNSS stop/start (every generation takes it)"
                    + " until gpsd reports the versions"
            }
        case "MTK-3301":
            // gpsd's driver for the whole PMTK family (MT3318, MT3329, MT3339, MT3333): the same commands.
            family = .mediatek
            model = .mt3339
            commands = [.pmtkStandby, .pmtkPeriodic]
            summary = "MediaTek: standby by PMTK161, periodic and AlwaysLocate by PMTK225"
        case "SiRF":
            family = .sirf
            model = .sirf4
            commands = []
            summary = "SiRF: modelled as sirf4, but Lodestar sends no SiRF frames yet; it can only close the device"
        case "NMEA0183":
            family = .nmea
            model = .genericNMEA
            commands = []
            summary = "generic NMEA: no commands; Lodestar can only close the device"
        default:
            family = .unknown(driver: identity.driver)
            model = nil
            commands = []
            summary =
                "gpsd driver \(identity.driver): no commands and no built-in model; Lodestar can only close"
                + " the device"
        }
    }

    /// The hardware version and protocol version from gpsd's u-blox `subtype` (`SW 7.03 (45969),HW 00040007`)
    /// and `subtype1` (`PROTVER 14.00,GPS;…` or `,ROM BASE 0x118B2060,FWVER=HPG 1.13,PROTVER=27.12,…`).
    static func ubloxVersions(_ identity: ReceiverIdentity) -> (hardware: String?, protocolVersion: Double?) {
        let fields = [identity.subtype, identity.subtype1].compactMap { $0 }
            .flatMap { $0.split(separator: ",") }
        let hardware = fields.lazy.compactMap { field -> String? in
            let trimmed = field.drop { $0 == " " }
            guard trimmed.hasPrefix("HW ") else { return nil }
            return String(trimmed.dropFirst(3).prefix { !$0.isWhitespace })
        }.first
        let protocolVersion = fields.lazy.compactMap(UBXVersion.protocolVersion(fromField:)).first
        return (hardware, protocolVersion)
    }
}
