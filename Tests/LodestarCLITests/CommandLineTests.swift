import SystemInterface
import ReceiverEmulation
import TestSupport
import Foundation
import GPSD
import GPSModel
import Lodestar
import Testing

@testable import LodestarCLI


@Suite struct UsageTests {
    @Test(arguments: [["--help"], ["help"], ["watch", "--help"], ["demo", "--help"], ["watch", "-h"]])
    func helpGoesToStandardOutputWithStatusZero(arguments: [String]) {
        let (code, output, error) = run(arguments)
        #expect(code == 0)
        #expect(output.contains("USAGE: lodestar"))
        #expect(error.isEmpty)
    }

    @Test(arguments: [
        [], ["frobnicate"], ["watch", "--bogus"], ["watch", "--count"], ["watch", "--count", "0"],
        ["watch", "--count", "many"], ["watch", "--format", "xml"], ["watch", "--port", "70000"], ["watch", "--gpsd", "localhost:70000"], ["watch", "--gpsd", "[::1"],
        ["watch", "--duration", "-1"], ["watch", "extra"], ["demo", "--speed", "0"], ["watch", "-x"],
    ])
    func usageErrorsExit64WithUsageOnStandardError(arguments: [String]) {
        let (code, output, error) = run(arguments)
        #expect(code == 64)
        #expect(output.isEmpty)
        #expect(error.contains("USAGE: lodestar"))
    }

    @Test func usageErrorSaysWhatWasWrong() {
        let (_, _, error) = run(["watch", "--format", "xml"])
        #expect(error.contains("'--format' takes jsonl|text|gpx|geojson, not 'xml'"))
    }

    /// Operand and subcommand errors are worded from the declarations, so they name what the help names.
    @Test(arguments: [
        (["import"], "lodestar: import needs <log>\n"),
        (["import", "a.nmea", "b.nmea", "-o", "c"], "lodestar: import takes one <log>\n"),
        (["import", "a.nmea"], "lodestar: import needs -o <file>\n"),
        (["replay"], "lodestar: replay needs <file>\n"),
        (["profiles", "show"], "lodestar: profiles show needs <name>\n"),
        (["watch", "extra"], "lodestar: watch takes no arguments, not 'extra'\n"),
        (["profiles"], "lodestar: profiles needs a subcommand: list, show, validate or schema\n"),
        (["profiles", "frob"], "lodestar: unknown profiles subcommand 'frob'\n"),
        (["frob"], "lodestar: unknown subcommand 'frob'\n"),
        ([], "lodestar: lodestar needs a subcommand: watch, demo, record, import, replay, profiles, receiver, run, status, config or store\n"),
    ])
    func usageErrorIsWordedFromTheDeclaration(arguments: [String], message: String) {
        let (code, _, error) = run(arguments)
        #expect(code == 64)
        #expect(error.hasPrefix(message + "\nUSAGE: lodestar"), "\(error)")
    }

    @Test func helpWordOfAGroupIsItsHelp() {
        #expect(run(["profiles", "help"]).1 == run(["profiles", "--help"]).1)
        #expect(run(["help"]).1 == run(["--help"]).1)
    }

    @Test func versionPrints() {
        let (code, output, _) = run(["--version"])
        #expect(code == 0)
        #expect(output == "lodestar \(LodestarCommand.version)\n")
    }
}

@Suite struct UnreachableGpsdTests {
    @Test func closedPortExits69QuicklyNamingThePort() throws {
        let port = try freeLoopbackPort()
        let started = monotonicSeconds()
        let (code, output, error) = run(["watch", "--gpsd", "127.0.0.1:" + String(port)])
        #expect(code == 69)
        #expect(monotonicSeconds() - started < 5)
        #expect(output.isEmpty)
        #expect(error.contains("127.0.0.1:\(port)"))
        #expect(error.contains("systemctl start gpsd"))
    }

    @Test func missingDemoCaptureExits66() {
        let (code, _, error) = run(["demo", "--capture", "/nonexistent/capture.nmea"])
        #expect(code == 66)
        #expect(error.contains("/nonexistent/capture.nmea"))
    }
}

/// One location printed alone by a fresh printer.
func printedLine(_ format: LocationFormat, _ location: Location) -> String {
    var printer = LocationPrinter(format: format)
    return printer.line(for: location)
}

@Suite struct OutputFormatTests {
    let full = Location(
        timestamp: UTCTime(seconds: 1_490_958_084), latitude: 55.088849833, longitude: 38.976455417,
        altitude: 2177, horizontalAccuracy: 2.466, horizontalAccuracySource: .gpsdEstimate, verticalAccuracy: 2.3,
        speed: 78.504, speedAccuracy: 0.5, course: 86.2, courseAccuracy: 1.5, fixMode: .threeD, satellitesUsed: 9,
        hdop: 0.9, device: "/dev/pts/1")

    @Test func jsonlHasExactlyTheSchemaInOrder() throws {
        let line = printedLine(.jsonl, full)
        #expect(line.hasSuffix("}\n"))
        #expect(
            line == #"{"type":"location","timestamp":"2017-03-31T11:01:24.000Z","latitude":55.088849833,"longitude":38.976455417,"altitude":2177.0,"horizontalAccuracy":2.47,"verticalAccuracy":2.3,"speed":78.504,"speedAccuracy":0.5,"course":86.2,"courseAccuracy":1.5,"fixMode":"3d","satellitesUsed":9,"hdop":0.9,"device":"/dev/pts/1"}"# + "\n")
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["latitude"] as? Double == 55.088849833)
    }

    /// Figures derived by scaling are written to a sensible precision in every format (no float noise);
    /// coordinates in full.
    @Test func figuresAreRoundedCoordinatesAreNot() throws {
        var noisy = full
        noisy.horizontalAccuracy = 262.08057142857143
        noisy.verticalAccuracy = 1.0 / 3.0
        noisy.altitude = 2177.123456789
        noisy.speed = 78.50412345
        noisy.hdop = 0.8999999999999999
        noisy.latitude = 55.08884983312345
        let jsonl = printedLine(.jsonl, noisy)
        #expect(jsonl.contains(#""horizontalAccuracy":262.08,"#), "\(jsonl)")
        #expect(jsonl.contains(#""verticalAccuracy":0.33,"#))
        #expect(jsonl.contains(#""altitude":2177.123,"#))
        #expect(jsonl.contains(#""speed":78.504,"#))
        #expect(jsonl.contains(#""hdop":0.9,"#))
        #expect(jsonl.contains(#""latitude":55.08884983312345,"#))
        var geojson = LocationPrinter(format: .geojson)
        let feature = geojson.line(for: noisy)
        #expect(feature.contains(#""horizontalAccuracy":262.08,"#), "\(feature)")
        #expect(feature.contains("2177.123]"))
        var gpx = LocationPrinter(format: .gpx)
        let point = gpx.line(for: noisy)
        #expect(point.contains("<ele>2177.123</ele>"), "\(point)")
        #expect(point.contains("<hdop>0.9</hdop>"))
        #expect(point.contains("<gpxtpx:speed>78.504</gpxtpx:speed>"))
    }

    @Test func unknownValuesAreAbsentKeys() throws {
        let minimal = Location(timestamp: UTCTime(seconds: 0), latitude: -1.5, longitude: 2.25, fixMode: .twoD)
        let line = printedLine(.jsonl, minimal)
        #expect(line == #"{"type":"location","timestamp":"1970-01-01T00:00:00.000Z","latitude":-1.5,"longitude":2.25,"fixMode":"2d"}"# + "\n")
    }

    @Test func devicePathsAreEscaped() {
        var odd = full
        odd.device = "/dev/odd\"name\\\n"
        #expect(printedLine(.jsonl, odd).contains(#""device":"/dev/odd\"name\\\n""#))
    }

    @Test func textIsOneAlignedLine() {
        let line = printedLine(.text, full)
        #expect(line == "2017-03-31T11:01:24.000Z  3D   55.0888498 N    38.9764554 E   2177.0 m  ±   2.5 m    78.5 m/s   86.2°   9 sats  hdop  0.9  /dev/pts/1\n")
        var south = full
        south.latitude = -37.5
        south.longitude = -122.25
        let other = printedLine(.text, south)
        #expect(other.contains("37.5000000 S"))
        #expect(other.contains("122.2500000 W"))
        #expect(other.count == line.count)
    }
}

/// The demo end to end, in-process: a private gpsd, the bundled capture, real fixes out.
@Suite(.tags(.gpsd)) struct DemoTests {
    @Test func demoPrintsFixesFromTheBundledCapture() throws {
        let (code, output, error) = run(["demo", "--capture", Fixtures.path("gpsd-quectel-eg25g-moving.nmea"),
                                         "--speed", "1000", "--format", "jsonl", "--count", "5"])
        #expect(code == 0, "\(error)")
        let lines = output.split(whereSeparator: \.isNewline)
        #expect(lines.count == 5)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["type"] as? String == "location")
        }
        #expect(error.contains("private gpsd"))
    }

    /// The bundled capture through an emulated u-blox that the car profile powers: locations on stdout, the
    /// receiver identified and put down by UBX commands, and the charge against always-on on stderr.
    @Test func demoWithAProfilePowersAnEmulatedReceiver() throws {
        let (code, output, error) = run(["demo", "--profile", "car", "--speed", "60", "--format", "jsonl", "--count", "8"])
        #expect(code == 0, "\(error)")
        let lines = output.split(whereSeparator: \.isNewline)
        #expect(lines.count == 8)
        #expect(error.contains("emulated ublox8 receiver"), "\(error)")
        #expect(error.contains("power: receiverIdentified: u-blox"), "\(error)")
        #expect(error.contains("power: regimeCommanded"), "\(error)")
        #expect(error.contains("always on it would have drawn"), "\(error)")
        // The receiver's saving is never left alone: the whole system's follows, on a Zero 2 W unless told.
        #expect(error.contains("lodestar demo: whole system on a Raspberry Pi Zero 2 W (120 mA at 5 V idle): "), "\(error)")
    }

    /// A capture (here an imported one) plays its rx bytes into gpsd: the fixes come out as from the raw log.
    @Test func demoPlaysTheReceiverBytesOfACapture() throws {
        let folder = try temporaryFolder("demo")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let capture = folder + "/moving.capture"
        #expect(run(["import", Fixtures.path("gpsd-quectel-eg25g-moving.nmea"), "-o", capture]).0 == 0)
        let (code, output, error) = run(["demo", "--capture", capture, "--speed", "1000", "--format", "jsonl",
                                         "--count", "5"])
        #expect(code == 0, "\(error)")
        let fromCapture = try EpochPosition.fromLodestar(output.split(whereSeparator: \.isNewline).map(String.init))
        #expect(fromCapture.count == 5)
        #expect(error.contains("receiver chunks"), "\(error)")
        let (_, rawOutput, _) = run(["demo", "--capture", Fixtures.path("gpsd-quectel-eg25g-moving.nmea"),
                                     "--speed", "1000", "--format", "jsonl", "--count", "5"])
        let fromRawBytes = try EpochPosition.fromLodestar(rawOutput.split(whereSeparator: \.isNewline).map(String.init))
        #expect(fromCapture == fromRawBytes)
    }

    /// A capture with only gpsd lines cannot be played into gpsd: 65, saying why and what would play.
    @Test func demoRefusesACaptureWithoutReceiverBytes() throws {
        let folder = try temporaryFolder("demo")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let capture = folder + "/moving.capture"
        #expect(run(["import", Fixtures.path("gpsd-quectel-eg25g-moving.nmea"), "-o", capture]).0 == 0)
        let text = try String(contentsOfFile: capture, encoding: .utf8)
        let withoutRx = text.split(separator: "\n").filter { !$0.contains(#""rx":"#) }.joined(separator: "\n") + "\n"
        #expect(withoutRx.count < text.count)
        let gpsdOnly = folder + "/gpsd-only.capture"
        try withoutRx.write(toFile: gpsdOnly, atomically: true, encoding: .utf8)
        let (code, output, error) = run(["demo", "--capture", gpsdOnly, "--speed", "1000"])
        #expect(code == 65)
        #expect(output.isEmpty)
        #expect(error.contains("\(gpsdOnly) has no receiver bytes (rx lines)"), "\(error)")
        #expect(error.contains("record --raw"))
    }

    @Test func embeddedCaptureIsByteIdenticalToTheFixture() throws {
        let embedded = try #require(EmbeddedCapture.bytes())
        let fixture = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(EmbeddedCapture.name)))
        #expect(embedded == [UInt8](fixture))
    }

}
