import Capture
import Foundation
import GPSD
import GPSModel
import Policy
import Lodestar
import SystemInterface
import Testing

/// A recorder with rotation: a new file by size, each one a capture that reads and replays alone, the oldest
/// pruned beyond `keep`.
@Suite struct CaptureRotationTests {
    static let setUp = [
        #"{"class":"VERSION","release":"3.25","rev":"3.25","proto_major":3,"proto_minor":15}"#,
        #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","driver":"NMEA0183","activated":"2026-11-30T21:00:00.000Z"}]}"#,
        #"{"class":"WATCH","enable":true,"json":true}"#,
    ]

    static func tpv(_ second: Int) -> String {
        #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-30T21:03:"#
            + (second < 10 ? "0" : "") + "\(second)" + #".000Z","lat":48.1,"lon":11.5,"alt":520.0,"epx":3.1,"epy":3.2}"#
    }

    static func record(_ line: String, into recorder: CaptureRecorder) {
        var text = line
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { recorder.recordGPSDLine($0) }
        }
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "lodestar-rotation-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aCaptureRotatedBySizeGivesFilesThatEachReplayAlone() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = CaptureRecorder.Options(path: directory + "/run.capture")
        options.rotation = CaptureRecorder.Rotation(maxBytes: 1200, daily: true, keep: 3)
        let recorder = CaptureRecorder(options: options)
        for line in Self.setUp { Self.record(line, into: recorder) }
        for second in 0..<40 {
            Self.record(Self.tpv(second), into: recorder)
            if second == 5 { recorder.recordRegime(.continuous, reason: "updates started") }
        }
        #expect(recorder.finish() == nil)
        let summary = recorder.summary
        #expect(summary.rotations >= 4, "1200 bytes hold a few TPVs: \(summary)")
        let rotated = CaptureRecorder.rotatedFiles(of: options.path)
        #expect(rotated.count == 3, "keep 3: \(rotated)")
        var tpvs = 0
        for path in rotated + [options.path] {
            let contents = try CaptureReader.read(try readWholeFile(path))
            #expect(contents.warnings.isEmpty, "\(path)")
            #expect(contents.header.gpsd == "3.25" && contents.header.devicePath == "/dev/ttyACM0", "\(path)")
            let first = contents.lines.prefix(4).map(\.payload)
            // Each file opens with gpsd's set-up lines at t = 0 and the regime in force.
            let texts = first.compactMap { payload -> String? in
                if case .gpsd(let range) = payload { contents.text(range) } else { nil }
            }
            #expect(texts == Self.setUp, "\(path)")
            #expect(first.last == .regime("continuous", reason: "updates started"), "\(path)")
            #expect(contents.lines.first?.t == 0)
            #expect(zip(contents.lines, contents.lines.dropFirst()).allSatisfy { $0.t <= $1.t })
            #expect(try readWholeFile(path).count <= 1200 + 300, "\(path)")
            var fixes = 0
            CaptureReplayer(contents).run(onEvent: { _, event in if case .fix = event { fixes += 1 } })
            #expect(fixes >= 1, "\(path) replays alone")
            tpvs += fixes
        }
        #expect(tpvs < 40, "the oldest files were pruned")
    }

    @Test func aCaptureIsRotatedAtUTCMidnight() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = CaptureRecorder.Options(path: directory + "/run.capture")
        options.rotation = CaptureRecorder.Rotation(maxBytes: nil, daily: true, keep: nil)
        // 2026-11-30T23:59:58.000Z: two seconds before the day ends.
        let recorder = CaptureRecorder(options: options, startedWallClock: UTCTime(seconds: 1_796_083_198))
        let start = monotonicSeconds()
        for line in Self.setUp + [Self.tpv(1)] { Self.record(line, into: recorder) }
        recorder.recordRegime(.standby, reason: "before midnight", at: start + 1)
        recorder.recordRegime(.continuous, reason: "after midnight", at: start + 3)
        #expect(recorder.finish() == nil)
        let rotated = CaptureRecorder.rotatedFiles(of: options.path)
        #expect(rotated == [directory + "/run-20261130T235958.000Z.capture"])
        let before = try CaptureReader.read(try readWholeFile(rotated[0]))
        let after = try CaptureReader.read(try readWholeFile(options.path))
        #expect(before.lines.last?.payload == .regime("standby", reason: "before midnight"))
        #expect(after.header.started == UTCTime(seconds: 1_796_083_201))
        #expect(after.lines.map(\.payload).suffix(2) == [
            .regime("standby", reason: "before midnight"), .regime("continuous", reason: "after midnight"),
        ])
        #expect(after.lines.map(\.t) == [0, 0, 0, 0, 0])
    }

    @Test func aCaptureLeftByAnEarlierRunIsKeptAsARotatedFile() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/run.capture"
        let earlier = Array("left by an earlier run\n".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(earlier)))
        var options = CaptureRecorder.Options(path: path)
        options.rotation = CaptureRecorder.Rotation(maxBytes: nil, daily: true, keep: nil)
        let recorder = CaptureRecorder(options: options)
        for line in Self.setUp + [Self.tpv(1)] { Self.record(line, into: recorder) }
        #expect(recorder.finish() == nil)
        Self.record(Self.tpv(2), into: recorder)  // after finish: ignored, no failure
        #expect(recorder.failure == nil)
        let rotated = CaptureRecorder.rotatedFiles(of: path)
        #expect(rotated.count == 1)
        #expect(try rotated.map { try readWholeFile($0) } == [earlier])
        #expect(try CaptureReader.read(try readWholeFile(path)).lines.count == 4)
    }
}
