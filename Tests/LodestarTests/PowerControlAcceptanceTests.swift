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
import Testbed
import Testing

/// A `LocationManager` with receiver power control against a real private gpsd and an emulated receiver on
/// the device side of its pty, played fast (`speed` capture seconds per second, the manager's clock alike),
/// compared with the simulation `replay --profile` runs on the same capture and model.
final class PoweredRun: @unchecked Sendable {
    let gpsd: PrivateGPSD
    let receiver: EmulatedReceiver
    let manager: LocationManager
    let profile: Profile
    /// Every update, with the emulator's clock when it arrived.
    private let collected = Collected()

    final class Collected: Sendable {
        let items = Mutex<[(clock: Double, update: LocationUpdate)]>([])
    }
    private var reader: Task<Void, Never>?

    init(
        capture name: String, profile: Profile, personality: EmulatedReceiver.Personality,
        connection: ReceiverConnection, speed: Double, gpsdOptions: PrivateGPSD.Options = .init(),
        power: (EmulatedReceiver) -> ReceiverPowerSetup
    ) throws {
        self.profile = profile
        receiver = try EmulatedReceiver(
            capture: try importedCapture(name), personality: personality, model: profile.receiver, speed: speed,
            connection: connection)
        let terminal = try #require(receiver.terminal)
        gpsd = try Self.startGPSD(options: gpsdOptions, terminal: terminal)
        manager = LocationManager(
            source: .gpsd(host: "127.0.0.1", port: String(gpsd.port), device: terminal.devicePath), profile: profile,
            power: power(receiver), clockRate: speed)
    }

    private static func startGPSD(options: PrivateGPSD.Options, terminal: PseudoTerminal) throws -> PrivateGPSD {
        for attempt in 1...2 {
            let gpsd = try PrivateGPSD(options: options)
            do {
                try gpsd.addDeviceAndWait(terminal)
                return gpsd
            } catch {
                gpsd.stop()
                guard case .deviceNotActivated = error, attempt < 2 else { throw error }
            }
        }
        throw PrivateGPSD.StartError.deviceNotActivated(path: terminal.devicePath, log: "")
    }

    /// Starts the manager's activities and the receiver, and plays the capture to its end.
    func play(timeout: Double) async throws {
        let updates = manager.updates
        let receiver = receiver
        reader = Task { [collected] in
            for await update in updates { collected.items.withLock { $0.append((receiver.clock, update)) } }
        }
        if profile.updatesEnabled { manager.startUpdatingLocation(profile.updates) }
        if profile.significantChange { manager.startMonitoringSignificantLocationChanges() }
        receiver.start()
        let deadline = monotonicSeconds() + timeout
        while !receiver.isFinished && !stopEarly() {
            guard monotonicSeconds() < deadline else { throw TimedOut(what: "the capture played") }
            try await Task.sleep(for: .milliseconds(50))
        }
        manager.shutdown()
        await reader?.value
        // The exit regime's frames are in gpsd's hands once the manager finished: give them time to reach the
        // receiver before it goes.
        try await Task.sleep(for: .milliseconds(500))
        receiver.stop()
        gpsd.stop()
    }

    /// Writes what happened, for a person looking into a failure.
    func dump(to path: String) {
        var lines: [String] = []
        for item in updates {
            switch item.update {
            case .locations: continue
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

    var updates: [(clock: Double, update: LocationUpdate)] { collected.items.withLock { $0 } }
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

    /// Most simulated regime changes are seen on the emulator within 1 s, nearly all within 2 s. Not each
    /// within 1 s: the simulation hands the policy each fix at its epoch's instant, while live it arrives
    /// later by the epoch quiet (0.35 s of the receiver's clock, at any speed) and gpsd's own delay. A
    /// predictive wake the simulation times just before an epoch then misses it live and catches the next,
    /// one epoch later, and now and then the policy's next choice differs by a few seconds from there.
    static func expectMatch(_ comparison: Comparison, sourceLocation: SourceLocation = #_sourceLocation) {
        let count = Double(comparison.expected.count)
        let within2 = TimelineCompare.unmatched(comparison.expected, in: comparison.actual, tolerance: 2)
        let within1 = count - Double(comparison.missing.count)
        #expect(
            Double(within2.count) <= 0.1 * count, "within 2 s, missing \(within2); \(comparison)",
            sourceLocation: sourceLocation)
        #expect(within1 >= 0.6 * count, "\(comparison)", sourceLocation: sourceLocation)
        #expect(
            abs(Double(comparison.actual.count) - count) <= 0.1 * count, "\(comparison)", sourceLocation: sourceLocation)
    }

    static func car(_ receiver: ReceiverModel) throws -> Profile {
        var profile = try #require(ProfileStore.builtIn("car"))
        profile.receiver = receiver
        return profile
    }

    @Test func carProfileOnAnEmulatedUblox8OverUSB() async throws {
        var model = ReceiverModel.ublox8
        model.connection = .usb
        let profile = try Self.car(model)
        let run = try PoweredRun(
            capture: Self.capture, profile: profile, personality: .ublox8, connection: .usb, speed: Self.speed
        ) { _ in ReceiverPowerSetup(connection: .usb) }
        try await run.play(timeout: 31 * 60 / Self.speed + 60)
        let comparison = try Self.compare(run, profile: profile)
        print("u-blox 8 over USB: \(comparison.summary)")
        if let dump = ProcessInfo.processInfo.environment["LODESTAR_DUMP"] { run.dump(to: dump) }
        #expect(comparison.expected.count > 10, "the car profile naps on this capture")
        Self.expectMatch(comparison)
        #expect(abs(comparison.energyRatio - 1) <= 0.05, "\(comparison)")
        // The frames that reached the receiver are the ones Lodestar sent, in order: GNSS stop for standby,
        // GNSS start and the power mode to wake (off is out of reach over USB).
        let lodestarFrames = Set(["CFG-RST GNSS stop", "CFG-RST GNSS start", "RXM-PMREQ backup", "CFG-PMS full power",
            "CFG-PMS power save", "CFG-RXM continuous", "CFG-RXM power save", "CFG-VALSET operate mode full",
            "CFG-VALSET operate mode power save"])
        let received = run.receiver.commands.map(\.message.name).filter(lodestarFrames.contains)
        #expect(received == run.transmitted)
        #expect(!received.contains("RXM-PMREQ backup"))
        #expect(received.contains("CFG-RST GNSS stop"))
    }
}
