import TestSupport
import Foundation
import Testing

/// gpsd killed and restarted under a running `lodestar watch`: the command keeps going, says what happened,
/// and prints every fix the new gpsd reports.
@Suite(.tags(.gpsd)) struct ReconnectTests {
    @Test func watchSurvivesGpsdRestart() throws {
        let first = try GPSDTestBed.readOnly()
        let port = first.gpsd.port
        let watch = InProcessCommand(["watch", "--gpsd", "127.0.0.1:" + String(port), "--format", "jsonl"])
        try waitUntil("lodestar watch to watch") { watch.standardError.text.contains("watching gpsd") }
        _ = first.feed(try Fixtures.bytes("gpsd-sirf4-bu353s4.nmea"))
        try waitUntil("fixes before the restart") { watch.standardOutput.lines.count >= 20 }
        first.gpsd.kill()
        // Told as gpsd going away, not as the receiver's loss.
        try waitUntil("the loss to be reported") {
            watch.standardError.text.contains("gpsd at 127.0.0.1:\(port) went away (it closed the connection)")
        }
        #expect(!watch.standardError.text.contains("receiver lost"), "\(watch.standardError.text)")
        // The epoch pending at the loss is printed with it; everything after comes from the new gpsd.
        let before = watch.standardOutput.lines.count
        #expect(watch.status == nil, "watch ended when gpsd died")

        let second = try GPSDTestBed.readOnly(port: port)
        try waitUntil("the reconnection") { watch.standardError.text.contains("gpsd at 127.0.0.1:\(port) back") }
        let (gpspipe, gpspipeOutput) = try second.startGpspipe()
        defer {
            gpspipe.terminate()
            unlink(gpspipeOutput)
        }
        _ = second.feed(try Fixtures.bytes("gpsd-quectel-eg25g-moving.nmea"))
        try second.gpsd.removeDevice(second.terminal.devicePath)
        try waitUntil("gpspipe to see the device close") { second.text(gpspipeOutput).contains("\"activated\":0") }
        try waitUntil("lodestar to see the device close") {
            watch.standardError.text.contains("\(second.terminal.devicePath) closed")
        }
        #expect(watch.status == nil)
        #expect(try watch.stop() == 0)

        let afterRestart = try EpochPosition.fromLodestar(Array(watch.standardOutput.lines.dropFirst(before)))
        let expected = EpochPosition.fromGpspipe(second.text(gpspipeOutput))
        #expect(!expected.isEmpty)
        #expect(afterRestart == expected)
    }
}
