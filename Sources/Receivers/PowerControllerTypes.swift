import GPSD
import Policy

/// What the runtime tells a `PowerController`, each stamped with the monotonic `now` it happened at.
public enum PowerControllerInput: Sendable, Equatable {
    /// The device gpsd reads the receiver on, or what gpsd identified there, changed (`ReceiverDeviceTracker`).
    case receiverChanged(devicePath: String?, identity: ReceiverIdentity?)
    /// Output from the receiver on `devicePath` (any TPV or SKY); `hasFix` when it carries a 2D or 3D fix.
    case output(devicePath: String, hasFix: Bool)
    /// gpsd (re)opened the device. It probes it on opening, which wakes a sleeping MTK or a u-blox in
    /// UART-wake backup.
    case deviceActivated(devicePath: String)
    /// gpsd closed the device (a USB port switched off, the 60 s release, an unplugged receiver).
    case deviceClosed(devicePath: String)
    /// The policy asked for `regime`.
    case regimeRequested(ReceiverRegime, reason: String)
    /// gpsd's answer to a `.write`: exactly one per write, in the order the writes were made.
    case commandReply(GPSDCommandOutcome)
    /// A `.setPower` could not be carried out.
    case switchFailed(PowerSwitchError)
    /// Nothing happened: sent at `nextDeadline`.
    case tick
    /// Lodestar is stopping: leave the receiver in `exitRegime` (the profile's, continuous by default).
    case shutdown(exitRegime: ReceiverRegime)
}

/// One write to the receiver through gpsd (`ReceiverContext.writeToReceiver`): at most 255 bytes.
public enum ReceiverWrite: Sendable, Hashable, CustomStringConvertible {
    case message(ReceiverMessage)
    /// `RegimeWake.preamble`: bytes that wake a receiver sleeping until UART traffic and are lost doing it.
    case wakePreamble

    public var bytes: [UInt8] {
        switch self {
        case .message(let message): message.bytes
        case .wakePreamble: RegimeWake.preamble
        }
    }

    public var description: String {
        switch self {
        case .message(let message): message.name
        case .wakePreamble: "wake preamble (\(RegimeWake.preamble.count) × 0xFF)"
        }
    }
}

/// What a `PowerController` asks the runtime to do, in order.
public enum PowerControllerAction: Sendable, Hashable {
    /// Write to the receiver; answer with one `.commandReply`.
    case write(ReceiverWrite)
    /// A woken receiver settles: the next writes follow at `until` (the controller's `nextDeadline`). Nothing
    /// to do but call `handle` then; never a sleep.
    case wait(until: Double)
    /// Switch the receiver's power (`PowerSwitch.setPowered`); answer a failure with `.switchFailed`.
    case setPower(Bool)
    /// The regimes the policy may use from now on.
    case offerRegimes(Set<ReceiverRegime>)
    case report(PowerEvent)
}

/// How long the controller waits for each effect, in seconds.
public struct PowerControllerTimeouts: Sendable, Hashable {
    /// No output this long after a down command: the receiver went quiet.
    public var quietWindow: Double
    /// Output still coming this long after a down command: the command had no effect. Well within two of
    /// the policy's probe intervals (30 s and more), so a stationary policy learns it before its second probe.
    public var noEffectDeadline: Double
    /// No output this long after a wake: it failed. Nil: twice the model's cold time to first fix plus 10 s.
    public var wakeTimeout: Double?
    /// The first retry after a failed wake; each next one waits twice as long, up to `maximumRetryInterval`.
    public var firstRetryInterval: Double
    public var maximumRetryInterval: Double
    /// How long gpsd's probing of a device it (re)opened lasts before the regime is applied again.
    public var probeSettle: Double

    public init(
        quietWindow: Double = 2, noEffectDeadline: Double = 6, wakeTimeout: Double? = nil,
        firstRetryInterval: Double = 5, maximumRetryInterval: Double = 300, probeSettle: Double = 4
    ) {
        self.quietWindow = quietWindow
        self.noEffectDeadline = noEffectDeadline
        self.wakeTimeout = wakeTimeout
        self.firstRetryInterval = firstRetryInterval
        self.maximumRetryInterval = maximumRetryInterval
        self.probeSettle = probeSettle
    }
}

public struct PowerControllerConfiguration: Sendable, Hashable {
    /// The receiver model the policy was configured with (its cold TTFF sizes the wake timeout).
    public var model: ReceiverModel
    /// The mechanism to use; nil: a power switch when there is one, else by what gpsd identified (u-blox:
    /// UBX, MediaTek: PMTK, anything else: release through gpsd).
    public var mechanism: PowerControl?
    /// How the receiver is wired; nil: from the device name (`ReceiverConnection(devicePath:)`).
    public var connection: ReceiverConnection?
    /// Whether the runtime holds a `PowerSwitch` for the receiver.
    public var hasPowerSwitch: Bool
    public var timeouts: PowerControllerTimeouts
    /// Whether gpsd is known to run read-only (`-b`), which drops every write; nil when not known.
    public var readOnlyGPSD: Bool?

    public init(
        model: ReceiverModel, mechanism: PowerControl? = nil, connection: ReceiverConnection? = nil,
        hasPowerSwitch: Bool = false, timeouts: PowerControllerTimeouts = PowerControllerTimeouts(),
        readOnlyGPSD: Bool? = nil
    ) {
        (self.model, self.mechanism, self.connection, self.hasPowerSwitch, self.timeouts, self.readOnlyGPSD)
            = (model, mechanism, connection, hasPowerSwitch, timeouts, readOnlyGPSD)
    }

    /// `timeouts.wakeTimeout`, else 10 s. A woken receiver talks within a second or two, fix or not (NMEA
    /// without a position, gpsd's TPV with mode 1), and a USB device switched back on enumerates within a
    /// few: silence after 10 s is a receiver that did not wake. The first fix may take its cold start on
    /// top; the policy's own acquisition timeout covers that.
    public var wakeTimeout: Double {
        timeouts.wakeTimeout ?? 10
    }
}

extension ReceiverMessage {
    /// The message's name for events and logs: `CFG-RST GNSS stop`, `$PMTK161,0`.
    public var name: String {
        switch self {
        case .pmtk(let sentence): return "$" + sentence.body
        case .ubx(let frame):
            switch (frame.messageClass, frame.id) {
            case (0x06, 0x04):
                switch frame.payload.count > 2 ? frame.payload[2] : nil {
                case 0x08: return "CFG-RST GNSS stop"
                case 0x09: return "CFG-RST GNSS start"
                default: return "CFG-RST"
                }
            case (0x0A, 0x04) where frame.payload.isEmpty: return "MON-VER poll"
            case (0x02, 0x41): return "RXM-PMREQ backup"
            case (0x06, 0x11):
                return frame.payload.count > 1 && frame.payload[1] == 1 ? "CFG-RXM power save" : "CFG-RXM continuous"
            case (0x06, 0x86):
                return frame.payload.count > 1 && frame.payload[1] == 0 ? "CFG-PMS full power" : "CFG-PMS power save"
            case (0x06, 0x8A):
                return frame.payload.last == UBXCommand.OperateMode.full.rawValue
                    ? "CFG-VALSET operate mode full" : "CFG-VALSET operate mode power save"
            default:
                return "UBX \(hex(frame.messageClass))-\(hex(frame.id))"
            }
        }
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
}
