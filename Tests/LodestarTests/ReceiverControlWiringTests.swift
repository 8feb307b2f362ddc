import GPSD
import GPSModel
import Lodestar
import Policy
import Receivers
import Synchronization
import SystemInterface
import TestSupport
import Testing

/// A live `LocationManager` hands its `ReceiverControl` the gpsd channel at once, the device once gpsd
/// reports it, and a context before the first regime; what the control writes through the channel reaches
/// the receiver.
@Suite struct ReceiverControlWiringTests {
    final class RecordingControl: ReceiverControl {
        enum Call {
            case context(ReceiverContext)
            case regime(ReceiverRegime)
        }
        private let list = Mutex<[Call]>([])
        var calls: [Call] { list.withLock { $0 } }
        var contexts: [ReceiverContext] {
            calls.compactMap { if case .context(let context) = $0 { context } else { nil } }
        }
        func receiverChanged(_ context: ReceiverContext) { list.withLock { $0.append(.context(context)) } }
        func setRegime(_ regime: ReceiverRegime, reason: String) { list.withLock { $0.append(.regime(regime)) } }
    }

    @Test func theControlGetsTheChannelAndTheDeviceAndReachesTheReceiver() throws {
        let bed = try GPSDTestBed()
        defer { withExtendedLifetime(bed) {} }  // its deinit stops gpsd: not before the test ends
        let (gpsd, terminal) = (bed.gpsd, bed.terminal)

        let control = RecordingControl()
        let manager = LocationManager(
            source: .gpsd(host: "127.0.0.1", port: String(gpsd.port)), receiver: .ublox8, receiverControl: control)
        defer { manager.shutdown() }
        manager.startUpdatingLocation()

        let deadline = monotonicSeconds() + 10
        while control.contexts.last?.identity == nil, monotonicSeconds() < deadline { sleepSeconds(0.01) }
        let contexts = control.contexts
        let first = try #require(contexts.first)
        #expect(first.commands != nil)
        #expect(first.model == .ublox8)
        let identified = try #require(contexts.last)
        #expect(identified.devicePath == terminal.devicePath)
        #expect(identified.identity?.path == terminal.devicePath)
        #expect(identified.identity?.driver == "NMEA0183")
        #expect(identified.commands === first.commands)
        if case .regime? = control.calls.first { Issue.record("a regime came before any context") }

        let gnssStop: [UInt8] = [0xB5, 0x62, 0x06, 0x04, 0x04, 0x00, 0x00, 0x00, 0x08, 0x00, 0x16, 0x74]
        let answered = StopFlag()
        identified.writeToReceiver(gnssStop) { outcome in
            if case .answered = outcome { answered.set() }
        }
        let written = monotonicSeconds() + 10
        func reached() -> Bool {
            let bytes = terminal.bytesFromHost
            return bytes.indices.contains { bytes[$0...].starts(with: gnssStop) }
        }
        while !(answered.isSet && reached()), monotonicSeconds() < written { sleepSeconds(0.01) }
        #expect(answered.isSet)
        #expect(reached())
    }
}
