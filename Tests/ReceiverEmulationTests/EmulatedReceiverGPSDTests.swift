import GPSD
import GPSModel
import Policy
import Receivers
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

/// An emulated receiver behind a real private gpsd (not read-only), watched by one client.
final class EmulatorRun {
    let gpsd: PrivateGPSD
    let receiver: EmulatedReceiver
    let session: GPSDSession
    /// Every TPV gpsd sent, with the emulator's clock when it came.
    private(set) var fixes: [(clock: Double, fix: Fix)] = []
    private(set) var devices: [DeviceInfo] = []

    init(
        _ personality: EmulatedReceiver.Personality, model: ReceiverModel, capture: String = "gpsd-ublox-max-m8q.nmea",
        speed: Double = 4, faults: EmulatedReceiver.Faults = .init(), options: PrivateGPSD.Options = .init()
    ) throws {
        // startReading replaces a gpsd that does not activate its pty in time with a new gpsd and a new receiver
        // on a new pty.
        let capture = try importedCapture(capture)
        (gpsd, receiver) = try PrivateGPSD.startReading(
            options: options,
            { try EmulatedReceiver(capture: capture, personality: personality, model: model, speed: speed) },
            terminal: \.terminal, discard: { $0.stop() })
        receiver.faults = faults
        do {
            session = try GPSDSession(host: "127.0.0.1", port: String(gpsd.port))
            try session.watch()
        } catch {
            receiver.stop()
            gpsd.stop()
            throw error
        }
        receiver.start()
    }

    deinit {
        receiver.stop()
        gpsd.stop()
    }

    /// Reads gpsd's reports until `condition` holds; false after `timeout` seconds.
    @discardableResult
    func read(timeout: Double = 20, until condition: () -> Bool) -> Bool {
        let deadline = monotonicSeconds() + timeout
        while !condition() {
            guard monotonicSeconds() < deadline else { return false }
            guard case .report(let report)? = try? session.read(timeoutMicroseconds: 20_000) else { continue }
            switch report {
            case .fix(let fix): fixes.append((receiver.clock, fix))
            case .device(let device): devices.append(device)
            case .devices(let list): devices += list
            default: break
            }
        }
        return true
    }

    /// Reads for `seconds` of wall time.
    func read(for seconds: Double) {
        let end = monotonicSeconds() + seconds
        read(timeout: seconds + 1) { monotonicSeconds() >= end }
    }

    /// Sends `bytes` to the receiver through gpsd (`?DEVICE` hexdata), as Lodestar does.
    func send(_ bytes: [UInt8]) throws {
        let command = try #require(GPSDCommand.writeToDevice(path: receiver.devicePath, bytes: bytes))
        try session.send(command.text)
    }

    var positionFixes: [(clock: Double, fix: Fix)] { fixes.filter { $0.fix.hasPosition } }

    /// The capture time of the epoch a TPV came from, by its receiver time (whole seconds).
    func epochT(_ fix: Fix) -> Double? {
        guard let seconds = fix.time?.seconds else { return nil }
        return receiver.epochs.first { $0.fix.time?.seconds == seconds }?.t
    }

    /// TPVs gpsd made of epochs at or after capture time `t`.
    func fixes(from t: Double) -> [Fix] {
        fixes.map(\.fix).filter { fix in epochT(fix).map { $0 >= t } ?? false }
    }

    /// The last change of the receiver's timeline to `state`, if any.
    func lastStart(of state: EmulatedReceiver.PowerState) -> Double? {
        receiver.timeline.last { $0.state == state }?.start
    }

    /// Waits until the receiver is in `state`, reading gpsd meanwhile.
    func waitFor(_ state: EmulatedReceiver.PowerState, timeout: Double = 10) -> Bool {
        read(timeout: timeout) { receiver.powerState == state }
    }

    func hasCommand(_ bytes: [UInt8]) -> Bool { receiver.commands.contains { $0.message.bytes == bytes } }

    /// Once gpsd has two fixes, sends `command` and waits for the receiver to enter `state`; returns when it
    /// did, on the receiver's clock.
    @discardableResult
    func enter(
        _ state: EmulatedReceiver.PowerState, by command: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Double {
        #expect(read { positionFixes.count >= 2 }, sourceLocation: sourceLocation)
        try send(command)
        #expect(waitFor(state), sourceLocation: sourceLocation)
        return try #require(lastStart(of: state), sourceLocation: sourceLocation)
    }
}

/// Serialized: each test is a few seconds, and a dozen gpsds at once on a loaded 2-core machine only make
/// them slower and flakier.
@Suite(.tags(.gpsd), .serialized) struct EmulatedReceiverGPSDTests {
    /// The PMTK314 sentence mix gpsd 3.22 asks an MTK-3301 for.
    static let gpsdSentenceMix = "0,1,0,1,1,5,1,1,0,0,0,0,0,0,0,0,0,1,0".split(separator: ",").map(String.init)

    @Test func gpsdIdentifiesTheUbloxAndSwitchesItToBinary() throws {
        let run = try EmulatorRun(.ublox8, model: .ublox8)
        let identified = run.read {
            run.devices.contains { $0.driver == "u-blox" && ($0.subtype ?? "").contains("00080000") }
        }
        #expect(identified, "devices: \(run.devices)")
        let device = try #require(run.devices.last { $0.driver == "u-blox" && $0.subtype != nil })
        #expect(device.subtype1?.contains("PROTVER=18.00") == true)
        // gpsd turns NMEA off; the epochs then come as NAV-PVT and still make TPVs with a position.
        #expect(run.read(timeout: 10) { !run.receiver.sendsNMEA }, "gpsd never switched the u-blox to binary")
        let switched = run.receiver.clock
        #expect(run.read(timeout: 10) { run.positionFixes.contains { $0.clock > switched + 2 } })
        let last = try #require(run.positionFixes.last?.fix)
        #expect(last.eph != nil && last.time != nil && last.speed != nil)
        // What gpsd 3.22 sends an identified u-blox (docs/gpsd.md §4): MON-VER polls, CFG-PRT, then CFG-MSG
        // rates (NAV messages on, every NMEA message off).
        #expect(run.hasCommand(UBXCommand.pollVersion.bytes))
        let portConfigurations = run.receiver.commands.filter { command in
            if case .ubx(let frame) = command.message { frame.messageClass == 0x06 && frame.id == 0x00 } else { false }
        }
        #expect(!portConfigurations.isEmpty)
        #expect(run.hasCommand(UBXFrame(messageClass: 0x06, id: 0x01, payload: [0x01, 0x07, 0x01]).bytes))
        #expect(run.hasCommand(UBXFrame(messageClass: 0x06, id: 0x01, payload: [0xF0, 0x04, 0x00]).bytes))
    }

    /// With `-b` gpsd writes nothing, so the MON-VER the receiver sends at power-up is all it identifies by.
    @Test func aReadOnlyGpsdIdentifiesTheUbloxFromItsPowerUpMessage() throws {
        var options = PrivateGPSD.Options()
        options.readOnly = true
        let run = try EmulatorRun(.ublox8, model: .ublox8, options: options)
        let identified = run.read {
            run.devices.contains { $0.driver == "u-blox" && $0.subtype1?.contains("PROTVER=18.00") == true }
        }
        #expect(identified)
        #expect(run.read(timeout: 10) { run.positionFixes.count >= 2 })
        #expect(run.receiver.commands.isEmpty)
        #expect(run.receiver.sendsNMEA)
    }

    @Test func gpsdIdentifiesTheMediatek() throws {
        let run = try EmulatorRun(.mtk3339, model: .mt3339)
        #expect(run.read { run.devices.contains { $0.driver == "MTK-3301" } }, "devices: \(run.devices)")
        #expect(run.devices.last { $0.driver == "MTK-3301" }?.subtype?.contains("3339") == true)
        // gpsd's set-up of an identified MTK-3301 (PMTK320 power saving off, PMTK300 rate, PMTK314 sentences,
        // PMTK301, PMTK313, PMTK424) is answered PMTK001,…,3 and changes nothing.
        #expect(run.read { run.hasCommand(PMTKSentence(command: 314, fields: Self.gpsdSentenceMix).bytes) })
        #expect(run.receiver.powerState == .tracking)
        #expect(run.read(timeout: 10) { run.positionFixes.count >= 3 })
    }

    @Test func aGenericReceiverIsPlainNMEAAndTakesNoCommands() throws {
        let run = try EmulatorRun(.genericNMEA, model: .genericNMEA)
        #expect(run.read { run.positionFixes.count >= 3 })
        #expect(run.devices.last { $0.driver != nil }?.driver == "NMEA0183")
        try run.send(PMTKCommand.standby.bytes)
        #expect(run.read(timeout: 10) { run.hasCommand(PMTKCommand.standby.bytes) })
        #expect(run.receiver.commands.allSatisfy { $0.ignored })
        #expect(run.receiver.powerState == .tracking)
    }

    /// GNSS stop through gpsd: output stops, the timeline shows standby; GNSS start: no-fix epochs, then the
    /// first fix the model's hot time after the wake.
    @Test func ubloxGNSSStopAndStart() throws {
        let run = try EmulatorRun(.ublox8, model: .ublox8)
        let stoppedAt = try run.enter(.standby, by: UBXCommand.gnssStop.bytes)
        run.read(for: 1)
        #expect(run.fixes(from: stoppedAt).isEmpty, "epochs after the stop reached gpsd")
        try run.send(UBXCommand.gnssStart.bytes)
        #expect(run.read { run.lastStart(of: .acquiring).map { $0 > stoppedAt } ?? false })
        let wokeAt = try #require(run.lastStart(of: .acquiring))
        #expect(run.read(timeout: 15) { run.fixes(from: wokeAt).contains { $0.hasPosition } })
        let afterWake = run.fixes(from: wokeAt)
        let firstFix = try #require(afterWake.first { $0.hasPosition })
        let firstFixT = try #require(run.epochT(firstFix))
        #expect(firstFixT >= wokeAt + ReceiverModel.ublox8.timeToFirstFix.hot)
        #expect(firstFixT < wokeAt + ReceiverModel.ublox8.timeToFirstFix.hot + 1.5)
        #expect(afterWake.contains { $0.mode == .noFix }, "no no-fix TPVs while acquiring")
        let timeline = run.receiver.timeline
        let acquiring = try #require(timeline.last { $0.state == .acquiring })
        #expect(abs(acquiring.end - acquiring.start - ReceiverModel.ublox8.timeToFirstFix.hot) < 1e-9)
        #expect(timeline.contains { $0.state == .standby && $0.milliamps == ReceiverModel.ublox8.current.standby })
        #expect(run.receiver.energyMilliampHours() > 0)
    }

    @Test func mediatekStandbyEndsWithAnyByte() throws {
        let run = try EmulatorRun(.mtk3339, model: .mt3339)
        let stoppedAt = try run.enter(.standby, by: PMTKCommand.standby.bytes)
        #expect(run.read { run.receiver.commands.count > 0 })
        run.read(for: 1)
        #expect(run.fixes(from: stoppedAt).isEmpty)
        try run.send(RegimeWake.preamble)
        #expect(run.read { run.receiver.powerState != .standby })
        let wokeAt = try #require(run.lastStart(of: .acquiring))
        // The waking bytes are lost: the receiver never saw them as a command.
        #expect(!run.hasCommand(RegimeWake.preamble))
        #expect(run.read(timeout: 15) { run.fixes(from: wokeAt).contains { $0.hasPosition } })
        let firstFix = try #require(run.fixes(from: wokeAt).first { $0.hasPosition })
        #expect(try #require(run.epochT(firstFix)) >= wokeAt + ReceiverModel.mt3339.timeToFirstFix.hot)
    }

    /// gpsd probing a device it (re)opens wakes an MTK in standby: the emulator keeps that behaviour.
    @Test func gpsdReopeningTheDeviceWakesAMediatekInStandby() throws {
        let run = try EmulatorRun(.mtk3339, model: .mt3339)
        try run.enter(.standby, by: PMTKCommand.standby.bytes)
        run.read(for: 0.3)
        #expect(run.receiver.powerState == .standby)
        let path = run.receiver.devicePath
        try run.gpsd.removeDevice(path)
        try run.gpsd.addDevice(path)
        #expect(run.read { run.receiver.powerState != .standby }, "gpsd's probes did not wake it")
    }

    /// RXM-PMREQ backup: the 16-byte form with UART wake-up wakes on a byte, the 8-byte form with a duration
    /// by itself.
    @Test func ubloxBackupWakesOnAByteOrAfterItsDuration() throws {
        let run = try EmulatorRun(.ublox8, model: .ublox8, speed: 6)
        let backupAt = try run.enter(
            .backup, by: UBXCommand.backup(milliseconds: 0, force: true, wakeupSources: .uartRX).bytes)
        run.read(for: 0.5)
        #expect(run.fixes(from: backupAt).isEmpty)
        #expect(run.receiver.powerState == .backup, "woke with nothing to wake it")
        try run.send(RegimeWake.preamble)
        #expect(run.read { run.receiver.powerState == .acquiring || run.receiver.powerState == .tracking })

        try run.send(UBXCommand.backup(milliseconds: 3000).bytes)
        #expect(run.waitFor(.backup))
        let timedAt = try #require(run.lastStart(of: .backup))
        #expect(run.read { (run.lastStart(of: .acquiring) ?? 0) > timedAt })
        let wokeAt = try #require(run.lastStart(of: .acquiring))
        #expect(abs(wokeAt - timedAt - 3) < 1e-9)
    }

    @Test func ubloxPowerSaveIsAcknowledgedAndKeepsFixes() throws {
        let run = try EmulatorRun(.ublox8, model: .ublox8)
        let since = try run.enter(.powerSave, by: UBXCommand.powerSetup(.balanced).bytes)
        #expect(run.read(timeout: 10) { run.fixes(from: since + 1).contains { $0.hasPosition } })
        #expect(run.receiver.timeline.last?.milliamps == ReceiverModel.ublox8.current.powerSave)
    }

    // MARK: - Faults

    @Test func aReceiverThatIgnoresCommandsKeepsRunning() throws {
        let run = try EmulatorRun(.ublox8, model: .ublox8, faults: .init(ignoresCommands: true))
        #expect(run.read { run.positionFixes.count >= 2 })
        try run.send(UBXCommand.gnssStop.bytes)
        #expect(run.read { run.receiver.commands.contains { $0.message == .ubx(UBXCommand.gnssStop) && $0.ignored } })
        let sentAt = run.receiver.clock
        #expect(run.read(timeout: 10) { run.fixes(from: sentAt + 1).contains { $0.hasPosition } })
        #expect(!run.receiver.timeline.contains { $0.state == .standby })
    }

    @Test func aReceiverThatLosesItsConfigurationWakesInFullPower() throws {
        let run = try EmulatorRun(.ublox8, model: .ublox8, faults: .init(losesConfigurationOnWake: true))
        try run.enter(.powerSave, by: UBXCommand.powerSetup(.balanced).bytes)
        try run.send(UBXCommand.gnssStop.bytes)
        #expect(run.waitFor(.standby))
        try run.send(UBXCommand.gnssStart.bytes)
        #expect(run.read { run.receiver.powerState == .tracking })
        #expect(run.receiver.timeline.last?.state == .tracking)
    }

    @Test func aReceiverThatNeverWakesStaysQuiet() throws {
        let run = try EmulatorRun(.mtk3339, model: .mt3339)
        #expect(run.read { run.positionFixes.count >= 2 })
        run.receiver.faults.neverWakes = true
        try run.send(PMTKCommand.standby.bytes)
        #expect(run.waitFor(.standby))
        let stoppedAt = try #require(run.lastStart(of: .standby))
        try run.send(RegimeWake.preamble)
        try run.send(PMTKCommand.normalMode.bytes)
        run.read(for: 1.5)
        #expect(run.receiver.powerState == .standby)
        #expect(run.fixes(from: stoppedAt).isEmpty)
    }

    /// Unplugged: output stops and the receiver is off. Plugged in again on a new pty and added as gpsd's
    /// hotplug would: fixes come from the new device after the time to first fix.
    @Test func aReceiverThatDisappearsAndComesBack() throws {
        let run = try EmulatorRun(.ublox8, model: .ublox8)
        #expect(run.read { run.devices.contains { $0.driver == "u-blox" } && run.positionFixes.count >= 2 })
        let oldPath = run.receiver.devicePath
        run.receiver.disappear()
        #expect(run.receiver.powerState == .off)
        #expect(run.receiver.terminal == nil)
        let goneAt = try #require(run.lastStart(of: .off))
        run.read(for: 0.5)
        #expect(run.fixes(from: goneAt).isEmpty)
        // What gpsd's hotplug does on an unplug (refused if gpsd has already dropped the device itself).
        try? run.gpsd.removeDevice(oldPath)
        let path = try run.receiver.reappear()
        try run.gpsd.addDevice(path)
        let back = try #require(run.lastStart(of: .acquiring))
        #expect(back > goneAt)
        #expect(run.read(timeout: 15) { run.fixes(from: back).contains { $0.hasPosition && $0.device == path } })
    }

    /// A GPIO-switched generic receiver through `EmulatedPowerSwitch`: off stops output and loses
    /// everything, on restarts cold.
    @Test func aSwitchedReceiverRestartsCold() throws {
        var model = ReceiverModel.genericNMEA
        model.powerControl = .gpio  // off is a power cut (a released device would keep running: hot)
        model.timeToFirstFix.cold = 3
        let run = try EmulatorRun(.genericNMEA, model: model)
        let line = EmulatedPowerSwitch(receiver: run.receiver, description: "injected GPIO line")
        #expect(run.read { run.positionFixes.count >= 2 })
        try line.setPowered(false)
        let offAt = try #require(run.lastStart(of: .off))
        run.read(for: 1)
        #expect(run.fixes(from: offAt).isEmpty)
        try line.setPowered(true)
        let onAt = try #require(run.lastStart(of: .acquiring))
        // On a loaded machine gpsd may hand on an epoch from before the cut after it: only later epochs count.
        func afterCut(_ fix: Fix) -> Bool { fix.hasPosition && (run.epochT(fix) ?? -.infinity) > offAt }
        #expect(run.read(timeout: 15) { run.fixes(from: onAt).contains(where: afterCut) })
        let first = try #require(run.fixes(from: onAt).first(where: afterCut))
        #expect(try #require(run.epochT(first)) >= onAt + 3)
        line.failWith(PowerSwitchError("line held by another process"))
        #expect(throws: PowerSwitchError.self) { try line.setPowered(false) }
    }
}

