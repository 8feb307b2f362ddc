import Capture
import GPSD
import GPSModel
import Policy
import Receivers
import Simulation
import Synchronization
import SystemInterface

/// A receiver on the device side of a pty that a real gpsd reads: it plays a capture's
/// fixes as NMEA (or UBX NAV-PVT once gpsd has switched a u-blox to binary), identifies itself as gpsd
/// expects, and obeys the power commands gpsd passes on (`RegimePlan`). Its fixes follow
/// `SimulatedReceiver`, so they are the ones `replay --profile` simulates: none while down, none for the
/// model's time to first fix after a wake.
///
/// Time is the emulator's clock, in capture seconds: the capture's first `t` at `start()`, then advancing
/// `speed` capture seconds per wall second. Timed backups (RXM-PMREQ durations) run on that clock too.
public final class EmulatedReceiver: Sendable {
    /// Which receiver it plays.
    public enum Personality: String, Sendable, Hashable, CaseIterable {
        /// u-blox M8 on protocol 18: gpsd's `u-blox` driver. Unsolicited MON-VER at power-up, answers the
        /// MON-VER poll, CFG-PRT/CFG-MSG (binary output), CFG-RST GNSS stop/start, RXM-PMREQ backup,
        /// CFG-RXM/CFG-PMS/CFG-VALSET power save, ACK-ACK (ACK-NAK for CFG messages it does not know).
        case ublox8
        /// MediaTek MT3339 (GlobalTop PA6H): gpsd's `MTK-3301` driver. PMTK705 at power-up and for PMTK605,
        /// PMTK161 standby (any byte wakes it), PMTK225 modes, PMTK001 answers.
        case mtk3339
        /// NMEA only, no commands: gpsd's `NMEA0183` driver.
        case genericNMEA
    }

    /// What the receiver is doing; each has its current in the model.
    public enum PowerState: String, Sendable, Hashable, CaseIterable {
        case acquiring, tracking, powerSave, standby, backup, off

        /// The state a simulated replay's timeline has for it, to compare the two: the simulation knows no
        /// backup, which is how a u-blox is off by command (it charges `off` there; this charges `backup`).
        public var simulated: ReceiverInterval.State {
            switch self {
            case .acquiring: .acquiring
            case .tracking: .tracking
            case .powerSave: .powerSave
            case .standby: .standby
            case .backup, .off: .off
            }
        }
    }

    /// One stretch of the receiver's own timeline, in capture seconds.
    public struct PowerInterval: Sendable, Equatable {
        public var start: Double
        public var end: Double
        public var state: PowerState
        public var milliamps: Double
    }

    /// A command that reached the receiver, at emulator time `t`. `ignored`: the receiver did not act on it
    /// (another make's command, or the "ignores commands" fault).
    public struct ReceivedCommand: Sendable, Equatable {
        public var t: Double
        public var message: ReceiverMessage
        public var ignored: Bool
    }

    /// Faults to inject; settable before and during a run.
    public struct Faults: Sendable, Equatable {
        /// Takes commands (and still acknowledges them) but never acts on them.
        public var ignoresCommands = false
        /// Comes back from every wake in full power (its power save setting lost).
        public var losesConfigurationOnWake = false
        /// Stays down whatever wakes it (bytes, GNSS start, a backup's end, power).
        public var neverWakes = false
        /// Wakes as asked until it first goes down, then never again (sets `neverWakes` at that moment, on the
        /// receiver's clock, where a test polling for it could be late on a loaded machine).
        public var neverWakesOnceDown = false

        public init(
            ignoresCommands: Bool = false, losesConfigurationOnWake: Bool = false, neverWakes: Bool = false,
            neverWakesOnceDown: Bool = false
        ) {
            self.ignoresCommands = ignoresCommands
            self.losesConfigurationOnWake = losesConfigurationOnWake
            self.neverWakes = neverWakes
            self.neverWakesOnceDown = neverWakesOnceDown
        }
    }

    /// One capture epoch: the fix gpsd reported at capture time `t`.
    public struct Epoch: Sendable {
        public var t: Double
        public var fix: Fix

        public init(t: Double, fix: Fix) {
            self.t = t
            self.fix = fix
        }
    }

    public let personality: Personality
    public let model: ReceiverModel
    public let speed: Double
    public let epochs: [Epoch]

    private struct Shared {
        var core: EmulatedReceiverCore
        var terminal: PseudoTerminal?
        var readOffset = 0
        var started: Double?
        var nextEpoch = 0
        var stopping = false
        var loopDone = false
    }

    private let shared: Mutex<Shared>
    private let origin: Double

    /// The fixes of `capture` as the live path would hand them on (`CaptureReplayer`), on a new pty.
    /// `connection` decides what an RXM-PMREQ backup does: over `.usb` a u-blox only enters backup when
    /// forced and only its duration wakes it.
    public convenience init(
        capture: CaptureContents, personality: Personality, model: ReceiverModel, speed: Double = 1,
        connection: ReceiverConnection = .uart
    ) throws(SystemError) {
        var epochs: [Epoch] = []
        CaptureReplayer(capture).run(onEvent: { t, event in
            if case .fix(let fix) = event { epochs.append(Epoch(t: max(t, epochs.last?.t ?? t), fix: fix)) }
        })
        try self.init(epochs: epochs, personality: personality, model: model, speed: speed, connection: connection)
    }

    public init(
        epochs: [Epoch], personality: Personality, model: ReceiverModel, speed: Double = 1,
        connection: ReceiverConnection = .uart
    ) throws(SystemError) {
        self.personality = personality
        self.model = model
        self.speed = speed > 0 && speed.isFinite ? speed : 1
        self.epochs = epochs
        origin = epochs.first?.t ?? 0
        let terminal = try PseudoTerminal()
        shared = Mutex(
            Shared(
                core: EmulatedReceiverCore(
                    personality: personality, model: model, connection: connection, start: origin),
                terminal: terminal))
    }

    deinit {
        shared.withLock { $0.terminal }?.close()
    }

    // MARK: - Running

    /// The pty gpsd reads (nil while the receiver has disappeared).
    public var terminal: PseudoTerminal? { shared.withLock { $0.terminal } }

    /// The pty's device path for gpsd (`/dev/pts/N`); empty while disappeared.
    public var devicePath: String { terminal?.devicePath ?? "" }

    /// Starts the clock at the capture's first `t` and the receiver powered up and tracking, as the capture's
    /// receiver was: it announces itself (MON-VER, PMTK705) and plays the epochs from a thread of its own.
    /// Bytes gpsd wrote before are not heard (the receiver was not there yet).
    public func start() {
        let begin: Bool = shared.withLock { state in
            guard state.started == nil else { return false }
            state.started = monotonicSeconds()
            state.readOffset = state.terminal?.bytesFromHost.count ?? 0
            return true
        }
        guard begin else { return }
        write(shared.withLock { $0.core.powerUpMessages })
        // The thread holds the receiver only for a tick, so a receiver nobody stopped still goes away.
        let launched = DetachedThread.start { [weak self] in
            while let receiver = self, receiver.tick() {
                _ = receiver
                // Short turns: at 20 times real time a 10 ms turn would be 0.2 s of the receiver's clock.
                sleepSeconds(0.002)
            }
            self?.shared.withLock { $0.loopDone = true }
        }
        if !launched { shared.withLock { $0.loopDone = true } }
    }

    /// Stops playing and closes the pty (gpsd sees the device go).
    public func stop() {
        let terminal: PseudoTerminal? = shared.withLock { state in
            state.stopping = true
            defer { state.terminal = nil }
            return state.terminal
        }
        terminal?.close()
        while shared.withLock({ $0.started != nil && !$0.loopDone }) { sleepSeconds(0.005) }
    }

    /// Every epoch has been played.
    public var isFinished: Bool { shared.withLock { $0.nextEpoch >= epochs.count } }

    /// The emulator's clock: capture seconds = first t + (monotonic now − start) × speed; the first t before
    /// `start()`.
    public var clock: Double { shared.withLock { clock(startedAt: $0.started) } }

    private func clock(startedAt started: Double?) -> Double {
        guard let started else { return origin }
        return origin + (monotonicSeconds() - started) * speed
    }

    /// One turn of the playing thread: gpsd's bytes heard and answered, due epochs sent. False once stopped.
    private func tick() -> Bool {
        let (bytes, terminal, done): ([UInt8], PseudoTerminal?, Bool) = shared.withLock { state in
            if state.stopping { return ([], nil, true) }
            let now = clock(startedAt: state.started)
            var out: [UInt8] = []
            // Epochs due since the last turn came before what gpsd wrote meanwhile (heard now).
            while state.nextEpoch < epochs.count, epochs[state.nextEpoch].t <= now {
                let epoch = epochs[state.nextEpoch]
                // A timed wake due before this epoch comes first.
                out += state.core.advance(to: epoch.t)
                out += state.core.epoch(epoch.fix, at: epoch.t)
                state.nextEpoch += 1
            }
            out += state.core.advance(to: now)
            if let terminal = state.terminal {
                let received = terminal.bytesFromHost(from: state.readOffset)
                state.readOffset += received.count
                out += state.core.receive(received, at: now)
            }
            return (out, state.terminal, false)
        }
        if done { return false }
        if !bytes.isEmpty { terminal?.write(bytes, deadline: monotonicSeconds() + 2) }
        return true
    }

    private func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, let terminal else { return }
        terminal.write(bytes, deadline: monotonicSeconds() + 2)
    }

    // MARK: - Power input and faults

    /// The receiver's supply, switched from outside (GPIO enable line, USB port power). Off: output stops
    /// and its configuration (power save, gpsd's binary switch) is lost; on: it restarts, hot within the
    /// hot window if the model keeps a backup supply, else cold, and announces itself.
    public func setPowered(_ powered: Bool) {
        write(shared.withLock { $0.core.setPowered(powered, at: clock(startedAt: $0.started)) })
    }

    public var faults: Faults {
        get { shared.withLock { $0.core.faults } }
        set { shared.withLock { $0.core.faults = newValue } }
    }

    /// The device is unplugged: the pty closes (gpsd reports the device gone) and the receiver loses power.
    public func disappear() {
        let terminal: PseudoTerminal? = shared.withLock { state in
            _ = state.core.setPowered(false, at: clock(startedAt: state.started))
            defer { state.terminal = nil }
            return state.terminal
        }
        terminal?.close()
    }

    /// Plugged in again: a new pty, the receiver powered up. Returns its device path, which the kernel may
    /// give the same number as before. gpsd learns of it as its hotplug would tell it: the old path removed
    /// (`PrivateGPSD.removeDevice`, refused if gpsd already dropped it), then `addDevice(path)`. Not
    /// `addDeviceAndWait`: gpsd 3.22 reads and reports a device added where another was before, but sends
    /// no DEVICE report naming its driver, which that waits for. The receiver announces itself again when
    /// gpsd first writes to it (its probes on opening).
    ///
    /// `avoiding`: device paths it must not come back on, as a USB receiver that comes back as `ttyACM1`
    /// (ptys taken meanwhile are held until a free one is found, then closed).
    @discardableResult
    public func reappear(avoiding paths: Set<String> = []) throws(SystemError) -> String {
        var held: [PseudoTerminal] = []
        defer { for pty in held { pty.close() } }
        var terminal = try PseudoTerminal()
        while paths.contains(terminal.devicePath), held.count < 16 {
            held.append(terminal)
            terminal = try PseudoTerminal()
        }
        let greeting: [UInt8] = shared.withLock { state in
            state.terminal = terminal
            state.readOffset = 0
            return state.core.setPowered(true, at: clock(startedAt: state.started))
        }
        write(greeting)
        return terminal.devicePath
    }

    // MARK: - What happened

    /// What the receiver is doing now.
    public var powerState: PowerState {
        shared.withLock { state in
            let now = clock(startedAt: state.started)
            return state.core.changes.last { $0.t <= now }?.state ?? .tracking
        }
    }

    /// The receiver's timeline of power states and currents up to now.
    public var timeline: [PowerInterval] { timeline(until: nil) }

    /// The timeline up to capture time `t` (nil: now), e.g. the capture's end to compare with a replay.
    public func timeline(until t: Double?) -> [PowerInterval] {
        shared.withLock { $0.core.timeline(until: t ?? clock(startedAt: $0.started)) }
    }

    /// Charge drawn over the timeline up to capture time `t` (nil: now), in mAh (the unit
    /// `replay --evaluate` reports).
    public func energyMilliampHours(until t: Double? = nil) -> Double {
        timeline(until: t).reduce(0) { $0 + $1.milliamps * ($1.end - $1.start) } / 3600
    }

    /// Every command gpsd passed on, in order, with its emulator time.
    public var commands: [ReceivedCommand] { shared.withLock { $0.core.commands } }

    /// Whether NMEA output is on (off once gpsd has switched a u-blox to binary).
    public var sendsNMEA: Bool { shared.withLock { $0.core.sendsNMEA } }
}

/// A power switch in front of an emulated receiver: what a GPIO enable line or a USB port's power does to it,
/// for the tests of the switch-driven power paths (the "injected line").
public final class EmulatedPowerSwitch: PowerSwitch {
    public let receiver: EmulatedReceiver
    public let description: String
    /// USB port power: off unplugs the device (its pty closes), on plugs it in again on a new pty and hands
    /// the new path to `onReappear` (a test adds it to gpsd there, as gpsd's hotplug would).
    public let removesDevice: Bool
    private let onReappear: @Sendable (String) -> Void
    private let failure: Mutex<PowerSwitchError?>

    public init(
        receiver: EmulatedReceiver, description: String = "emulated power switch", removesDevice: Bool = false,
        onReappear: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.receiver = receiver
        self.description = description
        self.removesDevice = removesDevice
        self.onReappear = onReappear
        failure = Mutex(nil)
    }

    /// Makes every later `setPowered` fail with `error` (nil: work again), as a line another process holds.
    public func failWith(_ error: PowerSwitchError?) {
        failure.withLock { $0 = error }
    }

    public func setPowered(_ powered: Bool) throws(PowerSwitchError) {
        if let error = failure.withLock({ $0 }) { throw error }
        guard removesDevice else {
            receiver.setPowered(powered)
            return
        }
        if !powered {
            receiver.disappear()
        } else if receiver.terminal == nil {
            do {
                onReappear(try receiver.reappear())
            } catch {
                throw PowerSwitchError("\(description): no new pty for the receiver: \(error)")
            }
        }
    }
}
