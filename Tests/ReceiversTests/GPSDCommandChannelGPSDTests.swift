import GPSD
import GPSModel
import Policy
import Receivers
import Synchronization
import SystemInterface
import TestSupport
import Testing

/// The command channel against a real gpsd (not read-only, so its writes reach the pty standing in for the
/// receiver): the bytes sent come out at the receiver exactly, and gpsd's answers reach the sender.
@Suite(.tags(.gpsd)) struct GPSDCommandChannelGPSDTests {
    final class Outcomes: Sendable {
        private let list = Mutex<[GPSDCommandOutcome]>([])
        var completion: GPSDCommandChannel.Completion { { outcome in self.list.withLock { $0.append(outcome) } } }
        var all: [GPSDCommandOutcome] { list.withLock { $0 } }
    }

    @Test func framesReachTheReceiverAndGpsdsAnswersTheSender() throws {
        let bed = try GPSDTestBed()
        defer { withExtendedLifetime(bed) {} }  // its deinit stops gpsd: not before the test ends
        let (gpsd, terminal) = (bed.gpsd, bed.terminal)

        let channel = GPSDCommandChannel()
        let source = LiveReportSource(host: "127.0.0.1", port: String(gpsd.port), commands: channel)
        let tracker = Mutex(ReceiverDeviceTracker())
        let stop = StopFlag()
        let ended = StopFlag()
        #expect(DetachedThread.start {
            try? source.run(shouldStop: { stop.isSet }) { event in tracker.withLock { _ = $0.note(event) } }
            ended.set()
        })
        defer {
            stop.set()
            _ = eventually(timeout: 5) { ended.isSet }
        }
        #expect(eventually { tracker.withLock { $0.identity } != nil }, "gpsd never named the receiver's driver")
        let context = tracker.withLock { tracker in
            ReceiverContext(
                devicePath: tracker.devicePath, identity: tracker.identity, model: .genericNMEA, commands: channel)
        }
        #expect(context.devicePath == terminal.devicePath)
        #expect(context.identity?.driver == "NMEA0183")

        // UBX MON-VER poll, then the MTK standby sentence: whole frames, byte for byte.
        let monVersionPoll: [UInt8] = [0xB5, 0x62, 0x0A, 0x04, 0x00, 0x00, 0x0E, 0x34]
        let standby = Array("$PMTK161,0*28\r\n".utf8)
        let outcomes = Outcomes()
        context.writeToReceiver(monVersionPoll, completion: outcomes.completion)
        context.writeToReceiver(standby, completion: outcomes.completion)
        // A device gpsd does not have: refused with gpsd's own words.
        channel.send(
            try #require(GPSDCommand.writeToDevice(path: "/dev/lodestar-no-such-device", bytes: [0x24])),
            completion: outcomes.completion)

        #expect(eventually { outcomes.all.count == 3 }, "answers: \(outcomes.all)")
        #expect(eventually { contains(terminal.bytesFromHost, standby) })
        #expect(contains(terminal.bytesFromHost, monVersionPoll + standby))
        let answers = outcomes.all
        for answer in answers.prefix(2) {
            guard case .answered(.device(let device)) = answer else {
                Issue.record("expected the device's DEVICE report, got \(answer)")
                continue
            }
            #expect(device.path == terminal.devicePath)
        }
        guard case .refused(let message)? = answers.last else {
            Issue.record("expected a refusal, got \(String(describing: answers.last))")
            return
        }
        #expect(message.contains("/dev/lodestar-no-such-device"))
    }
}

/// Whether `bytes` holds `part` as a contiguous run.
func contains(_ bytes: [UInt8], _ part: [UInt8]) -> Bool {
    !part.isEmpty && bytes.indices.contains { bytes[$0...].starts(with: part) }
}

/// Polls `condition` until it holds or `timeout` seconds pass.
func eventually(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + timeout
    while !condition() {
        if monotonicSeconds() > deadline { return false }
        sleepSeconds(0.01)
    }
    return true
}
