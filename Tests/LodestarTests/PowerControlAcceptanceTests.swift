import Foundation
import Capture
import GPSD
import GPSModel
import Lodestar
import Policy
import Receivers
import Simulation
import Synchronization
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

/// A `LocationManager` with receiver power control against a real private gpsd and an emulated receiver on
/// the device side of its pty, played fast (`speed` capture seconds per second, the manager's clock alike),
/// compared with the simulation `replay --profile` runs on the same capture and model.
final class PoweredRun: @unchecked Sendable {
    let gpsd: PrivateGPSD
    let receiver: EmulatedReceiver
    let manager: LocationManager
    let profile: Profile
    /// Every update, with the emulator's clock when it was sent.
    private let collected: ManagerUpdates

    init(
        capture name: String, profile: Profile, personality: EmulatedReceiver.Personality,
        connection: ReceiverConnection, speed: Double, gpsdOptions: PrivateGPSD.Options = .init(),
        watchEveryDevice: Bool = false, power: (EmulatedReceiver) -> ReceiverPowerSetup
    ) throws {
        self.profile = profile
        let contents = try importedCapture(name)
        (gpsd, receiver) = try PrivateGPSD.startReading(
            options: gpsdOptions,
            {
                try EmulatedReceiver(
                    capture: contents, personality: personality, model: profile.receiver, speed: speed,
                    connection: connection)
            }, terminal: \.terminal, discard: { $0.stop() })
        manager = LocationManager(
            source: .gpsd(
                host: "127.0.0.1", port: String(gpsd.port), device: watchEveryDevice ? nil : receiver.devicePath),
            profile: profile,
            power: power(receiver), clockRate: speed)
        collected = ManagerUpdates(manager) { [receiver] in receiver.clock }
    }

    /// Starts the manager's activities and the receiver, and plays the capture to its end. Updates are stamped
    /// on the manager's thread as they are sent, and the play is paced on a thread of its own: a test pool
    /// busy with other suites' computing must not move an update's time nor an unplug's (`onOwnThread`).
    func play(timeout: Double) async throws {
        if profile.updatesEnabled { manager.startUpdatingLocation(profile.updates) }
        if profile.significantChange { manager.startMonitoringSignificantLocationChanges() }
        receiver.start()
        try await onOwnThread { [self] in
            defer {
                receiver.stop()
                gpsd.stop()
            }
            let deadline = monotonicSeconds() + timeout
            while !receiver.isFinished && !stopEarly() {
                guard monotonicSeconds() < deadline else { throw TimedOut(what: "the capture played") }
                usleep(50_000)
            }
            manager.shutdown()
            try collected.waitForTheEnd()
            // The exit regime's frames are in gpsd's hands once the manager finished: give them time to reach
            // the receiver before it goes.
            var heard = receiver.commands.count
            for _ in 0..<20 {
                usleep(250_000)
                let now = receiver.commands.count
                if now == heard { break }
                heard = now
            }
        }
    }

    /// Writes what happened, for a person looking into a failure.
    func dump(to path: String) {
        var lines: [String] = []
        for item in updates {
            switch item.update {
            case .locations(let locations):
                for location in locations { lines.append(String(format: "%8.1f location %@", item.clock, "\(location.timestamp) acc \(location.horizontalAccuracy ?? -1) speed \(location.speed ?? -1)")) }
            default: lines.append(String(format: "%8.1f lodestar %@", item.clock, "\(item.update)"))
            }
        }
        for command in receiver.commands { lines.append(String(format: "%8.1f receiver got %@%@", command.t, command.message.name, command.ignored ? " (ignored)" : "")) }
        for interval in receiver.timeline { lines.append(String(format: "%8.1f receiver %@ until %.1f", interval.start, interval.state.rawValue, interval.end)) }
        let sorted = lines.sorted { (Double($0.prefix(8).trimmingCharacters(in: .whitespaces)) ?? 0) < (Double($1.prefix(8).trimmingCharacters(in: .whitespaces)) ?? 0) }
        _ = try? CaptureFileWriter(path: path, replacing: true).write(Array(sorted.joined(separator: "\n").utf8))
    }

    /// Ends the play early when it returns true (checked every 50 ms).
    var stopEarly: () -> Bool = { false }
    /// For a test that unplugs the receiver.
    var unplugged = false
    var replugAt: Double?

    var updates: [(clock: Double, update: LocationUpdate)] { collected.stamped }
    var powerEvents: [(clock: Double, event: PowerEvent)] {
        updates.compactMap { if case .power(let event) = $0.update { ($0.clock, event) } else { nil } }
    }
    var regimes: [(clock: Double, regime: ReceiverRegime)] {
        updates.compactMap { if case .regime(let regime, _) = $0.update { ($0.clock, regime) } else { nil } }
    }
    /// What Lodestar had gpsd write, by name, without the wake preambles.
    var transmitted: [String] {
        updates.compactMap {
            if case .transmitted(let bytes, let name) = $0.update, bytes != RegimeWake.preamble { name } else { nil }
        }
    }
}

/// A manager's updates, taken on its own thread as they are sent and stamped there with `clock`: a task
/// reading the stream waits for the test pool, which other suites' computing can hold for a minute.
final class ManagerUpdates: Sendable {
    private let items = Mutex<[(clock: Double, update: LocationUpdate)]>([])
    private let ended = Mutex(false)

    /// Before the manager starts anything, so no update is missed.
    init(_ manager: LocationManager, clock: @escaping @Sendable () -> Double = { 0 }) {
        manager.observeUpdates { [self] update in
            guard let update else { return ended.withLock { $0 = true } }
            items.withLock { $0.append((clock(), update)) }
        }
    }

    var stamped: [(clock: Double, update: LocationUpdate)] { items.withLock { $0 } }
    var all: [LocationUpdate] { items.withLock { $0.map(\.update) } }

    /// Blocks until the manager's last update (after `shutdown`).
    func waitForTheEnd() throws {
        try waitUntil("the manager's last update", timeout: 30) { ended.withLock { $0 } }
    }
}

/// A regime change seen on a timeline: the receiver went down (standby, backup or off) or came up.
struct Transition: Equatable, CustomStringConvertible {
    var t: Double
    var down: Bool
    var description: String { "\(down ? "down" : "up")@\(Int(t.rounded()))" }
}

enum TimelineCompare {
    static func transitions<S>(_ intervals: [(start: Double, state: S)], isDown: (S) -> Bool) -> [Transition] {
        var result: [Transition] = []
        var wasDown = false
        for interval in intervals {
            let down = isDown(interval.state)
            if down != wasDown { result.append(Transition(t: interval.start, down: down)) }
            wasDown = down
        }
        return result
    }

    static func isSubsequence(_ part: [String], of whole: [String]) -> Bool {
        var rest = whole[...]
        for item in part {
            guard let index = rest.firstIndex(of: item) else { return false }
            rest = rest[(index + 1)...]
        }
        return true
    }

    /// The transitions of `expected` with no transition of the same direction within `tolerance` in `actual`.
    static func unmatched(_ expected: [Transition], in actual: [Transition], tolerance: Double) -> [Transition] {
        var remaining = actual
        var missing: [Transition] = []
        for transition in expected {
            if let index = remaining.firstIndex(where: { $0.down == transition.down && abs($0.t - transition.t) <= tolerance }) {
                remaining.remove(at: index)
            } else {
                missing.append(transition)
            }
        }
        return missing
    }
}

/// The acceptance runs of receiver power control: each plays the Munich capture (31 min) fast through a real
/// gpsd into an emulated receiver, with the car profile's policy powering it, and holds the emulator's own
/// power timeline against the simulation `replay --profile car` runs on the same capture and model.
@Suite(.tags(.gpsd, .slow)) struct PowerControlAcceptanceTests {
    static let capture = "munich-urban-stopgo-31m.nmea"
    static let speed = 20.0

    /// What the simulation says, and what the emulator did, side by side.
    struct Comparison: CustomStringConvertible {
        var expected: [Transition]
        var actual: [Transition]
        var missing: [Transition]
        var extra: [Transition]
        var simulatedEnergy: Double
        var emulatedEnergy: Double
        var energyRatio: Double { emulatedEnergy / simulatedEnergy }
        var within2: String {
            let beyond = TimelineCompare.unmatched(expected, in: actual, tolerance: 2).count
            return "\(expected.count - beyond) within 2 s"
        }
        var summary: String {
            "\(expected.count - missing.count) of \(expected.count) simulated regime changes within 1 s, "
                + "\(actual.count) on the emulator; energy \(emulatedEnergy) mAh against \(simulatedEnergy) simulated"
        }
        var description: String {
            "simulated \(expected.count) changes, emulated \(actual.count); missing \(missing), extra \(extra);"
                + " energy simulated \(simulatedEnergy) mAh, emulated \(emulatedEnergy) mAh"
        }
    }

    static func compare(_ run: PoweredRun, profile: Profile) throws -> Comparison {
        let contents = try importedCapture(capture)
        let summary = ReceiverSimulation(setup: profile.simulationSetup).run(contents) { _ in }
        let expected = TimelineCompare.transitions(summary.timeline.map { ($0.start, $0.state) }) { $0.isDown }
        let emulated = run.receiver.timeline(until: summary.lastT)
        let actual = TimelineCompare.transitions(emulated.map { ($0.start, $0.state) }) {
            [.standby, .backup, .off].contains($0)
        }
        return Comparison(
            expected: expected, actual: actual,
            missing: TimelineCompare.unmatched(expected, in: actual, tolerance: 1),
            extra: TimelineCompare.unmatched(actual, in: expected, tolerance: 1),
            simulatedEnergy: EvaluationMath.energy(summary.timeline, model: profile.receiver),
            emulatedEnergy: run.receiver.energyMilliampHours(until: summary.lastT))
    }

    /// Most simulated regime changes are seen on the emulator within 1 s, and most of the rest within 2 s;
    /// not each within 1 s. The simulation hands the policy each fix at its epoch's instant, while live it
    /// arrives later by the epoch quiet (0.35 s of the receiver's clock, at any speed) and gpsd's own delay.
    /// A predictive wake timed just before an epoch then misses it live and catches the next, one epoch
    /// later, and the policy's next choices differ by a few seconds from there (docs/power-control.md,
    /// "Latency"). Measured at 20x on a quiet machine: the u-blox 92 of 138 within 1 s, 121 within 2 s; the
    /// MediaTek 85 of 114 and 103.
    static func expectMatch(_ comparison: Comparison, sourceLocation: SourceLocation = #_sourceLocation) {
        let count = Double(comparison.expected.count)
        let beyond2 = TimelineCompare.unmatched(comparison.expected, in: comparison.actual, tolerance: 2)
        let within1 = count - Double(comparison.missing.count)
        #expect(
            Double(beyond2.count) <= 0.25 * count, "beyond 2 s: \(beyond2); \(comparison)",
            sourceLocation: sourceLocation)
        #expect(within1 >= 0.5 * count, "\(comparison)", sourceLocation: sourceLocation)
        #expect(
            abs(Double(comparison.actual.count) - count) <= 0.1 * count, "\(comparison)", sourceLocation: sourceLocation)
    }

    static func car(_ receiver: ReceiverModel) throws -> Profile {
        var profile = try #require(ProfileStore.builtIn("car"))
        profile.receiver = receiver
        return profile
    }

    /// Plays the car profile on `model`, emulated as `personality` on `connection`, to the capture's end and
    /// compares it with the simulation; prints the comparison under `label` and dumps the run to
    /// LODESTAR_DUMP when set.
    static func playCar(
        _ model: ReceiverModel, as personality: EmulatedReceiver.Personality, on connection: ReceiverConnection,
        label: String, power: (EmulatedReceiver) -> ReceiverPowerSetup
    ) async throws -> (run: PoweredRun, comparison: Comparison) {
        let profile = try car(model)
        let run = try PoweredRun(
            capture: capture, profile: profile, personality: personality, connection: connection, speed: speed,
            power: power)
        try await run.play(timeout: 31 * 60 / speed + 60)
        let comparison = try compare(run, profile: profile)
        print("\(label): \(comparison.summary); \(comparison.within2)")
        if let dump = ProcessInfo.processInfo.environment["LODESTAR_DUMP"] { run.dump(to: dump) }
        return (run, comparison)
    }

    /// The car profile on a receiver put down by commands, `model` on `connection`: it naps, and the
    /// emulator's timeline and charge follow the simulation's. Returns the run and the names of the `frames`
    /// that reached the receiver, in order.
    static func playCarByCommands(
        _ model: ReceiverModel, as personality: EmulatedReceiver.Personality, on connection: ReceiverConnection,
        label: String, frames: Set<String>, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (run: PoweredRun, received: [String]) {
        var model = model
        model.connection = connection
        let (run, comparison) = try await playCar(model, as: personality, on: connection, label: label) { _ in
            ReceiverPowerSetup(connection: connection, timeouts: PowerControllerTimeouts(wakeTimeout: 30))
        }
        #expect(comparison.expected.count > 10, "the car profile naps on this capture", sourceLocation: sourceLocation)
        expectMatch(comparison, sourceLocation: sourceLocation)
        #expect(abs(comparison.energyRatio - 1) <= 0.05, "\(comparison)", sourceLocation: sourceLocation)
        return (run, run.receiver.commands.map(\.message.name).filter(frames.contains))
    }

    @Test func carProfileOnAnEmulatedUblox8OverUSB() async throws {
        let (run, received) = try await Self.playCarByCommands(
            .ublox8, as: .ublox8, on: .usb, label: "u-blox 8 over USB",
            frames: [
                "CFG-RST GNSS stop", "CFG-RST GNSS start", "RXM-PMREQ backup", "CFG-PMS full power", "CFG-PMS power save",
                "CFG-RXM continuous", "CFG-RXM power save", "CFG-VALSET operate mode full",
                "CFG-VALSET operate mode power save",
            ])
        // The frames that reached the receiver are the ones Lodestar sent, in order: GNSS stop for standby,
        // GNSS start and the power mode to wake (off is out of reach over USB).
        #expect(received == run.transmitted)
        #expect(!received.contains("RXM-PMREQ backup"))
        #expect(received.contains("CFG-RST GNSS stop"))
    }
}

extension PowerControlAcceptanceTests {
    /// MediaTek over its UART: PMTK161 standby, woken by any byte, PMTK225 for power save and back.
    @Test func carProfileOnAnEmulatedMediaTekOverUART() async throws {
        let (run, received) = try await Self.playCarByCommands(
            .mt3339, as: .mtk3339, on: .uart, label: "MediaTek over UART",
            frames: ["$PMTK161,0", "$PMTK225,0", "$" + RegimePlan.mediatekPowerSave.body])
        // In order; a sentence may be lost with the wake bytes when a loaded machine holds the emulator's
        // thread past the 1 s settle (50 ms at 20x) and it reads both at once, as a waking MTK loses them.
        #expect(TimelineCompare.isSubsequence(received, of: run.transmitted), "\(received)")
        #expect(run.transmitted.count - received.count <= 2, "\(run.transmitted.count) sent, \(received.count) heard")
        #expect(received.contains("$PMTK161,0"))
        // Each standby ends with the wake bytes before anything else is sent.
        let names = run.updates.compactMap { item -> String? in
            if case .transmitted(let bytes, let name) = item.update { bytes == RegimeWake.preamble ? "wake" : name } else { nil }
        }
        for (index, name) in names.enumerated() where name == "$PMTK161,0" && index + 1 < names.count {
            #expect(names[index + 1] == "wake", "after standby: \(names[index + 1])")
        }
    }

    /// A generic NMEA receiver behind a GPIO enable line: off cuts its power (a cold start after), on
    /// restores it. The line is injected: this machine has no gpio-sim.
    @Test func carProfileOnAGPIOSwitchedGenericReceiver() async throws {
        // With a backup cell (an Adafruit Ultimate GPS with its CR1220, say) it restarts hot, so napping pays.
        var model = ReceiverModel.genericNMEA
        model.powerControl = .gpio
        model.backupSupplyWhenOff = true
        model.timeToFirstFix.hotWindow = 2 * 3600
        let (run, comparison) = try await Self.playCar(
            model, as: .genericNMEA, on: .uart, label: "GPIO-switched generic receiver"
        ) { receiver in
            // 30 s of the receiver's clock before a wake counts as failed: 1.5 s of a loaded machine at 20x.
            ReceiverPowerSetup(
                mechanism: .gpio, powerSwitch: EmulatedPowerSwitch(receiver: receiver),
                timeouts: PowerControllerTimeouts(wakeTimeout: 30))
        }
        #expect(comparison.expected.count > 2, "the car profile switches the receiver off on this capture")
        // The charge agrees; the timeline less than the command-driven receivers': it naps every few seconds,
        // and each power-up's first epoch reaches the policy through gpsd's NMEA driver a moment later than
        // the simulation has it, so the short naps' ends drift by an epoch or two (measured at 20x: 74 of 287
        // changes within 1 s, 120 within 2 s, 271 changes against 287).
        let beyond2 = TimelineCompare.unmatched(comparison.expected, in: comparison.actual, tolerance: 2)
        #expect(Double(beyond2.count) <= 0.7 * Double(comparison.expected.count), "\(comparison)")
        #expect(
            abs(Double(comparison.actual.count - comparison.expected.count)) <= 0.15 * Double(comparison.expected.count))
        #expect(abs(comparison.energyRatio - 1) <= 0.05, "\(comparison)")
        // Every off went quiet and every on gave a fix: the switch, not a command, did it.
        let kinds = run.powerEvents.map(\.event.kind)
        #expect(kinds.filter { $0 == .quiet }.count >= comparison.actual.count / 2 - 1)
        #expect(kinds.filter { $0 == .firstFixAfterWake }.count >= comparison.actual.count / 2 - 1)
        #expect(!kinds.contains(.noEffect) && !kinds.contains(.wakeFailed))
        #expect(run.transmitted.isEmpty, "nothing is written to a receiver without commands")
        #expect(run.receiver.timeline.contains { $0.state == .off })
    }
}

/// What goes wrong: gpsd that drops every write, and each fault the emulator can inject. Short runs on the
/// Munich capture's first minutes.
@Suite(.tags(.gpsd)) struct PowerControlFaultTests {
    static let speed = 20.0

    static func run(
        faults: EmulatedReceiver.Faults = .init(), gpsdOptions: PrivateGPSD.Options = .init(),
        watchEveryDevice: Bool = false, timeouts: PowerControllerTimeouts = .init(), clockLimit: Double = 600,
        until: @escaping (PoweredRun) -> Bool
    ) async throws -> PoweredRun {
        var model = ReceiverModel.ublox8
        model.connection = .usb
        let profile = try PowerControlAcceptanceTests.car(model)
        let run = try PoweredRun(
            capture: PowerControlAcceptanceTests.capture, profile: profile, personality: .ublox8, connection: .usb,
            speed: speed, gpsdOptions: gpsdOptions, watchEveryDevice: watchEveryDevice
        ) { _ in ReceiverPowerSetup(connection: .usb, timeouts: timeouts) }
        run.receiver.faults = faults
        run.stopEarly = { [unowned run] in until(run) || run.receiver.clock > clockLimit }
        try await run.play(timeout: clockLimit / speed + 30)
        if let dump = ProcessInfo.processInfo.environment["LODESTAR_DUMP"] { run.dump(to: dump) }
        return run
    }

    /// gpsd started with -b drops the GNSS stop; Lodestar sees the receiver keep talking, says so once with
    /// -b as the cause, and counts it as running: no saving reported, no down regime asked for again.
    @Test func aReadOnlyGPSDIsNamedAndTheRunGoesOn() async throws {
        var options = PrivateGPSD.Options()
        options.readOnly = true
        let run = try await Self.run(gpsdOptions: options) { run in
            run.receiver.clock > (run.powerEvents.first { $0.event.kind == .noEffect }?.clock ?? .infinity) + 120
        }
        let noEffect = run.powerEvents.filter { $0.event.kind == .noEffect }
        #expect(noEffect.count == 1)
        let event = try #require(noEffect.first)
        #expect(event.event.detail.contains("-b"), "\(event.event.detail)")
        // Within two of the car profile's probe intervals of the first command.
        let firstCommand = try #require(run.powerEvents.first { $0.event.kind == .regimeCommanded })
        let probe = run.profile.effectivePolicy.stationary[run.profile.updates.activityType].probeInterval
        #expect(event.clock - firstCommand.clock <= 2 * probe, "noEffect \(event.clock - firstCommand.clock) s after")
        // Counted as running from then on: nothing went quiet, no regime but running asked for, and the
        // receiver (whose commands gpsd dropped) tracked throughout.
        #expect(!run.powerEvents.contains { $0.event.kind == .quiet }, "nothing went quiet")
        let after = run.regimes.filter { $0.clock > event.clock }
        #expect(after.allSatisfy { $0.regime == .continuous }, "\(after)")
        #expect(run.receiver.timeline.allSatisfy { [.tracking, .acquiring].contains($0.state) })
        #expect(run.receiver.commands.allSatisfy { $0.message.name.hasPrefix("UBX") }, "gpsd wrote none of Lodestar's frames")
        #expect(run.updates.contains { if case .locations = $0.update { true } else { false } }, "locations go on")
    }

    @Test func aReceiverThatIgnoresCommandsIsToldOnce() async throws {
        let run = try await Self.run(faults: .init(ignoresCommands: true)) { run in
            run.powerEvents.contains { $0.event.kind == .noEffect }
        }
        let noEffect = run.powerEvents.filter { $0.event.kind == .noEffect }
        #expect(noEffect.count == 1)
        #expect(noEffect.first?.event.detail.contains("ignored") == true, "\(noEffect)")
    }

    /// Power control says the receiver did not wake and tries again; the policy backs its wakes off, and says
    /// when the next is.
    @Test func aReceiverThatNeverWakesIsRetriedWithBackoff() async throws {
        func acquisitionFailures(_ run: PoweredRun) -> [String] {
            run.updates.compactMap { item in
                if case .event(.acquisitionFailed, let detail) = item.update { detail } else { nil }
            }
        }
        // A wake counts as failed after 5 s without output, well before the policy's own 12 s acquisition
        // timeout sends the receiver down again, however loaded the machine.
        // Once down for the first time, it never wakes again.
        let played = try await Self.run(
            faults: .init(neverWakesOnceDown: true), timeouts: PowerControllerTimeouts(wakeTimeout: 5), clockLimit: 900
        ) { run in
            return run.powerEvents.contains { $0.event.kind == .wakeFailed } && acquisitionFailures(run).count >= 4
        }
        let failed = played.powerEvents.filter { $0.event.kind == .wakeFailed }
        #expect(!failed.isEmpty)
        #expect(failed.allSatisfy { $0.event.detail.contains("next try in") }, "\(failed)")
        // The policy's next attempts come further apart: "next probe in 30 s", "… 1 min", "… 2 min".
        let delays = acquisitionFailures(played).compactMap { detail -> Double? in
            guard let range = detail.range(of: #"next (attempt|probe) in "#, options: .regularExpression) else {
                return nil
            }
            let rest = detail[range.upperBound...]
            guard let number = Double(rest.prefix { $0.isNumber }) else { return nil }
            return rest.dropFirst(rest.prefix { $0.isNumber }.count).hasPrefix(" min") ? number * 60 : number
        }
        #expect(delays.count >= 3, "\(acquisitionFailures(played))")
        #expect((delays.max() ?? 0) >= 2 * (delays.min() ?? .infinity), "\(delays)")
    }

    @Test func aReceiverThatLosesItsConfigurationOnWakeGetsItAgain() async throws {
        let run = try await Self.run(faults: .init(losesConfigurationOnWake: true)) { run in
            run.powerEvents.filter { $0.event.kind == .firstFixAfterWake }.count >= 2
        }
        // After each wake it came back at full power; the plan sent again puts it back in power save.
        // (The policy may send it down again before the plan lands: at least one wake shows it.)
        let timeline = run.receiver.timeline
        let wakes = timeline.indices.filter { timeline[$0].state == .acquiring }
        #expect(wakes.count >= 2)
        #expect(
            wakes.contains { index in timeline[(index + 1)...].prefix(2).contains { $0.state == .powerSave } },
            "\(timeline.map(\.state))")
        let again = run.powerEvents.filter { $0.event.detail.contains("again") }
        #expect(again.count >= 2, "the plan was sent again after the wakes: \(again.count)")
    }

    /// Unplugged (its pty closed) and plugged in again on a new device, with gpsd told as its hotplug script
    /// tells it (the old path removed, the new one added): the manager watches every device, as the daemon
    /// does, its locations come back, and its commands reach the new device.
    @Test func aReceiverUnpluggedAndPluggedBackIsFoundAgain() async throws {
        let run = try await Self.run(watchEveryDevice: true) { run in
            if run.receiver.clock > 30, let old = run.receiver.terminal?.devicePath, !run.unplugged {
                run.unplugged = true
                run.receiver.disappear()
                try? run.gpsd.removeDevice(old)
            } else if run.unplugged, run.replugAt == nil, run.receiver.clock > 60,
                let path = try? run.receiver.reappear()
            {
                run.replugAt = run.receiver.clock
                try? run.gpsd.addDevice(path)
            }
            return (run.replugAt.map { run.receiver.clock > $0 + 120 }) ?? false
        }
        let replugAt = try #require(run.replugAt, "the receiver was plugged in again")
        let locationsAfter = run.updates.filter { item in
            guard case .locations = item.update else { return false }
            return item.clock > replugAt + 10
        }
        #expect(!locationsAfter.isEmpty, "locations after the receiver came back")
        let failedAfter = run.powerEvents.filter { $0.clock > replugAt + 10 && $0.event.kind == .commandFailed }
        #expect(failedAfter.isEmpty, "commands after the receiver came back: \(failedAfter.map(\.event.detail))")
        let commanded = run.receiver.commands.filter { $0.t > replugAt + 10 && $0.message.name.hasPrefix("CFG-") }
        #expect(!commanded.isEmpty, "the receiver on its new device got Lodestar's commands")
    }
}
