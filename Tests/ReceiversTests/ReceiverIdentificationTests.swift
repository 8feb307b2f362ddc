import Policy
@testable import Receivers
import Testing

@Suite struct ReceiverIdentificationTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var driver: String
        var subtype: String?
        var subtype1: String?
        var family: ReceiverIdentification.Family
        var model: String?
        var commands: Set<PowerCommand>
        var testDescription: String { "\(driver) \(subtype ?? "-") \(subtype1 ?? "-")" }
    }

    /// gpsd's DEVICE reports from real receivers (gpsd 3.16 to 3.27), and a few made up where marked.
    static let rows: [Row] = [
        Row(
            driver: "u-blox", subtype: "SW 7.03 (45969),HW 00040007", subtype1: nil, family: .ublox(.legacy),
            model: "ublox6", commands: [.ubxGNSSStopStart, .ubxBackupRequest, .ubxReceiverMode]),
        Row(
            driver: "u-blox", subtype: "SW 1.00 (59842),HW 00070000", subtype1: "PROTVER 14.00,GPS;SBAS;GLO;QZSS",
            family: .ublox(.legacy), model: "ublox6",
            commands: [.ubxGNSSStopStart, .ubxBackupRequest, .ubxReceiverMode]),
        Row(
            driver: "u-blox", subtype: "SW ROM CORE 3.01 (107888),HW 00080000",
            subtype1: ",FWVER=SPG 3.01,PROTVER=18.00,GPS;GLO;GAL;BDS,SBAS;IMES;QZSS", family: .ublox(.m8),
            model: "ublox8",
            commands: [
                .ubxGNSSStopStart, .ubxBackupRequest, .ubxBackupRequestWithWakeupSources, .ubxReceiverMode,
                .ubxPowerSetup,
            ]),
        Row(
            driver: "u-blox", subtype: "SW EXT CORE 1.00 (f10c36),HW 00190000",
            subtype1: ",ROM BASE 0x118B2060,FWVER=HPG 1.13,PROTVER=27.12,MOD=ZED-F9P,GPS;GLO;GAL;BDS,SBAS;QZSS",
            family: .ublox(.configurationInterface), model: nil,
            commands: [.ubxGNSSStopStart, .ubxBackupRequestWithWakeupSources, .ubxOperateMode]),
        Row(
            driver: "u-blox", subtype: "SW EXT CORE 1.00 (3fda8e),HW 00190000",
            subtype1: "ROM BASE 0x118B2060,FWVER=TIM 2.20,PROTVER=29.20,MOD=ZED-F9T,GPS;GLO;GAL;BDS,SBAS;QZSS,NAVIC",
            family: .ublox(.configurationInterface), model: nil,
            commands: [.ubxGNSSStopStart, .ubxBackupRequestWithWakeupSources, .ubxOperateMode]),
        // Versions not reported yet: only what every generation takes.
        Row(
            driver: "u-blox", subtype: nil, subtype1: nil, family: .ublox(nil), model: nil,
            commands: [.ubxGNSSStopStart]),
        // Made up: no hardware field, so the protocol version (an M10's) decides.
        Row(
            driver: "u-blox", subtype: "SW EXT CORE 1.00", subtype1: "PROTVER=34.10,MOD=MAX-M10S",
            family: .ublox(.configurationInterface), model: nil,
            commands: [.ubxGNSSStopStart, .ubxBackupRequestWithWakeupSources, .ubxOperateMode]),
        // Made up from a PMTK705 answer: the subtype does not change the model.
        Row(
            driver: "MTK-3301", subtype: "AXN_2.10_3339_2012072601,5223,PA6H,1.0", subtype1: nil, family: .mediatek,
            model: "mt3339", commands: [.pmtkStandby, .pmtkPeriodic]),
        Row(driver: "MTK-3301", family: .mediatek, model: "mt3339", commands: [.pmtkStandby, .pmtkPeriodic]),
        Row(
            driver: "SiRF", subtype: "9\u{6}GSD4e_4.1.2-B2_RPATCH.02-F-GPS-4R-1301151 01/17/2013 017", subtype1: nil,
            family: .sirf, model: "sirf4", commands: []),
        Row(driver: "NMEA0183", family: .nmea, model: "generic-nmea", commands: []),
        Row(
            driver: "NMEA0183", subtype: "UM621-02, G1B1L1E1, 2310414000033", subtype1: "SW R6.0.0.0Build2810,HW V1.2",
            family: .nmea, model: "generic-nmea", commands: []),
        Row(driver: "Garmin NMEA", family: .unknown(driver: "Garmin NMEA"), model: nil, commands: []),
    ]

    @Test(arguments: rows) func picksTheModelAndTheCommands(row: Row) {
        let identification = ReceiverIdentification(
            ReceiverIdentity(path: "/dev/ttyACM0", driver: row.driver, subtype: row.subtype, subtype1: row.subtype1))
        #expect(identification.family == row.family)
        #expect(identification.model?.name == row.model)
        #expect(identification.commands == row.commands)
        #expect(!identification.summary.isEmpty)
    }

    @Test func theModelsPickedAreTheBuiltInOnes() {
        for row in Self.rows {
            let model = ReceiverIdentification(ReceiverIdentity(path: "/dev/x", driver: row.driver)).model
            if let model { #expect(ReceiverModel.named(model.name) == model) }
        }
    }

    @Test(arguments: [
        ("00040007", nil, UBloxGeneration.legacy), ("00080000", 23.01, .m8), ("000A0000", nil, .configurationInterface),
        (nil, 13.0, .legacy), (nil, 15.0, .m8), (nil, 26.99, .m8), (nil, 27.0, .configurationInterface),
    ] as [(String?, Double?, UBloxGeneration)])
    func generationFromTheVersions(hardware: String?, protocolVersion: Double?, generation: UBloxGeneration) {
        #expect(UBloxGeneration(hardware: hardware, protocolVersion: protocolVersion) == generation)
    }

    @Test func noGenerationWithoutVersions() {
        #expect(UBloxGeneration(hardware: nil, protocolVersion: nil) == nil)
        #expect(UBloxGeneration(hardware: "12345678", protocolVersion: nil) == nil)
    }
}
