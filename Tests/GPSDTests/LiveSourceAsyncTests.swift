import Capture
import Foundation
import GPSD
import GPSModel
import ReceiverEmulation
import TestSupport
import Testing

/// The live source as async Swift: an `AsyncSequence` of events, read on its own thread.
@Suite(.tags(.gpsd)) struct LiveSourceAsyncTests {
    @Test func eventsArriveAsAnAsyncSequence() async throws {
        let bed = try GPSDTestBed.readOnly()
        let source = LiveReportSource(host: "127.0.0.1", port: bed.port)
        let capture = try Fixtures.bytes("gpsd-sirf4-bu353s4.nmea")
        var fixes: [Fix] = []
        var sawDevice = false
        for try await event in source.events() {
            switch event {
            case .watching:
                let terminal = bed.terminal
                Thread.detachNewThread { _ = CaptureFeeder().feed(RawLogEpochs(capture), to: terminal) { false } }
            case .deviceActivated:
                sawDevice = true
            case .fix(let fix) where fix.hasPosition:
                fixes.append(fix)
            default:
                break
            }
            if fixes.count == 10 { break }
        }
        #expect(sawDevice)
        #expect(fixes.count == 10)
        // One fix per epoch: strictly increasing times.
        let times = fixes.compactMap(\.time)
        #expect(times == times.sorted() && Set(times).count == times.count)
    }

    @Test func unreachableGpsdEndsTheSequenceWithTheError() async {
        let source = LiveReportSource(host: "127.0.0.1", port: "1")
        await #expect(throws: GPSDError.self) {
            for try await _ in source.events() {}
        }
    }
}
