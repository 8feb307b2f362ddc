import Foundation
import GPSModel
import Lodestar
import Policy
import Receivers
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

/// gpsd SIGKILLed and started again on its port, with the receiver's device added back, many times during a
/// `LocationManager` run with receiver power control (a u-blox over USB on the Munich capture): the manager
/// reconnects each time, delivers every fix gpsd reports once it is watching again, none twice, and puts
/// the receiver back in the policy's regime.
@Suite(.tags(.gpsd)) struct GPSDRestartTests {
    /// One gpsd after a restart: when the device was added back (emulator clock), and a plain client that
    /// saw every fix it reported from then on.
    struct Window {
        var start: Double
        var end = Double.infinity
        var reference: GPSDFixWatcher
    }

    final class Restarts: @unchecked Sendable {
        enum Phase {
            case up(since: Double)
            /// Killed and started again; waiting for the manager to watch the new gpsd (`receiverBack`).
            case waitingForWatch(since: Double, backBefore: Int)
        }

        var gpsd: PrivateGPSD
        var phase = Phase.up(since: 0)
        var windows: [Window] = []
        var problems: [String] = []
        init(_ gpsd: PrivateGPSD) { self.gpsd = gpsd }
    }

    static func receiverBackCount(_ run: PoweredRun) -> Int {
        run.updates.count { if case .event(.receiverBack, _) = $0.update { true } else { false } }
    }

    /// Plays `profile` with `count` restarts of gpsd, each after `upFor` seconds of the emulator's clock.
    static func run(profile name: String, count: Int, upFor: Double, speed: Double = 10) async throws -> (PoweredRun, Restarts) {
        var profile = try #require(ProfileStore.builtIn(name))
        var model = ReceiverModel.ublox8
        model.connection = .usb
        profile.receiver = model
        let run = try PoweredRun(
            capture: PowerControlAcceptanceTests.capture, profile: profile, personality: .ublox8, connection: .usb,
            speed: speed, watchEveryDevice: true
        ) { _ in ReceiverPowerSetup(connection: .usb, timeouts: PowerControllerTimeouts(wakeTimeout: 30)) }
        let restarts = Restarts(run.gpsd)
        run.stopEarly = { [unowned run] in
            let now = run.receiver.clock
            switch restarts.phase {
            case .up(let since):
                guard now - since >= upFor else { return false }
                guard restarts.windows.count < count else {
                    // The run ends here: what gpsd reports after the manager shut down is not its to deliver.
                    restarts.windows.last?.reference.stop()
                    return true
                }
                let backBefore = Self.receiverBackCount(run)
                restarts.gpsd.kill()
                restarts.windows.indices.last.map { restarts.windows[$0].end = now }
                do {
                    restarts.gpsd = try restarts.gpsd.successor()
                } catch {
                    restarts.problems.append("gpsd did not start again: \(error)")
                    return true
                }
                restarts.phase = .waitingForWatch(since: monotonicSeconds(), backBefore: backBefore)
            case .waitingForWatch(let since, let backBefore):
                guard Self.receiverBackCount(run) > backBefore else {
                    guard monotonicSeconds() - since > 15 else { return false }
                    restarts.problems.append("the manager did not watch gpsd again within 15 s")
                    return true
                }
                do {
                    // The reference watches before the device is added, so it sees every fix gpsd reports.
                    let reference = try GPSDFixWatcher(port: restarts.gpsd.port)
                    try restarts.gpsd.addDevice(run.receiver.devicePath)
                    restarts.windows.append(Window(start: now, reference: reference))
                } catch {
                    restarts.problems.append("restart \(restarts.windows.count + 1): \(error)")
                    return true
                }
                restarts.phase = .up(since: now)
            }
            return false
        }
        try await run.play(timeout: Double(count) * (upFor / speed + 20) + 60)
        restarts.gpsd.stop()
        for window in restarts.windows { window.reference.stop() }
        if let dump = ProcessInfo.processInfo.environment["LODESTAR_DUMP"] { run.dump(to: dump) }
        return (run, restarts)
    }

    static func delivered(_ run: PoweredRun) -> [(clock: Double, time: UTCTime)] {
        run.updates.flatMap { item -> [(clock: Double, time: UTCTime)] in
            guard case .locations(let locations) = item.update else { return [] }
            return locations.map { (item.clock, $0.timestamp) }
        }
    }

    static func expectNoneDuplicated(_ run: PoweredRun) {
        var seen = Set<UTCTime>()
        let twice = delivered(run).filter { !seen.insert($0.time).inserted }
        #expect(twice.isEmpty, "delivered twice: \(twice.map { "\($0.time) at \(Int($0.clock))" })")
    }

    /// Always on, so every fix gpsd reports is one the policy delivers unless it is less accurate than the
    /// profile admits: after each restart every such fix gpsd reported (as a plain client saw them) is
    /// delivered, the first one included.
    /// Each gpsd runs 30 s of the receiver's clock (3 s of wall time at 10x, the restarts' own wall time costing
    /// half the capture it would at 20x): a loaded machine has been seen to take
    /// over 2 s to activate a device.
    @Test(.tags(.slow)) func everyFixAfterEachOfTwentyRestartsIsDeliveredOnce() async throws {
        let (run, restarts) = try await Self.run(profile: "always-on", count: 20, upFor: 30)
        #expect(restarts.problems.isEmpty, "\(restarts.problems)")
        #expect(restarts.windows.count == 20)
        Self.expectNoneDuplicated(run)
        let delivered = Set(Self.delivered(run).map(\.time))
        let updates = run.profile.updates
        let limit = try #require(updates.accuracyLimit ?? updates.desiredAccuracy.acceptanceThreshold)
        for (index, window) in restarts.windows.enumerated() {
            var seen = window.reference.locations
            // The run's end may come between gpsd's report of an epoch to the reference and to the manager.
            if index == restarts.windows.count - 1 { seen = seen.dropLast() }
            let reported = seen.filter { ($0.horizontalAccuracy ?? 0) <= limit }.map(\.timestamp)
            let lost = reported.filter { !delivered.contains($0) }
            #expect(!window.reference.locations.isEmpty, "restart \(index + 1): gpsd reported no fix")
            #expect(lost.isEmpty, "restart \(index + 1) at \(Int(window.start)): \(lost.count) of \(reported.count) fixes lost: \(lost)")
        }
    }

    /// The car profile naps the receiver, so gpsd often starts again while it sleeps and says nothing
    /// gpsd could identify it by. After each restart the receiver is identified again, woken, put down
    /// again by the new gpsd's hand (a down stretch starts on the emulator's timeline), and its locations
    /// come.
    @Test(.tags(.slow)) func thePowerSetupIsAppliedAgainAfterEachRestart() async throws {
        let (run, restarts) = try await Self.run(profile: "car", count: 5, upFor: 150)
        #expect(restarts.problems.isEmpty, "\(restarts.problems)")
        #expect(restarts.windows.count == 5)
        Self.expectNoneDuplicated(run)
        let timeline = run.receiver.timeline
        for (index, window) in restarts.windows.enumerated() {
            let during = { (t: Double) in t > window.start && t < window.end }
            // Identified again when the new gpsd's probe left it unsure, or told that gpsd reopened the device
            // when the receiver was awake and gpsd knew it at once: either way power control saw the new gpsd.
            let identified = run.powerEvents.contains {
                during($0.clock)
                    && (($0.event.kind == .receiverIdentified && $0.event.detail.contains("again"))
                        || $0.event.kind == .reapplied)
            }
            let wentDown = timeline.contains { during($0.start) && [.standby, .backup].contains($0.state) }
            let located = Self.delivered(run).contains { during($0.clock) }
            let at = "restart \(index + 1) at \(Int(window.start))"
            #expect(identified, "\(at): power control did not see the new gpsd: \(run.powerEvents.filter { during($0.clock) }.map { "\($0.event)" })")
            #expect(wentDown, "\(at): the receiver was not put down again")
            #expect(located, "\(at): no location")
        }
    }
}
