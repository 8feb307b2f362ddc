import Daemon
import GPSModel
import Policy
import Receivers
import SystemInterface
import Testing

@Suite struct TrackOutputTests {
    @Test func jsonlFileWritesLocationsAndRecordsWithTheirUTCTime() throws {
        try withScratchDirectory { directory in
            var settings = DaemonConfiguration.JSONLOutput()
            settings.fsyncInterval = 0
            let path = directory + "/track/locations.jsonl"
            let output = JSONLTrackOutput(path: path, settings: settings)
            #expect(output.name == "jsonl \(path)")
            let now = try utc("2026-11-30T03:22:05Z")
            let location = sampleLocation(at: try utc("2026-11-30T03:22:00Z"))
            try output.write(.location(location), now: now)
            try output.write(.regime(.off, reason: "stationary 108 s within 50 m", t: 12.3456, at: now), now: now)
            try output.write(.event(.paused(at: location), detail: "stationary", t: 12.5, at: now), now: now)
            try output.write(.event(.resumed, detail: "probe fix 755 m from anchor", t: 13, at: now), now: now)
            try output.write(
                .power(PowerEvent(.quiet, regime: .standby, seconds: 1.5, detail: "no output"), t: 14, at: now), now: now)
            output.close()
            let lines = fileText(path).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines == [
                #"{"type":"location","timestamp":"2026-11-30T03:22:00.000Z","latitude":52.370216,"longitude":4.895168,"altitude":3.2,"horizontalAccuracy":2.5,"speed":1.5,"course":90.0,"fixMode":"3d","satellitesUsed":11,"hdop":0.8,"device":"/dev/ttyACM0"}"#,
                #"{"type":"regime","t":12.346,"timestamp":"2026-11-30T03:22:05.000Z","regime":"off","reason":"stationary 108 s within 50 m"}"#,
                #"{"type":"event","t":12.5,"timestamp":"2026-11-30T03:22:05.000Z","kind":"paused","detail":"stationary","locationTimestamp":"2026-11-30T03:22:00.000Z","latitude":52.370216,"longitude":4.895168}"#,
                #"{"type":"event","t":13.0,"timestamp":"2026-11-30T03:22:05.000Z","kind":"resumed","detail":"probe fix 755 m from anchor"}"#,
                #"{"type":"power","t":14.0,"timestamp":"2026-11-30T03:22:05.000Z","kind":"quiet","regime":"standby","seconds":1.5,"detail":"no output"}"#,
                "",
            ])
        }
    }

    @Test func withoutAUTCTimeTheLinesAreReplaysAsBefore() throws {
        let location = sampleLocation(at: try utc("2025-05-12T00:29:02Z"), latitude: 39.27, longitude: -119.93)
        #expect(RecordLine.event(t: 2186.35, .paused(at: location), detail: "stationary 108 s within 50 m", style: .jsonl)
            == #"{"type":"event","t":2186.35,"kind":"paused","detail":"stationary 108 s within 50 m","timestamp":"2025-05-12T00:29:02.000Z","latitude":39.27,"longitude":-119.93}"# + "\n")
        #expect(RecordLine.regime(t: 2166.35, .off, reason: "stopped", style: .text) == "# +2166.4 s  regime off: stopped\n")
    }

    @Test func stdoutWritesTheWatchTextLineAndCommentLines() throws {
        var written: [String] = []
        var settings = DaemonConfiguration.StdoutOutput()
        settings.format = .text
        let output = StdoutTrackOutput(settings: settings) { written.append($0) }
        let now = try utc("2026-11-30T03:22:05Z")
        let location = sampleLocation(at: try utc("2026-11-30T03:22:00Z"))
        try output.write(.location(location), now: now)
        try output.write(.regime(.off, reason: "stationary", t: 12.34, at: now), now: now)
        try output.write(.event(.resumed, detail: "probe fix 755 m from anchor", t: 13, at: now), now: now)
        try output.write(.power(PowerEvent(.quiet, regime: .standby, detail: "no output"), t: 14, at: now), now: now)
        #expect(written == [
            TextLine.location(location),
            "# 2026-11-30T03:22:05.000Z  +12.3 s  regime off: stationary\n",
            "# 2026-11-30T03:22:05.000Z  +13.0 s  resumed: probe fix 755 m from anchor\n",
            "# 2026-11-30T03:22:05.000Z  +14.0 s  power quiet: no output\n",
        ])
        #expect(written.first?.hasPrefix("2026-11-30T03:22:00.000Z  3D") == true)

        written.removeAll()
        settings.format = .jsonl
        let jsonl = StdoutTrackOutput(settings: settings) { written.append($0) }
        try jsonl.write(.location(location), now: now)
        #expect(written == [JSONLine.location(location)])
    }

    @Test func stdoutFailureReachesTheCaller() throws {
        let output = StdoutTrackOutput(settings: DaemonConfiguration.StdoutOutput()) { _ throws(OutputFailure) in
            throw OutputFailure(path: "stdout", reason: "Broken pipe")
        }
        #expect(throws: OutputFailure(path: "stdout", reason: "Broken pipe")) {
            try output.write(.location(sampleLocation(at: utc("2026-11-30T03:22:00Z"))), now: utc("2026-11-30T03:22:00Z"))
        }
    }
}

// Shared by the output tests.

/// A fresh directory under /tmp for one test, removed when `body` returns.
func withScratchDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let directory = try #require(TemporaryDirectory(prefix: "lodestar-outputs"))
    defer { directory.remove() }
    return try body(directory.path)
}

/// `2026-11-30T23:59:58Z` as a UTCTime.
func utc(_ text: String) throws -> UTCTime {
    try #require(UTCTime(iso8601: Array(text.utf8)), "not a UTC time: \(text)")
}

func fileText(_ path: String) -> String {
    readFile(path).map { String(decoding: $0, as: UTF8.self) } ?? ""
}

func sampleLocation(at time: UTCTime, latitude: Double = 52.370216, longitude: Double = 4.895168) -> Location {
    Location(
        timestamp: time, latitude: latitude, longitude: longitude, altitude: 3.2, horizontalAccuracy: 2.5,
        speed: 1.5, course: 90, fixMode: .threeD, satellitesUsed: 11, hdop: 0.8, device: "/dev/ttyACM0")
}
