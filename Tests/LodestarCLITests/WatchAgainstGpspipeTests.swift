import TestSupport
import Foundation
import GPSD
import Lodestar
import LodestarCLI
import Testing

/// For every capture in the repo: a real gpsd replays it through a pty, and `lodestar watch` must print the
/// same epochs and coordinates as `gpspipe -w` reading the same gpsd session.
@Suite(.serialized, .tags(.gpsd)) struct WatchAgainstGpspipeTests {
    @Test(arguments: Fixtures.captureNames)
    func watchPrintsWhatGpspipeSees(capture: String) throws {
        // Read-only (-b): gpsd skips its 2 s of probe writes when it opens the device; what it decodes is the same.
        let bed = try GPSDTestBed.readOnly()
        let (gpspipe, gpspipeOutput) = try bed.startGpspipe()
        defer {
            gpspipe.terminate()
            unlink(gpspipeOutput)
        }
        let watch = InProcessCommand(["watch", "--gpsd", "127.0.0.1:" + bed.port, "--format", "jsonl"])
        try waitUntil("lodestar watch to watch") { watch.standardError.text.contains("watching gpsd") }

        // Held back while either client lags (`feedWithoutDrops`): gpsd drops, without a word, the reports of a
        // client whose socket is full, and a watcher in a test process sharing two cores with the other suites
        // once fell 28 fixes behind on the Reno drive, gpspipe one epoch of the aircraft's. What is compared is
        // the decoding. At 1000 times the receiver's pace: the 2 h 43 min drive in 10 s.
        let outcome = bed.feedWithoutDrops(try Fixtures.bytes(capture), speed: 1000)
        #expect(outcome.completed)
        // Closing the device makes gpsd tell every watcher, after everything it read before.
        try bed.gpsd.removeDevice(bed.terminal.devicePath)
        try waitUntil("gpspipe to see the device close", timeout: 60) {
            bed.text(gpspipeOutput).contains("\"activated\":0")
        }
        try waitUntil("lodestar to see the device close", timeout: 60) {
            watch.standardError.text.contains("\(bed.terminal.devicePath) closed")
        }
        #expect(try watch.stop() == 0)

        let expected = EpochPosition.fromGpspipe(bed.text(gpspipeOutput))
        let printed = try EpochPosition.fromLodestar(watch.standardOutput.lines)
        // Every capture has fixes but the cold-boot one, whose single timed fix (under gpsfake) depends on how
        // gpsd's NMEA cycle detection starts; after the harness's primer sentence gpsd reports none.
        if capture != "gpsd-se4100l-coldboot-badclock.nmea" {
            #expect(!expected.isEmpty, "\(capture): gpspipe saw no fix at all; data fed before gpsd read it?")
        }
        samePositions(printed, expected, capture)
    }
}
