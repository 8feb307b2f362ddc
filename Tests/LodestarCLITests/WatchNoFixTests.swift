import Foundation
import GPSModel
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

@testable import LodestarCLI

/// `lodestar watch` against a receiver that sends no-fix epochs (RMC V, GGA quality 0): the no-fix line on
/// stderr every `--no-fix-interval`, and nothing on stdout.
@Suite(.tags(.gpsd)) struct WatchNoFixTests {
    @Test func watchSaysThereIsNoFixEveryInterval() throws {
        let start = UTCTime(seconds: 1_796_072_400)
        let epochs = (0..<600).map {
            EmulatedReceiver.Epoch(t: Double($0), fix: Fix(mode: .noFix, time: UTCTime(seconds: start.seconds + Int64($0))))
        }
        let (gpsd, receiver) = try PrivateGPSD.startReading(
            { try EmulatedReceiver(epochs: epochs, personality: .genericNMEA, model: .genericNMEA, speed: 4) },
            terminal: \.terminal, discard: { $0.stop() })
        defer {
            receiver.stop()
            gpsd.stop()
        }
        receiver.start()
        let watch = InProcessCommand([
            "watch", "--gpsd", "127.0.0.1:" + String(gpsd.port), "--no-fix-interval", "1", "--format", "jsonl",
        ])
        try waitUntil("two no-fix lines") {
            watch.standardError.text.components(separatedBy: "lodestar: no fix since start ").count >= 3
        }
        #expect(try watch.stop() == 0)
        #expect(watch.standardOutput.text.isEmpty)
        let lines = watch.standardError.lines.filter { $0.hasPrefix("lodestar: no fix") }
        #expect(lines.first?.hasPrefix("lodestar: no fix since start 1 s ago: ") == true, "\(lines)")
        // The receiver talks: its epochs arrive, only without a position.
        #expect(!lines.contains { $0.contains("no data from the receiver") }, "\(lines)")
    }
}

@Suite struct WatchNoFixOptionTests {
    @Test(arguments: ["-1", "soon", "inf"])
    func aNoFixIntervalThatIsNotSecondsIsAUsageError(value: String) {
        let (code, output, error) = run(["watch", "--no-fix-interval", value])
        #expect(code == 64)
        #expect(output.isEmpty)
        #expect(error.contains("--no-fix-interval"), "\(error)")
    }
}
