import Capture
import Foundation
import Lodestar
import Policy
import Receivers
import SystemInterface
import Testing

/// What the recorder writes for power control: the bytes sent, the regimes and the power events.
@Suite struct CaptureRecorderPowerTests {
    @Test func everyPowerEventKindSurvivesTheCaptureLine() {
        for kind in PowerEvent.Kind.allCases {
            let event = PowerEvent(kind, regime: .off, seconds: 12.5, detail: "\(kind.rawValue) detail")
            #expect(PowerEvent(event.captureEvent) == event)
        }
        let bare = PowerEvent(.receiverUnknown, detail: "SiRF: no commands")
        #expect(bare.captureEvent == CaptureEvent(kind: "receiverUnknown", detail: "SiRF: no commands"))
        #expect(PowerEvent(bare.captureEvent) == bare)
        // A policy event's kind, or one from a newer Lodestar, is no power event; an unknown regime is left out.
        #expect(PowerEvent(CaptureEvent(kind: "resumed", detail: "x")) == nil)
        #expect(
            PowerEvent(CaptureEvent(kind: "quiet", regime: "hibernate", seconds: 1, detail: "x"))
                == PowerEvent(.quiet, seconds: 1, detail: "x"))
    }

    @Test func transmittedBytesRegimesAndPowerEventsAreRecordedInTimeOrder() throws {
        let path = NSTemporaryDirectory() + "lodestar-recorder-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = CaptureRecorder(options: CaptureRecorder.Options(path: path))
        let standby = Array("$PMTK161,0*28\r\n".utf8)
        let wake = PowerEvent(.firstFixAfterWake, regime: .standby, seconds: 2.1, detail: "hot start")
        recorder.recordRegime(.standby, reason: "stationary 5 min within 50 m")
        recorder.recordTransmitted(standby)
        recorder.recordTransmitted([])  // nothing sent, nothing written
        recorder.recordPowerEvent(PowerEvent(.quiet, regime: .standby, seconds: 0.4, detail: "no output"))
        // Seen a while ago but recorded now: stamped no earlier than the line before it.
        recorder.recordPowerEvent(wake, at: monotonicSeconds() - 100)
        #expect(recorder.finish() == nil)
        let summary = recorder.summary
        #expect(summary.transmittedChunks == 1 && summary.transmittedBytes == standby.count)
        #expect(summary.powerEvents == 2)

        let contents = try CaptureReader.read(try readWholeFile(path))
        #expect(contents.header.source == "live")
        #expect(contents.lines.count == 4)
        guard contents.lines.count == 4, case .transmitted(let sent) = contents.lines[1].payload else {
            Issue.record("unexpected lines: \(contents.lines.map(\.payload))")
            return
        }
        #expect(contents.lines[0].payload == .regime("standby", reason: "stationary 5 min within 50 m"))
        #expect(contents.rawBytes(sent) == standby)
        #expect(
            contents.lines[2].payload
                == .event(CaptureEvent(kind: "quiet", regime: "standby", seconds: 0.4, detail: "no output")))
        #expect(contents.lines[3].payload == .event(wake.captureEvent))
        #expect(contents.lines[3].t == contents.lines[2].t)
    }
}
