import Foundation
import Lodestar
import Policy
import SystemInterface
import TestSupport
import Testing

/// `lodestar run` with a u-blox 8 on USB at 10x under `profile`, its gpsd named no device: the test names it on
/// each new gpsd (as gpsd's hotplug would) and the service watches all.
private func startedWithoutADevice(profile: String) throws -> DaemonUnderTest {
    var model = ReceiverModel.ublox8
    model.connection = .usb
    let run = try DaemonUnderTest(model: model, connection: .usb, speed: 10)
    var config = run.baseConfig(profile: profile)
    config["gpsd"] = ["host": "127.0.0.1", "port": String(run.gpsd.port), "device": NSNull()]
    try run.writeConfig(config)
    try run.start()
    return run
}

/// `lodestar run` (the binary) while its gpsd is SIGKILLed and started again 20 times on the same port, with
/// the receiver's device added back each time: the service reconnects by itself, locations come again after
/// every restart, and the track file never holds a location twice.
@Suite(.tags(.gpsd, .slow)) struct DaemonGPSDRestartTests {
    @Test func twentyGPSDRestartsLeaveATrackWithLocationsAfterEachAndNoneTwice() async throws {
        let run = try startedWithoutADevice(profile: "always-on")
        try await run.waitUntil("the first locations", timeout: 60) { run.locationTimestamps().count >= 5 }
        var counts: [Int] = []
        for restart in 1...20 {
            let before = run.locationTimestamps().count
            run.gpsd.kill()
            run.gpsd = try run.gpsd.successor()
            try run.gpsd.addDevice(run.receiver.devicePath)
            try await run.waitUntil("locations after restart \(restart)", timeout: 60) {
                run.locationTimestamps().count >= before + 5
            }
            counts.append(run.locationTimestamps().count - before)
        }
        let (status, seconds) = try await run.terminate()
        #expect(status == 0)
        #expect(seconds < 2)
        let timestamps = run.locationTimestamps()
        var seen = Set<String>()
        let twice = timestamps.filter { !seen.insert($0).inserted }
        #expect(twice.isEmpty, "written twice: \(twice)")
        #expect(timestamps == timestamps.sorted(), "the track is in time order")
        #expect(counts.count == 20)
        #expect(run.stderr.components(separatedBy: "receiverBack").count - 1 >= 20, "the service saw gpsd come back each time")
    }
}

/// `lodestar run` (the binary) with a u-blox under the car profile that is unplugged while the service has it
/// down and plugged in again on another device path: the service identifies it again and puts it down again,
/// as the emulator hears and its timeline shows.
@Suite(.tags(.gpsd)) struct DaemonReplugTests {
    @Test func aReceiverPluggedBackOnANewPathGetsItsPowerSetupAgain() async throws {
        let run = try startedWithoutADevice(profile: "car")
        let down: Set<String> = ["standby", "backup", "off"]
        try await run.waitUntil("the receiver down", timeout: 60) { run.receiver.timeline.contains { down.contains($0.state.rawValue) } }
        let oldPath = run.receiver.devicePath
        run.receiver.disappear()
        // As udev's remove rule does; gpsd may have dropped the device itself on the pty's hang-up by then, and
        // answers ERROR for a device it no longer has.
        do {
            try run.gpsd.removeDevice(oldPath)
        } catch {
            guard case .controlCommandFailed(_, let reply) = error, reply.hasPrefix("ERROR") else { throw error }
        }
        try await Task.sleep(for: .seconds(1))
        let newPath = try run.receiver.reappear(avoiding: [oldPath])
        let pluggedAt = run.receiver.clock
        try run.gpsd.addDevice(newPath)
        try await run.waitUntil("the receiver identified again", timeout: 60) {
            run.stderr.contains("receiverIdentified") && run.stderr.contains("again, on \(newPath)")
        }
        try await run.waitUntil("the receiver down again after the replug", timeout: 90) {
            run.receiver.timeline.contains { $0.start > pluggedAt && down.contains($0.state.rawValue) }
        }
        let heard = run.receiver.commands.filter { $0.t > pluggedAt && !$0.ignored }.map(\.message.name)
        #expect(heard.contains("MON-VER poll"), "heard after the replug: \(heard)")
        #expect(heard.contains("CFG-RST GNSS stop") || heard.contains("RXM-PMREQ backup"), "heard after the replug: \(heard)")
        let before = run.locationTimestamps().count
        try await run.waitUntil("locations after the replug", timeout: 90) { run.locationTimestamps().count > before }
        let (status, _) = try await run.terminate()
        #expect(status == 0)
        let timestamps = run.locationTimestamps()
        #expect(Set(timestamps).count == timestamps.count, "no location written twice")
    }
}
