import GPSD
import GPSModel
import Policy
import Receivers
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// How a `LocationManager` powers its receiver down and up (docs/power-control.md). Without one the
/// receiver is left as it is and only the delivered locations follow the policy.
public struct ReceiverPowerSetup: Sendable {
    /// The mechanism; nil picks it from what gpsd identified (u-blox: UBX, MediaTek: PMTK, anything else:
    /// release through gpsd), or the switch when there is one.
    public var mechanism: PowerControl?
    /// How the receiver is wired; nil reads it from the device name (`/dev/ttyACM*` is USB, …).
    public var connection: ReceiverConnection?
    /// A GPIO enable line or a USB port's power, for the `gpio` and `usbPort` mechanisms.
    public var powerSwitch: (any PowerSwitch)?
    public var timeouts: PowerControllerTimeouts

    public init(
        mechanism: PowerControl? = nil, connection: ReceiverConnection? = nil, powerSwitch: (any PowerSwitch)? = nil,
        timeouts: PowerControllerTimeouts = PowerControllerTimeouts()
    ) {
        self.mechanism = mechanism
        self.connection = connection
        self.powerSwitch = powerSwitch
        self.timeouts = timeouts
    }
}

/// Runs a `PowerController` for the runtime, on the runtime's thread: feeds it gpsd's events, the policy's
/// regimes, gpsd's answers and its own deadlines, and carries out what it asks (writes through gpsd, the
/// switch, releasing the device). What it reports goes back to the runtime through `output`.
final class ReceiverPowerDriver {
    enum Output {
        case offer(Set<ReceiverRegime>)
        case report(PowerEvent)
        /// Bytes written to the receiver through gpsd, and what they were.
        case transmitted([UInt8], description: String)
    }

    private var controller: PowerController
    private var tracker = ReceiverDeviceTracker()
    private let setup: ReceiverPowerSetup
    private let model: ReceiverModel
    private let commands: GPSDCommandChannel
    private let device: String?
    private let inbox: Inbox
    /// What the controller said since the runtime last took it (`takeOutputs`).
    private var outputs: [(Output, Instant)] = []
    /// Writes gpsd has not answered yet.
    private(set) var unanswered = 0

    init(
        setup: ReceiverPowerSetup, model: ReceiverModel, host: String, port: String, device: String?,
        commands: GPSDCommandChannel, inbox: Inbox
    ) {
        self.setup = setup
        self.model = model
        self.commands = commands
        self.device = device
        self.inbox = inbox
        controller = PowerController(
            configuration: PowerControllerConfiguration(
                model: model, mechanism: setup.mechanism, connection: setup.connection,
                hasPowerSwitch: setup.powerSwitch != nil, timeouts: setup.timeouts,
                readOnlyGPSD: GPSDProcesses.readOnly(host: host, port: port)))
    }

    var nextDeadline: Instant? { controller.nextDeadline.map { Instant(seconds: $0) } }
    var isFinished: Bool { controller.isFinished }
    var achievedRegime: ReceiverRegime { controller.achievedRegime }
    var waitingForFirstFix: Bool { controller.isTimingFirstFix }
    /// What gpsd identified on the receiver's device, as far as the events so far say.
    var identity: ReceiverIdentity? { tracker.identity }
    /// The device commands go to: the receiver's as gpsd's events say, else the one named at start.
    var devicePath: String? { tracker.devicePath ?? device }

    /// One of gpsd's events, as the runtime receives it.
    func observe(_ event: LiveEvent, at now: Instant) {
        let receiverPath = tracker.devicePath
        if tracker.note(event) {
            // The receiver's device closed while another was already active (gpsd activated the replugged
            // receiver's new path first): the device is gone before that one becomes the receiver's, so it is
            // identified again (polled) and gpsd's first generic word for a replugged u-blox is not taken for a
            // receiver without commands.
            if case .deviceClosed(let path) = event, path == receiverPath, tracker.devicePath != nil {
                handle(.receiverChanged(devicePath: nil, identity: nil), at: now)
            }
            handle(.receiverChanged(devicePath: tracker.devicePath, identity: tracker.identity), at: now)
        }
        switch event {
        case .deviceActivated(let device):
            handle(.deviceActivated(devicePath: device.path), at: now)
        case .deviceClosed(let path):
            handle(.deviceClosed(devicePath: path), at: now)
        case .fix(let fix):
            guard let path = fix.device ?? tracker.devicePath else { return }
            handle(.output(devicePath: path, hasFix: fix.hasPosition), at: now)
        case .report(.sky(let sky)):
            guard let path = sky.device ?? tracker.devicePath else { return }
            handle(.output(devicePath: path, hasFix: false), at: now)
        default:
            break
        }
    }

    func requestRegime(_ regime: ReceiverRegime, reason: String, at now: Instant) {
        handle(.regimeRequested(regime, reason: reason), at: now)
    }

    /// What the controller said since the last call, in order: the runtime hands it on.
    func takeOutputs() -> [(Output, Instant)] {
        defer { outputs.removeAll() }
        return outputs
    }

    func reply(_ outcome: GPSDCommandOutcome, at now: Instant) {
        unanswered = max(unanswered - 1, 0)
        handle(.commandReply(outcome), at: now)
    }

    func advance(to now: Instant) {
        guard let deadline = controller.nextDeadline, deadline <= now.seconds else { return }
        handle(.tick, at: now)
    }

    func shutdown(exitRegime: ReceiverRegime, at now: Instant) {
        handle(.shutdown(exitRegime: exitRegime), at: now)
    }

    private func handle(_ input: PowerControllerInput, at now: Instant) {
        for action in controller.handle(input, now: now.seconds) { perform(action, at: now) }
    }

    private func perform(_ action: PowerControllerAction, at now: Instant) {
        switch action {
        case .write(let write):
            let context = ReceiverContext(
                devicePath: devicePath, identity: tracker.identity, model: model,
                commands: commands)
            outputs.append((.transmitted(write.bytes, description: write.description), now))
            unanswered += 1
            let inbox = inbox
            let bytes = write.bytes
            context.writeToReceiver(bytes) { outcome in
                guard case .refused(let message) = outcome, message.hasSuffix("is unknown."),
                    let path = context.devicePath
                else {
                    inbox.post(.powerReply(outcome))
                    return
                }
                inbox.post(.powerReply(writeToDeviceDirectly(bytes, path: path, refusal: message)))
            }
        case .wait:
            // The controller's own deadline covers it.
            break
        case .setPower(let powered):
            guard let powerSwitch = setup.powerSwitch else {
                handle(.switchFailed(PowerSwitchError("no power switch is configured")), at: now)
                return
            }
            do throws(PowerSwitchError) {
                try powerSwitch.setPowered(powered)
            } catch {
                handle(.switchFailed(error), at: now)
            }
        case .offerRegimes(let regimes):
            outputs.append((.offer(regimes), now))
        case .report(let event):
            outputs.append((.report(event), now))
        }
    }
}

/// Writes `bytes` to the receiver's device itself, when gpsd refused to because it has not identified the
/// receiver there (`Type of … is unknown.`). gpsd writes to a device only once it has decoded a packet from
/// it, and a receiver that was asleep when gpsd (re)opened its device (gpsd restarted while a u-blox was in
/// GNSS stop) says nothing gpsd could identify it by: it would sleep until it is power-cycled. Written
/// directly, the wake or the version poll makes it talk, gpsd identifies it, and the next writes go through
/// gpsd again. Needs write access to the device, which the udev rules give the daemon's group.
func writeToDeviceDirectly(_ bytes: [UInt8], path: String, refusal: String) -> GPSDCommandOutcome {
    func failed(_ call: String) -> GPSDCommandOutcome {
        let reason = Errno.current.description
        return .failed(
            reason: "gpsd refused (\(refusal)), and writing to \(path) directly failed at \(call): \(reason)")
    }
    let descriptor = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK)
    guard descriptor >= 0 else { return failed("open") }
    defer { close(descriptor) }
    // No one else has the tty open (gpsd could not), so it has the kernel's cooked defaults: ONLCR would turn
    // each 0x0A of a UBX frame (MON-VER's class) into 0D 0A, and ECHO would send the receiver's own output
    // back to it while the device is open. Raw, as gpsd sets it; the speed stays. Not a tty: written as it is.
    var attributes = termios()
    if tcgetattr(descriptor, &attributes) == 0 {
        cfmakeraw(&attributes)
        guard tcsetattr(descriptor, TCSANOW, &attributes) == 0 else { return failed("tcsetattr") }
    }
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return failed("write")
        }
        offset += written
    }
    return .answered(.device(DeviceInfo(path: path)))
}
