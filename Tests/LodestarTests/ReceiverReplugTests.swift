import Foundation
import Lodestar
import Policy
import Receivers
import ReceiverEmulation
import TestSupport
import Testing

/// A u-blox over USB that the car profile naps, unplugged while it is down and plugged in again, as gpsd's
/// hotplug tells gpsd (`-OLD` on removal, `+NEW` on add): the manager watches every device, as the daemon
/// does, and power control must identify the receiver that came back and put it in the policy's regime
/// again, which the emulator's own timeline and the commands it heard show.
@Suite(.tags(.gpsd)) struct ReceiverReplugTests {
    /// Where the unplug and replug are, in the emulator's clock.
    final class Replug: @unchecked Sendable {
        var unpluggedAt: Double?
        var pluggedAt: Double?
        var oldPath = ""
        var newPath = ""
    }

    static func isDown(_ state: EmulatedReceiver.PowerState) -> Bool { [.standby, .backup, .off].contains(state) }

    static func replug(onNewPath: Bool) async throws -> (PoweredRun, Replug) {
        let replug = Replug()
        let run = try await PowerControlFaultTests.run(watchEveryDevice: true, clockLimit: 900) { run in
            let receiver = run.receiver
            let now = receiver.clock
            guard let unpluggedAt = replug.unpluggedAt else {
                // Unplugged while down, once the receiver is down for a few seconds.
                if now > 60, isDown(receiver.powerState),
                    let last = receiver.timeline.last, isDown(last.state), now - last.start > 3
                {
                    replug.oldPath = receiver.devicePath
                    replug.unpluggedAt = now
                    receiver.disappear()
                    // gpsd's hotplug script on removal; gpsd may have dropped the device already.
                    try? run.gpsd.removeDevice(replug.oldPath)
                }
                return false
            }
            guard let pluggedAt = replug.pluggedAt else {
                if now > unpluggedAt + 20 {
                    guard let path = try? receiver.reappear(avoiding: onNewPath ? [replug.oldPath] : [])
                    else { return false }
                    replug.newPath = path
                    replug.pluggedAt = now
                    try? run.gpsd.addDevice(path)
                }
                return false
            }
            return Self.reapplied(run, after: pluggedAt) && Self.locations(run, after: pluggedAt) > 5
                && now > pluggedAt + 60
        }
        return (run, replug)
    }

    static func reapplied(_ run: PoweredRun, after pluggedAt: Double) -> Bool {
        run.receiver.timeline.contains { $0.start > pluggedAt && isDown($0.state) }
    }

    static func locations(_ run: PoweredRun, after t: Double) -> Int {
        run.updates.reduce(0) { count, item in
            guard item.clock > t, case .locations(let locations) = item.update else { return count }
            return count + locations.count
        }
    }

    static func expectPowerSetupReapplied(_ run: PoweredRun, _ replug: Replug) throws {
        let pluggedAt = try #require(replug.pluggedAt, "the receiver was never unplugged and plugged in again")
        let events = run.powerEvents.filter { $0.clock > pluggedAt }
        let summary = "replugged \(replug.oldPath) → \(replug.newPath) at \(Int(pluggedAt)); power events after: "
            + events.map { "\(Int($0.clock)) \($0.event.kind): \($0.event.detail)" }.joined(separator: "\n")
        // Identified again: the receiver that came back is a u-blox, with the UBX mechanism.
        #expect(
            events.contains { $0.event.kind == .receiverIdentified && $0.event.detail.contains("ubx") }, "\(summary)")
        // The policy's regime applied to it: the emulator heard GNSS stop after the replug and went down.
        let heard = run.receiver.commands.filter { $0.t > pluggedAt && !$0.ignored }.map(\.message.name)
        #expect(heard.contains("MON-VER poll"), "heard after the replug: \(heard); \(summary)")
        #expect(heard.contains("CFG-RST GNSS stop"), "heard after the replug: \(heard); \(summary)")
        #expect(
            Self.reapplied(run, after: pluggedAt),
            "timeline after the replug: \(run.receiver.timeline.filter { $0.end > pluggedAt }.map { "\(Int($0.start)) \($0.state)" })")
        #expect(Self.locations(run, after: pluggedAt) > 0, "locations resume after the replug")
        GPSDRestartTests.expectNoneDuplicated(run)
    }

    /// The kernel hands the freed pty number out again, unless a test running meanwhile took it.
    @Test func aReceiverRepluggedOnTheSamePathGetsItsPowerSetupAgain() async throws {
        let (run, replug) = try await Self.replug(onNewPath: false)
        if replug.newPath != replug.oldPath { print("replugged on \(replug.newPath), not \(replug.oldPath): taken") }
        try Self.expectPowerSetupReapplied(run, replug)
    }

    @Test func aReceiverRepluggedOnANewPathIsIdentifiedAndGetsItsPowerSetupAgain() async throws {
        let (run, replug) = try await Self.replug(onNewPath: true)
        #expect(replug.newPath != replug.oldPath)
        try Self.expectPowerSetupReapplied(run, replug)
    }
}
