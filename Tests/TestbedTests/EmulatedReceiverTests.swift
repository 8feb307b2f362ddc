import GPSModel
import Policy
import Receivers
import SystemInterface
import Testbed
import Testing

/// The emulated receiver without gpsd: its timeline and what it answers, read straight from its pty.
@Suite struct EmulatedReceiverTests {
    static func epochs(count: Int) -> [EmulatedReceiver.Epoch] {
        (0..<count).map { index in
            EmulatedReceiver.Epoch(
                t: Double(index),
                fix: Fix(
                    mode: .threeD, time: UTCTime(seconds: 1_700_000_000 + Int64(index)), latitude: 48.1, longitude: 11.5,
                    altitudeMSL: 520, eph: 5, speed: 3, track: 90))
        }
    }

    @Test func powerOffAndOnRestartsAndCharges() throws {
        let receiver = try EmulatedReceiver(epochs: Self.epochs(count: 100), personality: .ublox8, model: .ublox8, speed: 20)
        defer { receiver.stop() }
        receiver.start()
        try waitUntil("1 s", timeout: 5) { receiver.clock > 1 }
        receiver.setPowered(false)
        #expect(receiver.powerState == .off)
        try waitUntil("2 s", timeout: 5) { receiver.clock > 2 }
        receiver.setPowered(true)
        #expect(receiver.powerState == .acquiring)
        let states = receiver.timeline.map(\.state)
        #expect(states == [.tracking, .off, .acquiring], "\(receiver.timeline)")
    }
}
