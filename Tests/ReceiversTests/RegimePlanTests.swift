import Policy
@testable import Receivers
import Testing

@Suite struct RegimePlanTests {
    /// gpsd DEVICE reports (as in ReceiverIdentificationTests), by the receiver they identify.
    enum Receiver: String, Sendable, CaseIterable {
        case ublox7, ublox8Protocol15, ublox8Protocol18, ubloxF9, ubloxUnreported, mediatek, sirf, nmea, garmin

        var identification: ReceiverIdentification {
            switch self {
            case .ublox7:
                ublox("SW 1.00 (59842),HW 00070000", "PROTVER 14.00,GPS;SBAS;GLO;QZSS")
            case .ublox8Protocol15:
                ublox("SW 2.01 (75350),HW 00080000", "PROTVER 15.00,GPS;GLO;SBAS;QZSS")
            case .ublox8Protocol18:
                ublox(
                    "SW ROM CORE 3.01 (107888),HW 00080000",
                    ",FWVER=SPG 3.01,PROTVER=18.00,GPS;GLO;GAL;BDS,SBAS;IMES;QZSS")
            case .ubloxF9:
                ublox(
                    "SW EXT CORE 1.00 (f10c36),HW 00190000",
                    ",ROM BASE 0x118B2060,FWVER=HPG 1.13,PROTVER=27.12,MOD=ZED-F9P,GPS;GLO;GAL;BDS")
            case .ubloxUnreported: ublox(nil, nil)
            case .mediatek: ReceiverIdentification(ReceiverIdentity(path: "/dev/x", driver: "MTK-3301"))
            case .sirf: ReceiverIdentification(ReceiverIdentity(path: "/dev/x", driver: "SiRF"))
            case .nmea: ReceiverIdentification(ReceiverIdentity(path: "/dev/x", driver: "NMEA0183"))
            case .garmin: ReceiverIdentification(ReceiverIdentity(path: "/dev/x", driver: "Garmin NMEA"))
            }
        }

        private func ublox(_ subtype: String?, _ subtype1: String?) -> ReceiverIdentification {
            ReceiverIdentification(
                ReceiverIdentity(path: "/dev/x", driver: "u-blox", subtype: subtype, subtype1: subtype1))
        }
    }

    struct Reachable: Sendable, CustomTestStringConvertible {
        var receiver: Receiver
        var connection: ReceiverConnection
        var regime: ReceiverRegime
        var messages: [ReceiverMessage]
        var wake: RegimeWake
        var testDescription: String { "\(receiver) \(connection) \(regime)" }
    }

    static let start = ReceiverMessage.ubx(UBXCommand.gnssStart)
    static let stop = ReceiverMessage.ubx(UBXCommand.gnssStop)
    /// Backup until woken (the older form, then the forced one that wakes on UART RX), and its wake.
    static let backup = ReceiverMessage.ubx(UBXCommand.backup(milliseconds: 0))
    static let forcedBackup = ReceiverMessage.ubx(UBXCommand.backup(milliseconds: 0, force: true, wakeupSources: .uartRX))
    static let anyByte = RegimeWake.anyByte(selfWakeMilliseconds: nil)

    static let reachable: [Reachable] = [
        Reachable(
            receiver: .ublox7, connection: .usb, regime: .continuous,
            messages: [start, .ubx(UBXCommand.receiverMode(powerSave: false))], wake: .running),
        Reachable(
            receiver: .ublox7, connection: .uart, regime: .powerSave,
            messages: [start, .ubx(UBXCommand.receiverMode(powerSave: true))], wake: .running),
        Reachable(receiver: .ublox7, connection: .usb, regime: .standby, messages: [stop], wake: .nextMessages),
        Reachable(receiver: .ublox7, connection: .uart, regime: .off, messages: [backup], wake: anyByte),
        Reachable(
            receiver: .ublox8Protocol15, connection: .usb, regime: .continuous,
            messages: [start, .ubx(UBXCommand.powerSetup(.fullPower))], wake: .running),
        Reachable(
            receiver: .ublox8Protocol15, connection: .usb, regime: .powerSave,
            messages: [start, .ubx(UBXCommand.powerSetup(.balanced))], wake: .running),
        Reachable(receiver: .ublox8Protocol15, connection: .uart, regime: .off, messages: [backup], wake: anyByte),
        Reachable(
            receiver: .ublox8Protocol18, connection: .unknown, regime: .powerSave,
            messages: [start, .ubx(UBXCommand.powerSetup(.balanced))], wake: .running),
        Reachable(receiver: .ublox8Protocol18, connection: .uart, regime: .off, messages: [forcedBackup], wake: anyByte),
        Reachable(
            receiver: .ubloxF9, connection: .usb, regime: .continuous,
            messages: [start, .ubx(UBXCommand.operateMode(.full))], wake: .running),
        Reachable(
            receiver: .ubloxF9, connection: .usb, regime: .powerSave,
            messages: [start, .ubx(UBXCommand.operateMode(.cyclicTracking))], wake: .running),
        Reachable(receiver: .ubloxF9, connection: .unknown, regime: .standby, messages: [stop], wake: .nextMessages),
        Reachable(receiver: .ubloxF9, connection: .uart, regime: .off, messages: [forcedBackup], wake: anyByte),
        Reachable(receiver: .ubloxUnreported, connection: .usb, regime: .continuous, messages: [start], wake: .running),
        Reachable(
            receiver: .ubloxUnreported, connection: .uart, regime: .standby, messages: [stop], wake: .nextMessages),
        Reachable(
            receiver: .mediatek, connection: .uart, regime: .continuous, messages: [.pmtk(PMTKCommand.normalMode)],
            wake: .running),
        Reachable(
            receiver: .mediatek, connection: .usb, regime: .powerSave,
            messages: [
                .pmtk(PMTKCommand.periodic(.standby, run: 3000, sleep: 12000, secondRun: 18000, secondSleep: 72000))
            ], wake: .running),
        Reachable(
            receiver: .mediatek, connection: .uart, regime: .standby, messages: [.pmtk(PMTKCommand.standby)],
            wake: anyByte),
        Reachable(receiver: .sirf, connection: .usb, regime: .continuous, messages: [], wake: .running),
        Reachable(receiver: .nmea, connection: .uart, regime: .continuous, messages: [], wake: .running),
        Reachable(receiver: .garmin, connection: .unknown, regime: .continuous, messages: [], wake: .running),
    ]

    @Test(arguments: reachable) func sendsTheBuildersFrames(row: Reachable) throws {
        let plan = try RegimePlan.plan(row.regime, for: row.receiver.identification, on: row.connection).get()
        #expect(plan.regime == row.regime)
        #expect(plan.messages == row.messages)
        #expect(plan.bytes == row.messages.map(\.bytes))
        #expect(plan.wake == row.wake)
    }

    struct Unreachable: Sendable, CustomTestStringConvertible {
        var receiver: Receiver
        var connection: ReceiverConnection
        var regime: ReceiverRegime
        /// What the reason must say for a person to act on it.
        var says: [String]
        var testDescription: String { "\(receiver) \(connection) \(regime)" }
    }

    static let unreachable: [Unreachable] = [
        Unreachable(
            receiver: .ublox8Protocol18, connection: .usb, regime: .off,
            says: ["own USB port", "USB traffic does not wake it", "Use standby", "UART", "GPIO"]),
        Unreachable(receiver: .ublox7, connection: .usb, regime: .off, says: ["own USB port", "Use standby"]),
        Unreachable(receiver: .ubloxF9, connection: .usb, regime: .off, says: ["own USB port", "Use standby"]),
        Unreachable(
            receiver: .ubloxF9, connection: .unknown, regime: .off,
            says: ["does not say whether", "Use standby", "/dev/ttyACM"]),
        Unreachable(
            receiver: .ubloxUnreported, connection: .uart, regime: .off, says: ["backup command form", "use standby"]),
        Unreachable(
            receiver: .ubloxUnreported, connection: .usb, regime: .off, says: ["own USB port", "Use standby"]),
        Unreachable(
            receiver: .ubloxUnreported, connection: .uart, regime: .powerSave,
            says: ["power save command is not known", "DEVICE report"]),
        Unreachable(receiver: .mediatek, connection: .uart, regime: .off, says: ["FORCE_ON", "use standby", "GPIO"]),
        Unreachable(receiver: .sirf, connection: .uart, regime: .off, says: ["no SiRF commands", "GPIO"]),
        Unreachable(receiver: .sirf, connection: .usb, regime: .standby, says: ["no SiRF commands", "closing"]),
        Unreachable(receiver: .sirf, connection: .usb, regime: .powerSave, says: ["no SiRF commands", "closing"]),
        Unreachable(receiver: .nmea, connection: .uart, regime: .off, says: ["generic NMEA", "GPIO"]),
        Unreachable(receiver: .nmea, connection: .uart, regime: .standby, says: ["generic NMEA", "closing"]),
        Unreachable(receiver: .nmea, connection: .uart, regime: .powerSave, says: ["generic NMEA", "closing"]),
        Unreachable(receiver: .garmin, connection: .usb, regime: .off, says: ["Garmin NMEA driver", "GPIO"]),
        Unreachable(receiver: .garmin, connection: .usb, regime: .standby, says: ["Garmin NMEA driver", "closing"]),
        Unreachable(receiver: .garmin, connection: .usb, regime: .powerSave, says: ["Garmin NMEA driver"]),
    ]

    @Test(arguments: unreachable) func saysWhyNot(row: Unreachable) {
        let result = RegimePlan.plan(row.regime, for: row.receiver.identification, on: row.connection)
        guard case .failure(let unreachable) = result else {
            Issue.record("reachable: \(result)")
            return
        }
        #expect(unreachable.regime == row.regime)
        for fragment in row.says {
            #expect(unreachable.reason.contains(fragment), "\(unreachable.reason)")
        }
    }

    struct ReachableSet: Sendable, CustomTestStringConvertible {
        var receiver: Receiver
        var connection: ReceiverConnection
        var regimes: Set<ReceiverRegime>
        var testDescription: String { "\(receiver) \(connection)" }
    }

    static let sets: [ReachableSet] = {
        var rows: [ReachableSet] = []
        for receiver in [Receiver.ublox7, .ublox8Protocol15, .ublox8Protocol18, .ubloxF9] {
            rows.append(ReachableSet(receiver: receiver, connection: .uart, regimes: Set(ReceiverRegime.allCases)))
            rows.append(
                ReachableSet(receiver: receiver, connection: .usb, regimes: [.continuous, .powerSave, .standby]))
            rows.append(
                ReachableSet(receiver: receiver, connection: .unknown, regimes: [.continuous, .powerSave, .standby]))
        }
        for connection in ReceiverConnection.allCases {
            rows.append(
                ReachableSet(receiver: .ubloxUnreported, connection: connection, regimes: [.continuous, .standby]))
            rows.append(
                ReachableSet(receiver: .mediatek, connection: connection, regimes: [.continuous, .powerSave, .standby]))
            for receiver in [Receiver.sirf, .nmea, .garmin] {
                rows.append(ReachableSet(receiver: receiver, connection: connection, regimes: [.continuous]))
            }
        }
        return rows
    }()

    @Test(arguments: sets) func offersOnlyWhatIsReachable(row: ReachableSet) {
        let identification = row.receiver.identification
        let reachable = RegimePlan.reachableRegimes(for: identification, on: row.connection)
        #expect(reachable == row.regimes)
        // Never more than the built-in model allows.
        if let model = identification.model { #expect(reachable.isSubset(of: model.supportedRegimes)) }
    }

    @Test func everyCombinationIsTestedAbove() {
        #expect(Set(Self.sets.map { "\($0.receiver) \($0.connection)" }).count
            == Receiver.allCases.count * ReceiverConnection.allCases.count)
    }

    @Test func backupForADurationWakesByItselfToo() throws {
        for receiver in [Receiver.ublox7, .ublox8Protocol18] {
            let plan = try RegimePlan.plan(
                .off, for: receiver.identification, on: .uart, backupMilliseconds: 60_000
            ).get()
            let frame =
                receiver == .ublox7
                ? UBXCommand.backup(milliseconds: 60_000)
                : UBXCommand.backup(milliseconds: 60_000, force: true, wakeupSources: .uartRX)
            #expect(plan.messages == [.ubx(frame)])
            #expect(plan.wake == .anyByte(selfWakeMilliseconds: 60_000))
        }
    }

    @Test func onlyAnyByteWakesSendAPreambleNoReceiverReadsAsACommand() {
        #expect(RegimeWake.anyByte(selfWakeMilliseconds: nil).bytesBeforeNextMessages == RegimeWake.preamble)
        #expect(RegimeWake.running.bytesBeforeNextMessages.isEmpty)
        #expect(RegimeWake.nextMessages.bytesBeforeNextMessages.isEmpty)
        #expect(!RegimeWake.preamble.isEmpty)
        #expect(!RegimeWake.preamble.contains(UBXFrame.sync[0]))
        #expect(!RegimeWake.preamble.contains(UInt8(ascii: "$")))
    }
}
