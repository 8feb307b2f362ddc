import GPSModel
import Policy
import Receivers
import Simulation

/// The emulated receiver's behaviour without threads or a pty: commands in, bytes out, on the emulator's
/// clock (capture seconds). `EmulatedReceiver` drives it.
struct EmulatedReceiverCore {
    let personality: EmulatedReceiver.Personality
    let model: ReceiverModel
    let connection: ReceiverConnection
    var faults = EmulatedReceiver.Faults()

    /// What the receiver is doing (the power state, before acquiring/tracking is told apart).
    enum Activity: Equatable {
        case running
        case standby
        /// RXM-PMREQ backup: wakes on a UART byte if `wakesOnByte`, and at `until` if set.
        case backup(wakesOnByte: Bool, until: Double?)
        case off
    }

    private(set) var activity: Activity = .running
    /// Configuration a power cut loses.
    private(set) var powerSaveConfigured = false
    /// CFG-PRT output protocols of the port: bit 0 UBX, bit 1 NMEA.
    private(set) var outputProtocols: UInt16 = 0x0003
    /// CFG-MSG rates of UBX messages, by class and id.
    private(set) var messageRates: [UInt16: UInt8] = [:]
    /// Decides when fixes exist, exactly as `replay --profile` does.
    private(set) var simulated: SimulatedReceiver
    private(set) var changes: [(t: Double, state: EmulatedReceiver.PowerState)] = []
    private(set) var commands: [EmulatedReceiver.ReceivedCommand] = []
    /// Set at each power-up until gpsd first writes (see `receive`).
    private var announcementPending = true
    private var ubxParser = UBXStreamParser()
    private var line: [UInt8]?

    init(
        personality: EmulatedReceiver.Personality, model: ReceiverModel, connection: ReceiverConnection, start: Double
    ) {
        self.personality = personality
        self.model = model
        self.connection = connection
        simulated = SimulatedReceiver(model: model, start: start)
        changes = [(start, .tracking)]
    }

    var isEmitting: Bool { activity == .running }

    /// NMEA output is on: gpsd 3.22 switches a u-blox to binary by setting each NMEA message's rate to 0
    /// (CFG-MSG), keeping the protocol on in CFG-PRT.
    var sendsNMEA: Bool { EmulatedOutput.Sentence.allCases.contains(where: sends) }

    private func sends(_ sentence: EmulatedOutput.Sentence) -> Bool {
        guard personality == .ublox8 else { return true }
        return outputProtocols & 0x02 != 0 && (messageRates[0xF000 | UInt16(sentence.rawValue)] ?? 1) > 0
    }

    private func sendsUBX(_ messageClass: UInt8, _ id: UInt8) -> Bool {
        personality == .ublox8 && outputProtocols & 0x01 != 0
            && (messageRates[UInt16(messageClass) << 8 | UInt16(id)] ?? 0) > 0
    }

    /// What the receiver sends when it powers up (and after a backup, which restarts it): its identity.
    var powerUpMessages: [UInt8] {
        switch personality {
        case .ublox8: outputProtocols & 0x01 != 0 ? EmulatedOutput.ublox8Version.bytes : []
        case .mtk3339: EmulatedOutput.mediatekFirmware.bytes
        case .genericNMEA: []
        }
    }

    // MARK: - Epochs

    /// The bytes for the capture epoch `fix` at `t`: the fix, a no-fix epoch while acquiring, or nothing while
    /// down.
    func epoch(_ fix: Fix, at t: Double) -> [UInt8] {
        guard isEmitting else { return [] }
        var shown = fix
        if !simulated.producesFix(at: t) {
            shown = Fix(mode: .noFix, time: fix.time)
        }
        let time = fix.time ?? UTCTime(seconds: Int64(t))
        // NAV-PVT carries the whole epoch for gpsd; NAV-EOE ends it when gpsd asked for it.
        var bytes = sendsUBX(0x01, 0x07) ? EmulatedOutput.navigationSolution(shown, time: time).bytes : []
        if sendsUBX(0x01, 0x61) { bytes += EmulatedOutput.endOfEpoch(time: time).bytes }
        return EmulatedOutput.nmeaEpoch(shown, time: time, including: sends) + bytes
    }

    // MARK: - Power

    /// A timed backup that is due wakes; the bytes it then sends.
    mutating func advance(to t: Double) -> [UInt8] {
        if case .backup(_, let until?) = activity, t >= until {
            return wake(at: until, restarts: true)
        }
        return []
    }

    mutating func setPowered(_ powered: Bool, at t: Double) -> [UInt8] {
        if !powered {
            guard activity != .off else { return [] }
            // The configuration lives in RAM (gpsd never saves it to battery-backed RAM or flash), so a power
            // cut loses it with or without a backup supply; the supply only keeps the aiding data, which
            // `SimulatedReceiver` turns into a hot start.
            resetConfiguration()
            goDown(.off, at: t)
            return []
        }
        guard activity == .off else { return [] }
        return wake(at: t, restarts: true)
    }

    /// Back up and running, unless the "never wakes" fault holds it down. A restart (power-up, backup)
    /// announces the receiver's identity.
    private mutating func wake(at t: Double, restarts: Bool) -> [UInt8] {
        guard !faults.neverWakes else { return [] }
        if faults.losesConfigurationOnWake { powerSaveConfigured = false }
        activity = .running
        applyRunningRegime(at: t)
        guard restarts else { return [] }
        announcementPending = true
        return powerUpMessages
    }

    private mutating func goDown(_ state: Activity, at t: Double) {
        activity = state
        if faults.neverWakesOnceDown { faults.neverWakes = true }
        let regime: ReceiverRegime = state == .standby ? .standby : .off
        _ = simulated.setRegime(regime, at: t)
        switch state {
        case .standby: record(.standby, at: t)
        case .backup: record(.backup, at: t)
        default: record(.off, at: t)
        }
    }

    private mutating func applyRunningRegime(at t: Double) {
        _ = simulated.setRegime(powerSaveConfigured ? .powerSave : .continuous, at: t)
        let steady: EmulatedReceiver.PowerState =
            model.effectiveRegime(simulated.regime) == .powerSave ? .powerSave : .tracking
        if simulated.fixAvailableFrom > t {
            record(.acquiring, at: t)
            record(steady, at: simulated.fixAvailableFrom)
        } else {
            record(steady, at: t)
        }
    }

    private mutating func setPowerSave(_ on: Bool, at t: Double) {
        powerSaveConfigured = on
        if activity == .running { applyRunningRegime(at: t) }
    }

    private mutating func resetConfiguration() {
        powerSaveConfigured = false
        outputProtocols = 0x0003
        messageRates = [:]
    }

    /// Appends a state change; a change dated later (the end of acquisition) is replaced by what comes now.
    private mutating func record(_ state: EmulatedReceiver.PowerState, at t: Double) {
        while let last = changes.last, last.t > t { changes.removeLast() }
        if let last = changes.last, last.state == state { return }
        if let last = changes.last, last.t == t { changes.removeLast() }
        if let last = changes.last, last.state == state { return }
        changes.append((t, state))
    }

    /// The timeline up to `t`.
    func timeline(until t: Double) -> [EmulatedReceiver.PowerInterval] {
        var intervals: [EmulatedReceiver.PowerInterval] = []
        for (index, change) in changes.enumerated() where change.t < t {
            let end = index + 1 < changes.count ? min(changes[index + 1].t, t) : t
            guard end > change.t else { continue }
            intervals.append(
                EmulatedReceiver.PowerInterval(
                    start: change.t, end: end, state: change.state, milliamps: current(change.state)))
        }
        return intervals
    }

    func current(_ state: EmulatedReceiver.PowerState) -> Double {
        switch state {
        case .acquiring: model.current.acquisition
        case .tracking: model.current.tracking
        case .powerSave: model.current.powerSave
        case .standby: model.current.standby
        case .backup: model.current.backup
        case .off: model.current.off
        }
    }

    // MARK: - Bytes from gpsd

    /// Takes bytes gpsd wrote at `t`; returns the answers. Bytes that wake a sleeping receiver are lost.
    mutating func receive(_ bytes: [UInt8], at t: Double) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        switch activity {
        case .off:
            return []
        case .backup(let wakesOnByte, _):
            return wakesOnByte ? wake(at: t, restarts: true) : []
        case .standby where personality == .mtk3339:
            return wake(at: t, restarts: false)
        case .running, .standby:
            break
        }
        var replies: [UInt8] = []
        // A receiver that powered up before gpsd opened its port announced itself to nobody: the first bytes
        // gpsd writes (its probes on opening) get the announcement again, so gpsd identifies it whenever
        // it (re)opens the device.
        if announcementPending {
            announcementPending = false
            replies += powerUpMessages
        }
        for frame in ubxParser.feed(bytes) { replies += handle(.ubx(frame), at: t) }
        for byte in bytes {
            if byte == UInt8(ascii: "$") {
                line = [byte]
            } else if line != nil {
                line?.append(byte)
                if byte == UInt8(ascii: "\n") || (line?.count ?? 0) > 200 {
                    if let text = line, let sentence = PMTKSentence(parsing: String(decoding: text, as: UTF8.self)) {
                        replies += handle(.pmtk(sentence), at: t)
                    }
                    line = nil
                }
            }
        }
        return replies
    }

    private mutating func handle(_ message: ReceiverMessage, at t: Double) -> [UInt8] {
        // Another make's commands are noise to this receiver.
        switch (personality, message) {
        case (.ublox8, .ubx), (.mtk3339, .pmtk): break
        default:
            commands.append(.init(t: t, message: message, ignored: true))
            return []
        }
        let obeys = !faults.ignoresCommands
        commands.append(.init(t: t, message: message, ignored: !obeys))
        switch message {
        case .ubx(let frame): return handle(frame, at: t, obeys: obeys)
        case .pmtk(let sentence): return handle(sentence, at: t, obeys: obeys)
        }
    }

    // MARK: u-blox

    private mutating func handle(_ frame: UBXFrame, at t: Double, obeys: Bool) -> [UInt8] {
        let payload = frame.payload
        switch (frame.messageClass, frame.id) {
        case (0x0A, 0x04) where payload.isEmpty:
            return EmulatedOutput.ublox8Version.bytes
        case (0x06, 0x04) where payload.count >= 4:
            // CFG-RST is never acknowledged (u-blox M8 receiver description).
            guard obeys else { return [] }
            switch payload[2] {
            case 0x08 where activity == .running: goDown(.standby, at: t)
            case 0x09 where activity == .standby: return wake(at: t, restarts: false)
            default: break
            }
            return []
        case (0x02, 0x41) where payload.count == 8 || payload.count == 16:
            // RXM-PMREQ has no acknowledgement either.
            guard obeys, activity == .running || activity == .standby else { return [] }
            let base = payload.count == 16 ? 4 : 0
            let duration = Self.uint32(payload, base)
            let flags = Self.uint32(payload, base + 4)
            guard flags & 0x02 != 0 else { return [] }
            let force = payload.count == 16 && flags & 0x04 != 0
            // Over its own USB a u-blox stays out of backup unless forced, and USB traffic does not wake it.
            if connection == .usb && !force { return [] }
            let byteWake =
                connection != .usb && (payload.count == 8 || Self.uint32(payload, 12) & 0x08 != 0)
            goDown(.backup(wakesOnByte: byteWake, until: duration == 0 ? nil : t + Double(duration) / 1000), at: t)
            return []
        case (0x06, 0x00):
            if payload.count <= 1 {
                return EmulatedOutput.portConfiguration(outputProtocols: outputProtocols).bytes
                    + EmulatedOutput.acknowledgement(frame, accepted: true).bytes
            }
            if payload.count >= 20 { outputProtocols = UInt16(payload[14]) | UInt16(payload[15]) << 8 }
        case (0x06, 0x01):
            if payload.count == 3 || payload.count == 8 {
                // The 8-byte form has a rate per port; the emulated receiver is on UART1.
                let rate = payload.count == 3 ? payload[2] : payload[3]
                messageRates[UInt16(payload[0]) << 8 | UInt16(payload[1])] = rate
            }
        case (0x06, 0x11) where payload.count >= 2:
            if obeys { setPowerSave(payload[1] == 1, at: t) }
        case (0x06, 0x86) where payload.count >= 2:
            if obeys { setPowerSave(payload[1] != 0, at: t) }
        case (0x06, 0x8A) where payload.count >= 9:
            if obeys, let mode = Self.operateMode(payload) { setPowerSave(mode != 0, at: t) }
        case (0x06, 0x08), (0x06, 0x09), (0x06, 0x16), (0x06, 0x24), (0x06, 0x3B), (0x06, 0x3E):
            break
        case (0x06, _):
            return EmulatedOutput.acknowledgement(frame, accepted: false).bytes
        default:
            return []
        }
        return EmulatedOutput.acknowledgement(frame, accepted: true).bytes
    }

    /// CFG-PM-OPERATEMODE's value in a CFG-VALSET, if it sets it (keys are U4, this one's value one byte).
    private static func operateMode(_ payload: [UInt8]) -> UInt8? {
        var index = 4
        while index + 4 < payload.count {
            let key = uint32(payload, index)
            let size: Int
            switch (key >> 28) & 0x07 {
            case 1, 2: size = 1
            case 3: size = 2
            case 4: size = 4
            case 5: size = 8
            default: return nil
            }
            if key == UBXCommand.operateModeKey { return payload[index + 4] }
            index += 4 + size
        }
        return nil
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        guard offset + 4 <= bytes.count else { return 0 }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << ($1 * 8) }
    }

    // MARK: MediaTek

    private mutating func handle(_ sentence: PMTKSentence, at t: Double, obeys: Bool) -> [UInt8] {
        switch sentence.command {
        case 605:
            return EmulatedOutput.mediatekFirmware.bytes
        case 161 where sentence.fields == ["0"]:
            if obeys, activity == .running { goDown(.standby, at: t) }
        case 225:
            switch sentence.fields.first {
            case "0": if obeys { setPowerSave(false, at: t) }
            case "1", "2", "8", "9": if obeys { setPowerSave(true, at: t) }
            default: return EmulatedOutput.pmtkAcknowledgement(225, .unsupported)
            }
        default:
            break
        }
        return EmulatedOutput.pmtkAcknowledgement(sentence.command, .succeeded)
    }
}
