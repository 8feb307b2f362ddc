import GPSD
import GPSModel
import Policy
@testable import Receivers
import Testing

/// Drives a `PowerController` as the runtime does: inputs at scripted times, `.tick` at every `nextDeadline`
/// in between, and each write answered as gpsd 3.22 answers it (its DEVICE echo) unless told otherwise.
struct ControllerScript {
    var controller: PowerController
    private(set) var now: Double = 0
    private(set) var log: [(at: Double, action: PowerControllerAction)] = []
    /// How gpsd answers the writes.
    var reply: GPSDCommandOutcome = .answered(.other(className: "DEVICE"))

    init(_ configuration: PowerControllerConfiguration) {
        controller = PowerController(configuration: configuration)
    }

    /// A controller told at 0 s that gpsd identified `identity`.
    init(_ configuration: PowerControllerConfiguration, identified identity: ReceiverIdentity) {
        self.init(configuration)
        send(.receiverChanged(devicePath: identity.path, identity: identity), at: 0)
    }

    /// A receiver with a fix from 1 s, asked for standby at 10 s, quiet since.
    mutating func holdInStandby(_ path: String) {
        output(path, from: 1, to: 10, fixFrom: 1)
        send(.regimeRequested(.standby, reason: "paused"), at: 10)
        advance(to: 20)
    }

    mutating func send(_ input: PowerControllerInput, at time: Double) {
        advance(to: time)
        now = time
        take(controller.handle(input, now: time))
    }

    /// Ticks at every deadline up to `time`.
    mutating func advance(to time: Double) {
        var guardCount = 0
        while let deadline = controller.nextDeadline, deadline <= time, guardCount < 1000 {
            guardCount += 1
            now = max(now, deadline)
            take(controller.handle(.tick, now: now))
        }
        now = max(now, time)
    }

    /// Receiver output on `path` every `every` seconds in [from, to); with a fix from `fixFrom` on.
    mutating func output(_ path: String, from: Double, to: Double, fixFrom: Double? = nil, every: Double = 1) {
        var time = from
        while time < to {
            send(.output(devicePath: path, hasFix: fixFrom.map { time >= $0 } ?? false), at: time)
            time += every
        }
    }

    private mutating func take(_ actions: [PowerControllerAction]) {
        var writes = 0
        for action in actions {
            log.append((now, action))
            if case .write = action { writes += 1 }
        }
        for _ in 0..<writes { take(controller.handle(.commandReply(reply), now: now)) }
    }

    var events: [PowerEvent] {
        log.compactMap { if case .report(let event) = $0.action { event } else { nil } }
    }

    func events(_ kind: PowerEvent.Kind) -> [PowerEvent] { events.filter { $0.kind == kind } }

    /// Each event of `kind` with the time it was reported.
    func timedEvents(_ kind: PowerEvent.Kind) -> [(at: Double, event: PowerEvent)] {
        log.compactMap { entry in
            if case .report(let event) = entry.action, event.kind == kind { (entry.at, event) } else { nil }
        }
    }

    /// What was written, with when, from `since` on.
    func writes(since: Double = -.infinity) -> [(at: Double, write: ReceiverWrite)] {
        log.compactMap { entry in
            if case .write(let write) = entry.action, entry.at >= since { (entry.at, write) } else { nil }
        }
    }

    /// The actions that are neither writes nor reports (switch, release, watch, wait, offers), from `since`.
    func others(since: Double = -.infinity) -> [PowerControllerAction] {
        log.compactMap { entry in
            switch entry.action {
            case .write, .report: nil
            default: entry.at >= since ? entry.action : nil
            }
        }
    }

    var offers: [Set<ReceiverRegime>] {
        log.compactMap { if case .offerRegimes(let regimes) = $0.action { regimes } else { nil } }
    }
}

@Suite struct PowerControllerTests {
    static let ublox8Subtype = "SW ROM CORE 3.01 (107888),HW 00080000"
    static let ublox8Subtype1 = ",FWVER=SPG 3.01,PROTVER=18.00,GPS;GLO;GAL;BDS,SBAS;IMES;QZSS"

    static func ublox8(_ path: String) -> ReceiverIdentity {
        ReceiverIdentity(path: path, driver: "u-blox", subtype: ublox8Subtype, subtype1: ublox8Subtype1)
    }

    static func mediatek(_ path: String) -> ReceiverIdentity { ReceiverIdentity(path: path, driver: "MTK-3301") }

    /// A receiver gpsd reads as plain NMEA.
    static func nmea(_ path: String) -> ReceiverIdentity { ReceiverIdentity(path: path, driver: "NMEA0183") }

    static let start = ReceiverWrite.message(.ubx(UBXCommand.gnssStart))
    static let stop = ReceiverWrite.message(.ubx(UBXCommand.gnssStop))
    static let fullPower = ReceiverWrite.message(.ubx(UBXCommand.powerSetup(.fullPower)))
    static let pmtkStandby = ReceiverWrite.message(.pmtk(PMTKCommand.standby))
    static let pmtkNormal = ReceiverWrite.message(.pmtk(PMTKCommand.normalMode))

    func writes(_ script: ControllerScript, since: Double = -.infinity) -> [ReceiverWrite] {
        script.writes(since: since).map(\.write)
    }

    // MARK: u-blox

    @Test func ublox8OnUSBFallsBackFromOffToStandbyAndTimesTheWake() {
        let path = "/dev/ttyACM0"
        var script = ControllerScript(PowerControllerConfiguration(model: .ublox8))
        script.send(.deviceActivated(devicePath: path), at: 0)
        script.send(.receiverChanged(devicePath: path, identity: Self.ublox8(path)), at: 0.5)
        // Off is out of reach over USB; no down regime wakes by any byte, so no preamble at start.
        #expect(script.offers == [[.continuous, .powerSave, .standby]])
        #expect(script.controller.connection == .usb && script.controller.mechanism == .ubx)
        #expect(script.events(.receiverIdentified).count == 1)
        #expect(script.events(.receiverIdentified).first?.detail.contains("ublox8") == true)
        #expect(writes(script) == [Self.start, Self.fullPower])

        script.output(path, from: 1, to: 10.5, fixFrom: 2)
        script.send(.regimeRequested(.off, reason: "paused"), at: 10.2)
        script.send(.output(devicePath: path, hasFix: true), at: 10.5)  // the last epoch before it stops
        #expect(script.events(.regimeUnreachable).map(\.regime) == [.off])
        #expect(writes(script, since: 10) == [Self.stop])
        #expect(script.controller.achievedRegime == .continuous)  // not before it went quiet
        script.advance(to: 20)
        let quiet = script.timedEvents(.quiet)
        #expect(quiet.map(\.event.regime) == [.standby])
        #expect(quiet.first.map { abs(($0.event.seconds ?? -1) - 0.3) < 1e-9 } == true)
        #expect(quiet.first.map { abs($0.at - 12.5) < 1e-9 } == true)
        #expect(script.controller.achievedRegime == .standby)

        // Asked again: reported once, nothing sent (already there).
        script.send(.regimeRequested(.off, reason: "paused"), at: 20)
        #expect(script.events(.regimeUnreachable).count == 1)
        #expect(writes(script, since: 20).isEmpty)

        // Up: GNSS start wakes it; output resuming re-sends the plan; the first fix is timed.
        script.send(.regimeRequested(.continuous, reason: "moving"), at: 30)
        #expect(writes(script, since: 30) == [Self.start, Self.fullPower])
        script.output(path, from: 31, to: 36, fixFrom: 33)
        #expect(writes(script, since: 30) == [Self.start, Self.fullPower, Self.start, Self.fullPower])
        let firstFix = script.events(.firstFixAfterWake)
        #expect(firstFix.map(\.regime) == [.standby])
        #expect(firstFix.first?.seconds == 3)
        #expect(script.controller.achievedRegime == .continuous)
        #expect(script.events(.wakeFailed).isEmpty && script.events(.noEffect).isEmpty)
    }

    @Test func ubloxOnItsUARTGoesToBackupAndWakesByPreamble() {
        let path = "/dev/ttyAMA0"
        var script = ControllerScript(PowerControllerConfiguration(model: .ublox8), identified: Self.ublox8(path))
        #expect(script.offers == [[.continuous, .powerSave, .standby, .off]])
        // Whatever a previous run left: backup wakes by any byte, so the preamble, a settle, then the plan.
        #expect(writes(script) == [.wakePreamble])
        #expect(script.others().contains(.wait(until: 1)))
        #expect(script.controller.nextDeadline == 1)
        script.advance(to: 1)
        #expect(script.writes().map(\.at) == [0, 1, 1])
        #expect(writes(script) == [.wakePreamble, Self.start, Self.fullPower])

        script.output(path, from: 2, to: 10.5, fixFrom: 2)
        script.send(.regimeRequested(.off, reason: "paused"), at: 10.2)
        let backup = ReceiverWrite.message(
            .ubx(UBXCommand.backup(milliseconds: 0, force: true, wakeupSources: .uartRX)))
        #expect(writes(script, since: 10) == [backup])
        script.advance(to: 20)
        #expect(script.events(.quiet).map(\.regime) == [.off])
        #expect(script.controller.achievedRegime == .off)

        script.send(.regimeRequested(.continuous, reason: "moving"), at: 60)
        #expect(writes(script, since: 60) == [.wakePreamble])
        script.advance(to: 61)
        #expect(writes(script, since: 60) == [.wakePreamble, Self.start, Self.fullPower])
        script.output(path, from: 62, to: 66, fixFrom: 63)
        #expect(script.events(.firstFixAfterWake).first?.seconds == 3)
        #expect(script.events(.firstFixAfterWake).first?.regime == .off)
    }

    @Test func ubloxNamedNMEAFirstIsWokenOnceGpsdNamesItsDriver() {
        let path = "/dev/ttyACM0"
        var script = ControllerScript(PowerControllerConfiguration(model: .ublox8), identified: Self.nmea(path))
        #expect(script.controller.mechanism == .closeDevice)
        #expect(writes(script).isEmpty)
        // gpsd then switches it to binary and names the u-blox driver: commands from here on.
        script.send(.receiverChanged(devicePath: path, identity: Self.ublox8(path)), at: 2)
        #expect(script.controller.mechanism == .ubx)
        #expect(script.events(.receiverIdentified).count == 2)
        #expect(writes(script) == [Self.start, Self.fullPower])
        #expect(script.offers.last == [.continuous, .powerSave, .standby])
    }

    @Test func powerSaveCountsOnlyOnceGpsdTookTheCommands() {
        let path = "/dev/ttyACM0"
        var script = ControllerScript(PowerControllerConfiguration(model: .ublox8), identified: Self.ublox8(path))
        script.reply = .failed(reason: "not connected to gpsd")
        script.send(.regimeRequested(.powerSave, reason: "slow"), at: 5)
        #expect(script.controller.achievedRegime == .continuous)
        #expect(script.events(.commandFailed).count == 2)
        script.reply = .answered(.other(className: "DEVICE"))
        script.send(.regimeRequested(.continuous, reason: "fast"), at: 6)
        script.send(.regimeRequested(.powerSave, reason: "slow"), at: 7)
        #expect(
            writes(script, since: 7) == [Self.start, .message(.ubx(UBXCommand.powerSetup(.balanced)))])
        #expect(script.controller.achievedRegime == .powerSave)
    }

    // MARK: MediaTek

    @Test func mediatekStandbyAndWake() {
        let path = "/dev/ttyUSB0"
        var script = ControllerScript(PowerControllerConfiguration(model: .mt3339), identified: Self.mediatek(path))
        #expect(script.offers == [[.continuous, .powerSave, .standby]])
        script.advance(to: 1)
        #expect(writes(script) == [.wakePreamble, Self.pmtkNormal])

        script.output(path, from: 2, to: 10.5, fixFrom: 3)
        script.send(.regimeRequested(.standby, reason: "paused"), at: 10.1)
        #expect(writes(script, since: 10) == [Self.pmtkStandby])
        script.advance(to: 30)
        #expect(script.events(.quiet).map(\.regime) == [.standby])
        #expect(script.controller.achievedRegime == .standby)

        script.send(.regimeRequested(.continuous, reason: "probe"), at: 40)
        #expect(script.controller.achievedRegime == .continuous)
        script.advance(to: 41)
        #expect(writes(script, since: 40) == [.wakePreamble, Self.pmtkNormal])
        script.output(path, from: 42, to: 47, fixFrom: 45)
        // Output resumed: the plan again, for a receiver that woke without its configuration.
        #expect(writes(script, since: 40) == [.wakePreamble, Self.pmtkNormal, Self.pmtkNormal])
        #expect(script.events(.firstFixAfterWake).first?.seconds == 5)
    }

    @Test(arguments: [nil, false, true] as [Bool?])
    func aCommandWithoutEffectIsToldOnceWithinTheDeadline(readOnly: Bool?) {
        let path = "/dev/ttyUSB0"
        var script = ControllerScript(
            PowerControllerConfiguration(model: .mt3339, readOnlyGPSD: readOnly), identified: Self.mediatek(path))
        script.output(path, from: 1, to: 10, fixFrom: 2)
        script.send(.regimeRequested(.standby, reason: "paused"), at: 10)
        // gpsd dropped the write: the receiver keeps talking.
        script.output(path, from: 10.5, to: 60, fixFrom: 0)
        let noEffect = script.timedEvents(.noEffect)
        #expect(noEffect.count == 1)
        #expect(noEffect.first?.event.regime == .standby)
        // Within the deadline (6 s) and the next output, far inside two probe intervals (2 × 30 s).
        #expect(noEffect.first.map { $0.at >= 16 && $0.at <= 17 } == true)
        #expect(script.events(.quiet).isEmpty)
        #expect(script.controller.achievedRegime == .continuous)
        let detail = noEffect.first?.event.detail ?? ""
        if readOnly == true {
            #expect(detail.contains("gpsd runs read-only (-b), which drops every write to the receiver"))
            #expect(script.offers.last == [.continuous])
        } else {
            #expect(detail.contains("another program") && detail.contains("ignored"))
            // -b is named only while gpsd's command line is unknown: read and without -b, it is not a cause.
            #expect(detail.contains("-b") == (readOnly == nil), "\(detail)")
            #expect(script.offers.last == [.continuous, .powerSave])
        }
        // Not used again: asked for once more, nothing is sent and nothing more is told.
        script.send(.regimeRequested(.standby, reason: "paused"), at: 61)
        #expect(writes(script, since: 61).isEmpty)
        #expect(script.events(.noEffect).count == 1)
    }

    @Test func gpsdRefusingAReadOnlyWriteNamesMinusB() {
        let path = "/dev/ttyUSB0"
        var script = ControllerScript(PowerControllerConfiguration(model: .mt3339), identified: Self.mediatek(path))
        script.advance(to: 2)
        script.reply = .refused(message: "Attempted to write to a read-only device")
        script.send(.regimeRequested(.standby, reason: "paused"), at: 10)
        #expect(script.events(.commandFailed).count == 1)
        script.output(path, from: 10.5, to: 20)
        #expect(script.events(.noEffect).first?.detail.contains("read-only (-b)") == true)
    }

    /// A u-blox with fixes from 1 s, asked for standby at 10 s, every write answered with `reply` from then.
    static func standbyAnswered(_ reply: GPSDCommandOutcome, path: String) -> ControllerScript {
        var script = ControllerScript(PowerControllerConfiguration(model: .ublox8), identified: Self.ublox8(path))
        script.output(path, from: 1, to: 10, fixFrom: 1)
        script.reply = reply
        script.send(.regimeRequested(.standby, reason: "paused"), at: 10)
        return script
    }

    /// gpsd refused the stop (its device had gone: "Can't open …") and the receiver's output stopped for that
    /// reason, not the command's: nothing counts it down. When it talks again the stop goes again, and the
    /// quiet after a stop that went through counts.
    @Test func quietAfterARefusedDownCommandIsNotCountedDown() {
        let path = "/dev/ttyACM0"
        var script = Self.standbyAnswered(.refused(message: "Can't open \(path)."), path: path)
        script.advance(to: 30)
        #expect(script.events(.commandFailed).count == 1)
        #expect(script.events(.quiet).isEmpty, "\(script.events.map(\.detail))")
        #expect(script.controller.achievedRegime != .standby)
        script.reply = .answered(.other(className: "DEVICE"))
        script.output(path, from: 30, to: 34, fixFrom: 30)
        script.advance(to: 60)
        let reapplied = script.events(.reapplied)
        #expect(reapplied.count == 1)
        #expect(reapplied.first?.detail.contains("did not reach it: gpsd refused CFG-RST GNSS stop") == true, "\(reapplied)")
        #expect(script.writes(since: 30).map(\.write).contains(Self.stop))
        #expect(script.events(.quiet).count == 1)
        #expect(script.controller.achievedRegime == .standby)
    }

    /// A stop that could not be sent, to a receiver that keeps talking: no effect, with the failed send as
    /// its cause rather than the receiver or another program.
    @Test func aDownCommandThatWasNotSentIsTheNamedCauseOfNoEffect() {
        let path = "/dev/ttyACM0"
        var script = Self.standbyAnswered(.failed(reason: "no gpsd connection"), path: path)
        script.output(path, from: 10.5, to: 20, fixFrom: 10.5)
        let detail = script.events(.noEffect).first?.detail ?? ""
        #expect(detail.contains("the command did not reach it (CFG-RST GNSS stop was not sent)"), "\(detail)")
        #expect(!detail.contains("another program"), "\(detail)")
        #expect(script.controller.achievedRegime == .continuous)
    }

    @Test func aWakeWithoutOutputIsRetriedWithABackoff() {
        let path = "/dev/ttyUSB0"
        var script = ControllerScript(PowerControllerConfiguration(model: .mt3339), identified: Self.mediatek(path))
        script.holdInStandby(path)
        script.send(.regimeRequested(.continuous, reason: "probe"), at: 100)
        // A woken receiver talks within seconds, fix or not: no output 10 s after the wake is a failed wake.
        script.advance(to: 250)
        let failed = script.timedEvents(.wakeFailed)
        #expect(failed.map(\.at) == [110, 125, 145, 175, 225])
        #expect(failed.map(\.event.seconds) == [10, 10, 10, 10, 10])
        #expect(failed.first?.event.detail.contains("next try in 5 s") == true)
        #expect(failed.last?.event.detail.contains("next try in 80 s") == true)
        let preambles = script.writes(since: 100).filter { $0.write == .wakePreamble }.map(\.at)
        #expect(preambles == [100, 115, 135, 165, 215])
        #expect(script.controller.achievedRegime == .continuous)  // unknown: never counted as a saving
        script.advance(to: 306)
        // It wakes at last: the plan follows its output, the fix is timed from the last try.
        script.output(path, from: 307, to: 310, fixFrom: 309)
        #expect(script.events(.firstFixAfterWake).first?.seconds == 4)
        script.advance(to: 2000)
        #expect(script.events(.wakeFailed).count == 5)
    }

    @Test func backoffDoublesUpToItsMaximum() {
        let path = "/dev/ttyUSB0"
        let timeouts = PowerControllerTimeouts(wakeTimeout: 10, firstRetryInterval: 5, maximumRetryInterval: 30)
        var script = ControllerScript(
            PowerControllerConfiguration(model: .mt3339, timeouts: timeouts), identified: Self.mediatek(path))
        script.send(.regimeRequested(.standby, reason: "paused"), at: 5)
        script.send(.regimeRequested(.continuous, reason: "probe"), at: 20)
        script.advance(to: 400)
        let next = script.events(.wakeFailed).prefix(6).map(\.detail).map { $0.split(separator: ";").last ?? "" }
        #expect(
            next == [
                " next try in 5 s", " next try in 10 s", " next try in 20 s", " next try in 30 s",
                " next try in 30 s", " next try in 30 s",
            ])
    }

    @Test func aReceiverGpsdReopenedWhileHeldDownIsPutDownAgain() {
        let path = "/dev/ttyUSB0"
        var script = ControllerScript(PowerControllerConfiguration(model: .mt3339), identified: Self.mediatek(path))
        script.holdInStandby(path)
        #expect(script.controller.achievedRegime == .standby)
        // gpsd reopens the device and probes it, which wakes the MTK.
        script.send(.deviceActivated(devicePath: path), at: 50)
        #expect(script.controller.achievedRegime == .continuous)
        script.output(path, from: 50.5, to: 54.5, fixFrom: 51)
        #expect(writes(script, since: 50).isEmpty)  // gpsd is still probing
        script.advance(to: 54)
        #expect(writes(script, since: 50) == [.wakePreamble])  // probing over: the preamble first
        script.advance(to: 55)
        #expect(writes(script, since: 50) == [.wakePreamble, Self.pmtkStandby])
        #expect(script.events(.reapplied).map(\.regime) == [.standby])
        script.advance(to: 70)
        #expect(script.events(.quiet).count == 2)
        #expect(script.controller.achievedRegime == .standby)
        #expect(script.events(.noEffect).isEmpty)
    }

    @Test func aReceiverGpsdReopenedWhileRunningGetsItsPlanAgain() {
        let path = "/dev/ttyACM0"
        var script = ControllerScript(PowerControllerConfiguration(model: .ublox8), identified: Self.ublox8(path))
        script.send(.regimeRequested(.powerSave, reason: "slow"), at: 5)
        let powerSave = [Self.start, ReceiverWrite.message(.ubx(UBXCommand.powerSetup(.balanced)))]
        #expect(writes(script, since: 5) == powerSave)
        // Reconnected: it may have come back in its power-on configuration.
        script.send(.deviceActivated(devicePath: path), at: 20)
        #expect(writes(script, since: 20).isEmpty)
        script.advance(to: 24)
        #expect(writes(script, since: 20) == powerSave)
        #expect(script.events(.reapplied).map(\.regime) == [.powerSave])
    }

    // MARK: Power switches and release

    @Test func gpioSwitchTurnsTheReceiverOffAndOn() {
        let path = "/dev/ttyAMA0"
        var script = ControllerScript(PowerControllerConfiguration(model: .genericNMEA, hasPowerSwitch: true))
        script.send(.receiverChanged(devicePath: path, identity: nil), at: 0)
        #expect(script.controller.mechanism == .gpio)
        #expect(script.offers == [[.continuous, .off]])
        #expect(script.others() == [.offerRegimes([.continuous, .off]), .setPower(true)])
        script.output(path, from: 1, to: 10, fixFrom: 3)
        #expect(script.events(.firstFixAfterWake).first?.seconds == 3)
        script.send(.receiverChanged(devicePath: path, identity: Self.nmea(path)), at: 4)
        #expect(script.events(.receiverIdentified).first?.detail.contains("gpio") == true)

        script.send(.regimeRequested(.off, reason: "paused"), at: 10)
        #expect(script.others(since: 10) == [.setPower(false)])
        script.advance(to: 15)
        #expect(script.events(.quiet).map(\.regime) == [.off])
        #expect(script.controller.achievedRegime == .off)

        // Standby is not a switch's: the model's fallback (off) is kept.
        script.send(.regimeRequested(.standby, reason: "paused"), at: 20)
        #expect(script.events(.regimeUnreachable).map(\.regime) == [.standby])
        #expect(script.others(since: 20).isEmpty)

        script.send(.regimeRequested(.continuous, reason: "moving"), at: 60)
        #expect(script.others(since: 60) == [.setPower(true)])
        script.output(path, from: 61, to: 64, fixFrom: 62)
        #expect(script.events(.firstFixAfterWake).map(\.seconds) == [3, 2])
        #expect(script.writes().isEmpty)
    }

    @Test func usbPortPowerWaitsForTheDeviceToComeBack() {
        let path = "/dev/ttyACM0"
        var script = ControllerScript(
            PowerControllerConfiguration(model: .ublox8, mechanism: .usbPort, hasPowerSwitch: true))
        script.send(.receiverChanged(devicePath: path, identity: Self.ublox8(path)), at: 0)
        #expect(script.offers == [[.continuous, .off]])
        script.output(path, from: 0.5, to: 10, fixFrom: 1)
        script.send(.regimeRequested(.off, reason: "paused"), at: 10)
        #expect(script.others(since: 10) == [.setPower(false)])
        script.send(.deviceClosed(devicePath: path), at: 10.4)
        script.send(.receiverChanged(devicePath: nil, identity: nil), at: 10.4)
        #expect(script.events(.quiet).first.map { abs(($0.seconds ?? 0) - 0.4) < 1e-9 } == true)
        #expect(script.controller.achievedRegime == .off)

        script.send(.regimeRequested(.continuous, reason: "moving"), at: 60)
        #expect(script.others(since: 60) == [.setPower(true)])
        // The device comes back (gpsd's hotplug) and gpsd identifies it again; nothing to reapply.
        script.send(.deviceActivated(devicePath: path), at: 62)
        script.send(.receiverChanged(devicePath: path, identity: Self.ublox8(path)), at: 63)
        script.output(path, from: 63, to: 66, fixFrom: 65)
        #expect(script.events(.firstFixAfterWake).last?.seconds == 5)
        #expect(script.events(.reapplied).isEmpty)
        #expect(script.writes().isEmpty)
        #expect(script.controller.achievedRegime == .continuous)
    }

    /// A receiver with no commands and no switch is never taken down: releasing it through gpsd would leave it
    /// powered, churn gpsd's device, and only look like a saving. An off request is refused with the reason.
    @Test func aReceiverWithNoWayDownKeepsRunning() {
        let path = "/dev/ttyUSB0"
        var script = ControllerScript(PowerControllerConfiguration(model: .genericNMEA), identified: Self.nmea(path))
        #expect(script.controller.mechanism == .closeDevice)
        #expect(script.offers == [[.continuous]])
        script.output(path, from: 1, to: 10, fixFrom: 1)
        script.send(.regimeRequested(.off, reason: "paused"), at: 10)
        script.output(path, from: 10, to: 90, fixFrom: 10)
        #expect(script.others(since: 10).isEmpty)
        #expect(script.writes().isEmpty)
        #expect(script.events(.regimeUnreachable).map(\.regime) == [.off])
        #expect(script.events(.regimeUnreachable).first?.detail.contains("would power nothing down") == true)
        #expect(script.events(.quiet).isEmpty)
        #expect(script.events(.noEffect).isEmpty)
        #expect(script.controller.achievedRegime == .continuous)
    }

    // MARK: Exit and unknown receivers

    @Test func shutdownLeavesTheExitRegimeAndSaysWhatWasSent() {
        let path = "/dev/ttyUSB0"
        var script = ControllerScript(PowerControllerConfiguration(model: .mt3339), identified: Self.mediatek(path))
        script.holdInStandby(path)
        script.send(.shutdown(exitRegime: .continuous), at: 30)
        #expect(writes(script, since: 30) == [.wakePreamble])
        #expect(!script.controller.isFinished)
        #expect(script.controller.nextDeadline == 31)
        script.advance(to: 31)
        #expect(writes(script, since: 30) == [.wakePreamble, Self.pmtkNormal])
        #expect(script.controller.isFinished)
        let told = script.timedEvents(.regimeCommanded).last
        #expect(told?.at == 31)
        #expect(told?.event.detail.contains("on exit") == true)
        #expect(told?.event.detail.contains("$PMTK225,0") == true)
        // Nothing after exit: no wake timeout, no retries.
        script.advance(to: 1000)
        #expect(script.controller.nextDeadline == nil)
        #expect(script.events(.wakeFailed).isEmpty)
    }

    @Test func shutdownInTheExitRegimeSendsNothingAndSaysSo() {
        let path = "/dev/ttyACM0"
        var script = ControllerScript(PowerControllerConfiguration(model: .ublox8), identified: Self.ublox8(path))
        script.send(.shutdown(exitRegime: .continuous), at: 5)
        #expect(writes(script, since: 5).isEmpty)
        #expect(script.controller.isFinished)
        #expect(script.events(.regimeCommanded).last?.detail.contains("nothing sent") == true)
    }

    @Test func anUnknownReceiverIsSaidToBeUnknown() {
        let path = "/dev/ttyUSB0"
        var script = ControllerScript(
            PowerControllerConfiguration(model: .genericNMEA),
            identified: ReceiverIdentity(path: path, driver: "Garmin NMEA"))
        let unknown = script.events(.receiverUnknown)
        #expect(unknown.count == 1)
        #expect(unknown.first?.detail.contains("Garmin NMEA") == true)
        #expect(unknown.first?.detail.contains("keeps it running") == true)
        #expect(unknown.first?.detail.contains("no power control for this receiver") == true)
        #expect(unknown.first?.mechanism == .closeDevice)
        #expect(script.events(.receiverIdentified).isEmpty)
        #expect(script.offers == [[.continuous]])
        #expect(script.writes().isEmpty)
        script.send(.regimeRequested(.powerSave, reason: "slow"), at: 5)
        #expect(script.events(.regimeUnreachable).map(\.regime) == [.powerSave])
        #expect(script.others(since: 5).isEmpty)
    }

    @Test func nothingIsDoneBeforeTheReceiverIsIdentified() {
        var script = ControllerScript(PowerControllerConfiguration(model: .ublox8))
        script.send(.deviceActivated(devicePath: "/dev/ttyACM0"), at: 0)
        script.send(.regimeRequested(.standby, reason: "paused"), at: 1)
        #expect(script.log.isEmpty)
        #expect(script.controller.nextDeadline == nil)
        // Identified: the wake at start goes straight to the regime asked for.
        script.send(.receiverChanged(devicePath: "/dev/ttyACM0", identity: Self.ublox8("/dev/ttyACM0")), at: 2)
        #expect(writes(script) == [Self.stop])
    }
}

/// A receiver whose device went away and came back: unplugged and plugged in again (on the same device or
/// another), or gpsd restarted.
@Suite struct PowerControllerReturnTests {
    static let poll = ReceiverWrite.message(.ubx(UBXCommand.pollVersion))
    static let mediatekPoll = ReceiverWrite.message(.pmtk(PMTKCommand.queryFirmware))

    /// A u-blox 8 over USB held in standby on `/dev/ttyACM0`, its device gone at 30 s (gpsd says so with a
    /// device closing, or by going away) and back on `path` at 40 s, where gpsd names only the generic NMEA
    /// driver at 41 s, as gpsd 3.22 does for a device added where another was.
    /// `driverInTheActivation`: gpsd's notice that the device is back already names the generic driver, so
    /// the identity changes before the activation is seen (as the guest's gpsd does in scripts/vm-test).
    static func cameBack(on path: String, driverInTheActivation: Bool = false) -> ControllerScript {
        cameBack(on: path, driverInTheActivation: driverInTheActivation, gpsdNames: PowerControllerTests.nmea(path))
    }

    /// The same, where gpsd names `named` at 41 s (nil: gpsd names nothing after the activation).
    static func cameBack(on path: String, driverInTheActivation: Bool = false, gpsdNames named: ReceiverIdentity?)
        -> ControllerScript
    {
        let configuration = PowerControllerConfiguration(model: .ublox8, connection: .usb)
        var script = ControllerScript(configuration, identified: PowerControllerTests.ublox8("/dev/ttyACM0"))
        script.holdInStandby("/dev/ttyACM0")
        script.send(.receiverChanged(devicePath: nil, identity: nil), at: 30)
        script.send(.deviceClosed(devicePath: "/dev/ttyACM0"), at: 30)
        if driverInTheActivation, let named {
            script.send(.receiverChanged(devicePath: path, identity: named), at: 40)
            script.send(.deviceActivated(devicePath: path), at: 40)
        } else {
            script.send(.receiverChanged(devicePath: path, identity: nil), at: 40)
            script.send(.deviceActivated(devicePath: path), at: 40)
            if let named { script.send(.receiverChanged(devicePath: path, identity: named), at: 41) }
        }
        return script
    }

    @Test(arguments: ["/dev/ttyACM0", "/dev/ttyACM1"], [false, true])
    func aReceiverThatCameBackIsAskedWhatItIsAndPutInItsRegimeAgain(path: String, driverInTheActivation: Bool) {
        var script = Self.cameBack(on: path, driverInTheActivation: driverInTheActivation)
        // gpsd's generic name does not make it a receiver without commands.
        #expect(script.controller.mechanism == .ubx)
        #expect(script.events(.receiverIdentified).count == 1)
        script.advance(to: 44)
        // Once gpsd's probing is over: the version poll, and standby again on the device that came back.
        #expect(writes(script, since: 40) == [Self.poll, Self.mediatekPoll, PowerControllerTests.stop])
        #expect(script.events(.reapplied).map(\.regime) == [.standby])
        // The poll's answer makes gpsd name the u-blox: identified again, and no more polls.
        script.send(.receiverChanged(devicePath: path, identity: PowerControllerTests.ublox8(path)), at: 45)
        let again = script.events(.receiverIdentified).dropFirst()
        #expect(again.count == 1)
        #expect(again.first?.detail.contains("again, on \(path)") == true, "\(again)")
        script.advance(to: 70)
        #expect(writes(script, since: 44.5).isEmpty)
        #expect(script.controller.achievedRegime == .standby)
        #expect(script.offers.last?.contains(.standby) == true)
    }

    @Test func anotherReceiverOnTheDeviceThatCameBackIsTakenForWhatGpsdSaysAfterThePolls() {
        var script = Self.cameBack(on: "/dev/ttyACM1")
        script.advance(to: 60)
        let polls = writes(script, since: 40).filter { $0 == Self.poll }
        #expect(polls.count == PowerController.identificationPollLimit)
        // No answer named a make: it is the generic NMEA receiver gpsd says it is.
        #expect(script.controller.mechanism == .closeDevice)
        #expect(script.controller.identification?.family == .nmea)
        let last = script.events(.receiverIdentified).last?.detail ?? ""
        #expect(last.contains("NMEA0183") && last.contains("again, on /dev/ttyACM1"), "\(last)")
    }

    /// gpsd named the u-blox that came back without its versions, and said no more after the polls: it is
    /// the u-blox 8 from before, with its power save, and the journal hears that it came back.
    @Test func aUbloxThatCameBackWithoutItsVersionsKeepsItsGeneration() {
        let bare = ReceiverIdentity(path: "/dev/ttyACM1", driver: "u-blox")
        var script = Self.cameBack(on: "/dev/ttyACM1", gpsdNames: bare)
        script.advance(to: 60)
        #expect(writes(script, since: 40).filter { $0 == Self.poll }.count == PowerController.identificationPollLimit)
        #expect(script.controller.identification?.family == .ublox(.m8), "\(String(describing: script.controller.identification))")
        #expect(script.offers.last?.contains(.powerSave) == true)
        let identified = script.events(.receiverIdentified)
        #expect(identified.count == 2, "\(identified)")
        #expect(identified.last?.detail.contains("again, on /dev/ttyACM1") == true, "\(identified)")
    }

    /// gpsd said nothing of the device that came back but its activation, and no poll was answered: the
    /// receiver is taken to be the one from before, and the journal still hears that it came back.
    @Test func aDeviceThatCameBackAndSaysNothingIsReportedBackAfterThePolls() {
        var script = Self.cameBack(on: "/dev/ttyACM1", gpsdNames: nil)
        script.advance(to: 60)
        #expect(writes(script, since: 40).filter { $0 == Self.poll }.count == PowerController.identificationPollLimit)
        #expect(script.controller.mechanism == .ubx)
        let identified = script.events(.receiverIdentified)
        #expect(identified.count == 2, "\(identified)")
        #expect(identified.last?.detail.contains("again, on /dev/ttyACM1") == true, "\(identified)")
        script.advance(to: 90)
        #expect(script.events(.receiverIdentified).count == 2)
    }

    /// A u-blox unplugged and a MediaTek plugged in its place: gpsd probes no further, so only the polls
    /// find the new make, and its own commands drive it from then on.
    @Test func aMediaTekInTheUbloxsPlaceIsFoundByThePolls() {
        var script = Self.cameBack(on: "/dev/ttyACM0", driverInTheActivation: true)
        script.advance(to: 44)
        #expect(writes(script, since: 40).prefix(2) == [Self.poll, Self.mediatekPoll])
        let mediatek = ReceiverIdentity(path: "/dev/ttyACM0", driver: "MTK-3301")
        script.send(.receiverChanged(devicePath: "/dev/ttyACM0", identity: mediatek), at: 45)
        #expect(script.controller.mechanism == .pmtk)
        #expect(script.events(.receiverIdentified).last?.detail.contains("MTK-3301") == true)
        script.advance(to: 70)
        // Woken and put in the regime the u-blox was held in by its own commands: the u-blox's never reached it.
        #expect(writes(script, since: 45).contains(PowerControllerTests.pmtkStandby), "\(writes(script, since: 45))")
        // No more polls once a make answered.
        #expect(writes(script, since: 44.5).filter { $0 == Self.poll || $0 == Self.mediatekPoll }.isEmpty)
    }

    /// gpsd named the make but not the generation (it saw UBX before any MON-VER): the receiver is asked,
    /// and the answer brings the generation's power save.
    @Test func aUbloxOfUnknownGenerationAtStartIsAskedItsVersions() {
        let configuration = PowerControllerConfiguration(model: .ublox8, connection: .usb)
        let bare = ReceiverIdentity(path: "/dev/ttyACM0", driver: "u-blox")
        var script = ControllerScript(configuration, identified: bare)
        script.send(.receiverChanged(devicePath: "/dev/ttyACM0", identity: bare), at: 1)
        #expect(script.offers.last?.contains(.powerSave) == false)
        script.advance(to: 5)
        #expect(writes(script, since: 0.5).filter { $0 == Self.poll }.count == 1)
        script.send(.receiverChanged(devicePath: "/dev/ttyACM0", identity: PowerControllerTests.ublox8("/dev/ttyACM0")), at: 6)
        #expect(script.offers.last?.contains(.powerSave) == true)
        let identified = script.events(.receiverIdentified)
        #expect(identified.count == 2)
        #expect(identified.last?.detail.contains("again") == false, "\(identified)")
        script.advance(to: 30)
        #expect(writes(script, since: 6).filter { $0 == Self.poll }.isEmpty)
    }

    @Test func aDeviceGpsdReopenedWithoutLosingItIsNotPolled() {
        let configuration = PowerControllerConfiguration(model: .ublox8, connection: .usb)
        var script = ControllerScript(configuration, identified: PowerControllerTests.ublox8("/dev/ttyACM0"))
        script.holdInStandby("/dev/ttyACM0")
        script.send(.deviceActivated(devicePath: "/dev/ttyACM0"), at: 40)
        script.advance(to: 60)
        #expect(!writes(script, since: 40).contains(Self.poll))
    }

    func writes(_ script: ControllerScript, since: Double) -> [ReceiverWrite] {
        script.writes(since: since).map(\.write)
    }
}
