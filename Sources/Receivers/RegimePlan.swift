import Policy

/// One command written to the receiver, kept as the frame it was built from so it can be logged and checked.
public enum ReceiverMessage: Sendable, Hashable {
    case ubx(UBXFrame)
    case pmtk(PMTKSentence)

    public var bytes: [UInt8] {
        switch self {
        case .ubx(let frame): frame.bytes
        case .pmtk(let sentence): sentence.bytes
        }
    }
}

/// How a receiver leaves the regime a plan put it in, before the next plan's messages can be heard.
public enum RegimeWake: Sendable, Hashable {
    /// It keeps running (continuous, power save): the next messages are heard as they are.
    case running
    /// Its command interface stays up: the next plan's messages (GNSS start) wake it.
    case nextMessages
    /// Any byte on its UART wakes it, but the bytes that do are lost: send `RegimeWake.preamble`, wait
    /// `RegimeWake.settleMilliseconds`, then the next messages. With `selfWakeMilliseconds` it also wakes by
    /// itself that long after the command.
    case anyByte(selfWakeMilliseconds: UInt32?)

    /// Wake bytes: 0xFF is no UBX sync and no NMEA `$`, so a receiver that is already awake ignores them.
    public static let preamble: [UInt8] = Array(repeating: 0xFF, count: 8)
    /// Conservative, from no data sheet: how long a woken receiver is given before it is sent commands. The
    /// runtime confirms the wake by the receiver's output resuming.
    public static let settleMilliseconds = 1000

    /// What to send before the next plan's messages: the preamble for `anyByte`, else nothing.
    public var bytesBeforeNextMessages: [UInt8] {
        if case .anyByte = self { return Self.preamble }
        return []
    }
}

/// A regime the receiver cannot be put in by command on this connection, and what a person can do instead.
public struct RegimeUnreachable: Error, Sendable, Hashable {
    public var regime: ReceiverRegime
    public var reason: String
}

/// The commands that put an identified receiver in a regime, from whatever regime it is in once the previous
/// plan's `wake` has been done, and how it leaves that regime again. Pure: nothing is sent here.
///
/// u-blox: continuous is a GNSS start and full power, power save a GNSS start and the generation's power save
/// (CFG-VALSET of CFG-PM-OPERATEMODE on M9/M10, CFG-PMS on u-blox 8, CFG-RXM on 6/7), standby a GNSS stop,
/// off RXM-PMREQ backup, only over the UART (see `ReceiverConnection`). MediaTek: continuous PMTK225,0,
/// power save PMTK225 periodic standby, standby PMTK161,0. Receivers without commands only run.
public struct RegimePlan: Sendable, Hashable {
    public var regime: ReceiverRegime
    /// In order.
    public var messages: [ReceiverMessage]
    public var wake: RegimeWake

    /// Each message's bytes, in order (one `?DEVICE` hexdata write each).
    public var bytes: [[UInt8]] { messages.map(\.bytes) }

    /// MediaTek periodic standby: run 3 s, sleep 12 s; 18 s and 72 s while there is no fix. Standby (not
    /// backup) between runs, so any byte ends it at any time.
    public static let mediatekPowerSave = PMTKCommand.periodic(
        .standby, run: 3000, sleep: 12000, secondRun: 18000, secondSleep: 72000)

    /// The plan for `regime`. `backupMilliseconds` is how long a u-blox stays in backup (off) before it wakes
    /// by itself; 0 = until woken through its UART.
    public static func plan(
        _ regime: ReceiverRegime, for receiver: ReceiverIdentification, on connection: ReceiverConnection,
        backupMilliseconds: UInt32 = 0
    ) -> Result<RegimePlan, RegimeUnreachable> {
        switch receiver.family {
        case .ublox(let generation):
            return ublox(regime, receiver, generation, connection, backupMilliseconds)
        case .mediatek:
            return mediatek(regime)
        case .sirf, .nmea, .unknown:
            return withoutCommands(regime, receiver)
        }
    }

    /// The regimes `plan` can reach for this receiver and connection: the ones the policy should be offered.
    public static func reachableRegimes(
        for receiver: ReceiverIdentification, on connection: ReceiverConnection
    ) -> Set<ReceiverRegime> {
        Set(ReceiverRegime.allCases.filter { (try? plan($0, for: receiver, on: connection).get()) != nil })
    }

    // MARK: - u-blox

    private static func ublox(
        _ regime: ReceiverRegime, _ receiver: ReceiverIdentification, _ generation: UBloxGeneration?,
        _ connection: ReceiverConnection, _ backupMilliseconds: UInt32
    ) -> Result<RegimePlan, RegimeUnreachable> {
        let commands = receiver.commands
        switch regime {
        case .continuous, .powerSave:
            let powerSave = regime == .powerSave
            guard let mode = ubloxPowerMode(commands, powerSave: powerSave) else {
                if powerSave {
                    return .failure(
                        RegimeUnreachable(
                            regime: regime,
                            reason:
                                "gpsd has not reported this u-blox's hardware or protocol version, so its power save"
                                + " command is not known; power save is offered once its DEVICE report has them"))
                }
                // No power mode command known: a GNSS start is all continuous needs.
                return .success(RegimePlan(regime: regime, messages: [.ubx(UBXCommand.gnssStart)], wake: .running))
            }
            return .success(
                RegimePlan(regime: regime, messages: [.ubx(UBXCommand.gnssStart), .ubx(mode)], wake: .running))
        case .standby:
            return .success(RegimePlan(regime: regime, messages: [.ubx(UBXCommand.gnssStop)], wake: .nextMessages))
        case .off:
            switch connection {
            case .usb:
                return .failure(
                    RegimeUnreachable(
                        regime: regime,
                        reason:
                            "a u-blox on its own USB port does not go below standby: it stays out of backup while"
                            + " USB is connected, and forced into it, USB traffic does not wake it. Use standby,"
                            + " connect the receiver by its UART (a USB-serial adapter or the board's serial port),"
                            + " or switch its power (GPIO enable line, USB port power)"))
            case .unknown:
                return .failure(
                    RegimeUnreachable(
                        regime: regime,
                        reason:
                            "the device name does not say whether this u-blox is on USB or on its UART, and only"
                            + " UART traffic wakes it from backup. Use standby, or name the device by its kernel"
                            + " name (/dev/ttyACM…, /dev/ttyUSB…, /dev/ttyAMA…)"))
            case .uart:
                break
            }
            let selfWake = backupMilliseconds == 0 ? nil : backupMilliseconds
            if commands.contains(.ubxBackupRequestWithWakeupSources) {
                // `force`: a board powered over USB as well would otherwise stay out of backup, and the
                // commands go over the UART anyway.
                let frame = UBXCommand.backup(milliseconds: backupMilliseconds, force: true, wakeupSources: .uartRX)
                return .success(
                    RegimePlan(regime: regime, messages: [.ubx(frame)], wake: .anyByte(selfWakeMilliseconds: selfWake)))
            }
            if commands.contains(.ubxBackupRequest) {
                // The 8-byte form has no wake-up sources: UART RX activity and the duration wake it.
                let frame = UBXCommand.backup(milliseconds: backupMilliseconds)
                return .success(
                    RegimePlan(regime: regime, messages: [.ubx(frame)], wake: .anyByte(selfWakeMilliseconds: selfWake)))
            }
            return .failure(
                RegimeUnreachable(
                    regime: regime,
                    reason:
                        "gpsd has not reported this u-blox's hardware or protocol version, so its backup command form"
                        + " is not known; use standby until its DEVICE report has them"))
        }
    }

    /// The power mode command the receiver takes, set to power save or full power; the newest interface wins.
    private static func ubloxPowerMode(_ commands: Set<PowerCommand>, powerSave: Bool) -> UBXFrame? {
        if commands.contains(.ubxOperateMode) {
            // Cyclic tracking keeps a fix every second, as the power save regime promises.
            return UBXCommand.operateMode(powerSave ? .cyclicTracking : .full)
        }
        if commands.contains(.ubxPowerSetup) {
            return UBXCommand.powerSetup(powerSave ? .balanced : .fullPower)
        }
        if commands.contains(.ubxReceiverMode) {
            return UBXCommand.receiverMode(powerSave: powerSave)
        }
        return nil
    }

    // MARK: - MediaTek

    private static func mediatek(_ regime: ReceiverRegime) -> Result<RegimePlan, RegimeUnreachable> {
        switch regime {
        case .continuous:
            .success(RegimePlan(regime: regime, messages: [.pmtk(PMTKCommand.normalMode)], wake: .running))
        case .powerSave:
            .success(RegimePlan(regime: regime, messages: [.pmtk(mediatekPowerSave)], wake: .running))
        case .standby:
            .success(
                RegimePlan(
                    regime: regime, messages: [.pmtk(PMTKCommand.standby)], wake: .anyByte(selfWakeMilliseconds: nil)))
        case .off:
            .failure(
                RegimeUnreachable(
                    regime: regime,
                    reason:
                        "a MediaTek receiver has no off a command can undo (PMTK225,4 backup is only left by its"
                        + " FORCE_ON pin); use standby (PMTK161), or switch its power (GPIO enable line, USB port"
                        + " power)"))
        }
    }

    // MARK: - No commands

    private static func withoutCommands(
        _ regime: ReceiverRegime, _ receiver: ReceiverIdentification
    ) -> Result<RegimePlan, RegimeUnreachable> {
        let what: String
        switch receiver.family {
        case .sirf: what = "Lodestar sends no SiRF commands yet"
        case .unknown(let driver): what = "Lodestar has no commands for gpsd's \(driver) driver"
        default: what = "a generic NMEA receiver takes no power commands"
        }
        switch regime {
        case .continuous:
            // It runs as it is: nothing to send.
            return .success(RegimePlan(regime: regime, messages: [], wake: .running))
        case .powerSave, .standby:
            return .failure(
                RegimeUnreachable(
                    regime: regime,
                    reason:
                        "\(what): it keeps running until its power is switched; closing the device is all Lodestar"
                        + " can do"))
        case .off:
            return .failure(
                RegimeUnreachable(
                    regime: regime,
                    reason:
                        "\(what): closing the device leaves it drawing current; to turn it off, switch its power"
                        + " (GPIO enable line, USB port power)"))
        }
    }
}
