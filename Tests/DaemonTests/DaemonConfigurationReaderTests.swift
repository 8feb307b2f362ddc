@testable import Daemon
import Foundation
import GPSModel
import Lodestar
import Policy
import Testing

/// Reads `text` as a config named `test.json`.
private func read(
    _ text: String, overrides: [DaemonConfigurationOverride] = []
) throws(DaemonConfigurationError) -> DaemonConfiguration {
    try DaemonConfigurationReader.parse(Array(text.utf8), file: "test.json", overrides: overrides).configuration
}

/// The problems of `text` as `key.path: message` lines with their source.
private func problems(_ text: String, overrides: [DaemonConfigurationOverride] = []) -> [DaemonConfigurationProblem] {
    do throws(DaemonConfigurationError) {
        _ = try read(text, overrides: overrides)
        return []
    } catch {
        return error.problems
    }
}

private func set(_ assignment: String) throws -> DaemonConfigurationOverride {
    try #require(DaemonConfigurationOverride(assignment: assignment))
}

/// The repository's examples/ folder.
private let examplesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("examples").path

@Suite struct DaemonConfigurationReaderTests {
    @Test func anEmptyObjectGivesTheDefaults() throws {
        let loaded = try DaemonConfigurationReader.parse(Array("{}".utf8), file: "test.json")
        #expect(loaded.configuration == DaemonConfiguration())
        #expect(loaded.profile.name == "car")
        #expect(loaded.file == "test.json")
        #expect(try DaemonConfigurationReader.defaults().configuration == DaemonConfiguration())
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try read(
            """
            {"profile": "bike", "profileDirectory": "/srv/profiles",
             "gpsd": {"host": "10.0.0.2", "port": "2948", "device": "/dev/ttyAMA0"},
             "receiver": {"powerControl": false, "connection": "uart",
                          "powerSwitch": {"type": "gpio", "chip": "gpiochip1", "line": 17, "activeLow": true}},
             "outputs": {"jsonl": {"path": "/data/t.jsonl", "rotation": {"maxBytes": null, "daily": false, "keep": 3},
                                   "fsyncInterval": 0},
                         "gpx": false, "stdout": {"format": "jsonl"},
                         "socket": {"path": "s.sock", "group": null, "mode": "600"},
                         "capture": {"path": "c.capture", "rotation": {"maxBytes": 4096, "daily": true, "keep": null},
                                     "raw": true}},
             "stateDirectory": "/data", "runtimeDirectory": "/tmp/run",
             "status": {"noFixInterval": 60, "updateInterval": 1.5}}
            """)
        var expected = DaemonConfiguration()
        expected.profile = "bike"
        expected.profileDirectory = "/srv/profiles"
        expected.gpsd.host = "10.0.0.2"
        expected.gpsd.port = "2948"
        expected.gpsd.device = "/dev/ttyAMA0"
        expected.receiver.powerControl = false
        expected.receiver.connection = .uart
        expected.receiver.powerSwitch = .gpio(chip: "gpiochip1", line: 17, activeLow: true)
        var jsonl = DaemonConfiguration.JSONLOutput()
        jsonl.path = "/data/t.jsonl"
        jsonl.rotation.maxBytes = nil
        jsonl.rotation.daily = false
        jsonl.rotation.keep = 3
        jsonl.fsyncInterval = 0
        expected.outputs.jsonl = jsonl
        expected.outputs.gpx = nil
        var stdout = DaemonConfiguration.StdoutOutput()
        stdout.format = .jsonl
        expected.outputs.stdout = stdout
        var socket = DaemonConfiguration.SocketOutput()
        socket.path = "s.sock"
        socket.group = nil
        socket.mode = 0o600
        expected.outputs.socket = socket
        var capture = DaemonConfiguration.CaptureOutput()
        capture.path = "c.capture"
        capture.rotation.maxBytes = 4096
        capture.rotation.keep = nil
        capture.raw = true
        expected.outputs.capture = capture
        expected.stateDirectory = "/data"
        expected.runtimeDirectory = "/tmp/run"
        expected.status.noFixInterval = 60
        expected.status.updateInterval = 1.5
        #expect(configuration == expected)
    }

    @Test func smallerForms() throws {
        let configuration = try read(
            """
            {"gpsd": {"port": 2948, "device": null}, "receiver": {"connection": "auto", "powerSwitch": {"type": "usbPort"}},
             "outputs": {"jsonl": null, "stdout": true, "socket": {"mode": "0640"}}}
            """)
        #expect(configuration.gpsd.port == "2948")
        #expect(configuration.gpsd.device == nil)
        #expect(configuration.receiver.connection == nil)
        #expect(configuration.receiver.powerSwitch == .usbPort)
        #expect(configuration.outputs.jsonl == nil)
        #expect(configuration.outputs.stdout == DaemonConfiguration.StdoutOutput())
        #expect(configuration.outputs.socket?.mode == 0o640)
        #expect(try read(#"{"gpsd": {"port": "gpsd"}}"#).gpsd.port == "gpsd")
    }

    @Test func theWrittenConfigReadsBackEqual() throws {
        let example = try DaemonConfigurationReader.read(file: examplesFolder + "/lodestar.json").configuration
        for configuration in [DaemonConfiguration(), example, try read(#"{"outputs": {"stdout": true, "gpx": null}}"#)] {
            #expect(try read(configuration.jsonText) == configuration)
        }
        // Every key is written, so the document lists the whole schema.
        let text = example.jsonText
        for key in ["profileDirectory", "device", "powerSwitch", "fsyncInterval", "keepDays", "mode", "raw", "noFixInterval"] {
            #expect(text.contains("\"\(key)\""), "\(key)")
        }
    }

    @Test func theExampleIsValidAndSetsEverySection() throws {
        let loaded = try DaemonConfigurationReader.read(file: examplesFolder + "/lodestar.json")
        let outputs = loaded.configuration.outputs
        #expect(outputs.jsonl != nil && outputs.gpx != nil && outputs.socket != nil && outputs.capture != nil)
        #expect(loaded.configuration.receiver.connection == .usb)
        let text = try String(contentsOfFile: examplesFolder + "/lodestar.json", encoding: .utf8)
        for key in ["profile", "gpsd", "receiver", "outputs", "stdout", "stateDirectory", "runtimeDirectory", "status"] {
            #expect(text.contains("\"\(key)\""), "\(key)")
        }
    }

    @Test func unknownKeysAreNamedWithTheClosestKnownOne() {
        let found = problems(#"{"gpsd": {"hots": "x"}, "outputs": {"jsonl": {"rotaton": {}}}, "zzzzzz": 1}"#)
        // An object's unknown keys come before the problems inside its known ones.
        #expect(found.map(\.keyPath) == ["zzzzzz", "gpsd.hots", "outputs.jsonl.rotaton"])
        #expect(found[0].message.hasPrefix("unknown key (allowed: profile, "))
        #expect(found[1].message == "unknown key (did you mean 'host'?) (allowed: host, port, device)")
        #expect(found[2].message.hasPrefix("unknown key (did you mean 'rotation'?)"))
    }

    @Test func wrongTypesAreNamed() {
        let found = problems(
            """
            {"profile": 3, "gpsd": [], "receiver": {"powerControl": "yes"}, "outputs": {"gpx": "on", "socket": {"mode": 660}}}
            """)
        #expect(found.map(\.keyPath) == ["profile", "gpsd", "receiver.powerControl", "outputs.gpx", "outputs.socket.mode"])
        #expect(found[0].message.hasPrefix("is a number, not a string"))
        #expect(found[1].message.hasPrefix("is a list, not an object"))
        #expect(found[2].message == "is a string, not true or false")
        #expect(found[4].message.contains("\"0660\""))
        #expect(problems("[1]").map(\.message) == [
            "the document is a list, not an object (allowed: an object with keys: profile, profileDirectory, gpsd, "
                + "receiver, motion, outputs, stateDirectory, runtimeDirectory, status, store, upload, coordinates, logLevel)"
        ])
    }

    @Test func rangesAreSaidInTheMessage() {
        let found = problems(
            """
            {"gpsd": {"port": 0}, "receiver": {"powerSwitch": {"type": "gpio", "line": 2.5}},
             "outputs": {"jsonl": {"rotation": {"maxBytes": 10}, "fsyncInterval": -1}, "gpx": {"keepDays": 0},
                         "socket": {"mode": "0999"}},
             "status": {"noFixInterval": 0}}
            """)
        #expect(
            found.map(\.description) == [
                "gpsd.port: is 0, out of range (allowed: a whole number from 1 to 65535, or a service name such as \"gpsd\")",
                "receiver.powerSwitch.line: is 2.5, not a whole number (allowed: a whole number from 0 to 4095)",
                "outputs.jsonl.rotation.maxBytes: is 10, out of range (allowed: a whole number of bytes from 4096 to 1099511627776)",
                "outputs.jsonl.fsyncInterval: is -1, out of range (allowed: 0 to 3600 seconds)",
                "outputs.gpx.keepDays: is 0, out of range (allowed: a whole number of days from 1 to 36500)",
                "outputs.socket.mode: '0999' is not a file mode (allowed: three or four octal digits in a string, such as \"0660\", at most \"0777\")",
                "status.noFixInterval: is 0, out of range (allowed: 1 to 86400 seconds)",
            ])
    }

    @Test func choicesPathsAndSwitches() {
        let found = problems(
            """
            {"stateDirectory": "var/lib", "gpsd": {"device": "ttyACM0", "host": ""},
             "receiver": {"connection": "USB", "powerSwitch": {"type": "relay"}},
             "outputs": {"stdout": {"format": "csv"}, "socket": {"group": "a b"}}}
            """)
        #expect(
            found.map(\.keyPath) == [
                "gpsd.host", "gpsd.device", "receiver.connection", "receiver.powerSwitch.type", "outputs.stdout.format",
                "outputs.socket.group", "stateDirectory",
            ])
        #expect(found[2].message == "'USB' is not a known value (did you mean 'usb'?) (allowed: auto, usb, uart)")
        #expect(problems(#"{"receiver": {"powerSwitch": {"type": "gpio"}}}"#).map(\.keyPath) == ["receiver.powerSwitch.line"])
        #expect(
            problems(#"{"receiver": {"powerSwitch": {"type": "usbPort", "line": 3}}}"#).map(\.keyPath) == [
                "receiver.powerSwitch.line"
            ])
    }

    @Test func valuesThatCannotWorkTogether() {
        let long = "/" + String(repeating: "d", count: 100)
        #expect(problems(#"{"runtimeDirectory": "\#(long)"}"#).map(\.keyPath) == ["outputs.socket.path"])
        #expect(
            problems(#"{"outputs": {"capture": {"path": "track/locations.jsonl"}}}"#).map(\.keyPath) == [
                "outputs.capture.path"
            ])
    }

    @Test func everyProblemIsListedAtOnce() {
        let found = problems(
            #"{"profil": "car", "gpsd": {"port": "x y"}, "outputs": {"jsonl": {"fsyncInterval": "often"}}, "status": []}"#)
        #expect(found.map(\.keyPath) == ["profil", "gpsd.port", "outputs.jsonl.fsyncInterval", "status"])
        #expect(found.allSatisfy { $0.source == nil })
    }

    @Test func notJSONSaysWhere() {
        #expect(throws: DaemonConfigurationError.notJSON(
            file: "test.json", line: 2, column: 1,
            message: "expected a key in double quotes, found '}' (JSON allows no trailing comma)")
        ) {
            _ = try read("{\"profile\": \"car\",\n}")
        }
    }

    @Test func missingAndUnreadableFiles() throws {
        let folder = NSTemporaryDirectory() + "lodestar-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(throws: DaemonConfigurationError.notFound(file: folder + "/missing.json")) {
            _ = try DaemonConfigurationReader.read(file: folder + "/missing.json")
        }
        #expect(throws: DaemonConfigurationError.unreadable(file: folder, reason: "Is a directory")) {
            _ = try DaemonConfigurationReader.read(file: folder)
        }
    }

    @Test func theProfileMustLoad() throws {
        let folder = NSTemporaryDirectory() + "lodestar-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(#"{"policy": {"nonsense": 1}, "updates": {"distanceFiltr": 5}}"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/broken.json"))
        try Data(#"{"description": "mine"}"#.utf8).write(to: URL(fileURLWithPath: folder + "/mine.json"))

        let broken = problems(#"{"profile": "broken", "profileDirectory": "\#(folder)"}"#)
        #expect(broken.map(\.keyPath) == ["profile"])
        #expect(broken.first?.message == "'broken' is not a valid profile (2 problems):")
        #expect(broken.first?.details.count == 2)
        #expect(broken.first?.details.allSatisfy { $0.hasPrefix(folder + "/broken.json: ") } == true)
        #expect(broken.first?.details.contains { $0.contains("policy.nonsense: unknown key") } == true)

        let missing = problems(#"{"profile": "nowhere", "profileDirectory": "\#(folder)"}"#)
        #expect(missing.map(\.keyPath) == ["profile"])
        #expect(missing.first?.message.contains("no profile named 'nowhere'") == true)

        let loaded = try DaemonConfigurationReader.parse(
            Array(#"{"profile": "mine", "profileDirectory": "\#(folder)"}"#.utf8), file: "test.json")
        #expect(loaded.profile.name == "mine")
        #expect(loaded.profile.description == "mine")
        // A profile given by path, and one that cannot even be looked up because its key is wrong.
        #expect(try read(#"{"profile": "\#(folder)/mine.json"}"#).profile == "\(folder)/mine.json")
        #expect(problems(#"{"profile": ""}"#).map(\.description) == ["profile: is empty (allowed: a profile's name or file)"])
    }

    @Test func setParsesJSONOrTakesTheText() throws {
        let overrides = [
            try set("gpsd.port=2950"), try set("outputs.socket.mode=0600"), try set("outputs.jsonl=null"),
            try set("gpsd.host=pi.local"), try set("receiver.powerSwitch={\"type\":\"usbPort\"}"),
            try set("outputs.stdout.format=jsonl"), try set("outputs.gpx.directory=/srv/gpx"),
        ]
        let configuration = try read(#"{"outputs": {"gpx": false}}"#, overrides: overrides)
        #expect(configuration.gpsd.port == "2950")
        #expect(configuration.gpsd.host == "pi.local")
        #expect(configuration.outputs.socket?.mode == 0o600)
        #expect(configuration.outputs.jsonl == nil)
        #expect(configuration.receiver.powerSwitch == .usbPort)
        // Setting a key inside a disabled output turns it on, with the defaults for the rest.
        #expect(configuration.outputs.stdout?.format == .jsonl)
        #expect(configuration.outputs.gpx?.directory == "/srv/gpx")
        #expect(configuration.outputs.gpx?.keepDays == nil)
        #expect(DaemonConfigurationOverride(assignment: "no-equals") == nil)
        #expect(DaemonConfigurationOverride(assignment: "=1") == nil)
        #expect(try set("a=b=c").keyPath == "a")
    }

    @Test func setProblemsHaveTheSameKeyPathsAndNameTheFlag() throws {
        let found = problems(
            #"{"gpsd": {"port": 0}, "status": 5}"#,
            overrides: [
                try set("outputs.jsonl.rotaton.keep=3"), try set("status.noFixInterval=0"), try set("gpsd.host=a b"),
                try set("outputs..path=x"), try set("receiver.powerControl=1"),
            ])
        #expect(
            found.map { "\($0.source ?? "file"): \($0)" } == [
                "--set: status: is a number, not an object, so noFixInterval cannot be set in it",
                "--set: outputs..path: is not a key path (allowed: keys joined by '.', as in outputs.jsonl.path)",
                "--set: gpsd.host: 'a b' is not a host name (allowed: a host name or address, at most 253 characters; an IPv6 address without brackets)",
                "file: gpsd.port: is 0, out of range (allowed: a whole number from 1 to 65535, or a service name such as \"gpsd\")",
                "--set: receiver.powerControl: is a number, not true or false",
                "--set: outputs.jsonl.rotaton: unknown key (did you mean 'rotation'?) (allowed: path, rotation, fsyncInterval)",
                "file: status: is a number, not an object (allowed: an object with keys: noFixInterval, updateInterval)",
            ])
        // A flag that fixes the file's problem leaves none.
        let override = try set("gpsd.port=2947")
        #expect(problems(#"{"gpsd": {"port": 0}}"#, overrides: [override]).isEmpty)
    }

    @Test func errorLinesNameTheFileOrTheFlag() {
        let error = DaemonConfigurationError.invalid(
            file: "/etc/lodestar/lodestar.json",
            problems: [
                DaemonConfigurationProblem(keyPath: "gpsd.port", message: "is 0, out of range"),
                DaemonConfigurationProblem(keyPath: "profile", message: "'x' is not valid:", source: "--profile", details: ["x.json: a: b"]),
            ])
        #expect(
            error.lines == [
                "/etc/lodestar/lodestar.json: gpsd.port: is 0, out of range", "--profile: profile: 'x' is not valid:",
                "  x.json: a: b",
            ])
    }
}

/// Input-derived values that used to validate and then trap, or be carried everywhere: every string has a
/// length limit, a host is a name or an address, and the text formatting of a number beyond Int64 prints it.
@Suite struct InputLimitTests {
    @Test func aHostIsANameOrAnAddressOfAtMost253Bytes() {
        let tenMegabytes = String(repeating: "a", count: 10_000_000)
        let found = problems(#"{"gpsd": {"host": "\#(tenMegabytes)"}}"#)
        #expect(found.map(\.keyPath) == ["gpsd.host"])
        #expect(found.first?.message.hasPrefix("is 10000000 bytes long, more than 253") == true)
        for good in ["localhost", "pi.local", "192.168.1.20", "::1", "fe80::1%eth0", "2001:db8::2947", "gps_1"] {
            #expect(problems(#"{"gpsd": {"host": "\#(good)"}}"#).isEmpty, "\(good)")
        }
        for bad in ["[::1", "[::1]", "::1]", "a b", "-x", "host/path", "1:2", "fe80::1%", "a\\u0000b"] {
            #expect(problems(#"{"gpsd": {"host": "\#(bad)"}}"#).map(\.keyPath) == ["gpsd.host"], "\(bad)")
        }
    }

    @Test func everyStringHasALimit() {
        let long = String(repeating: "x", count: 5_000)
        #expect(problems(#"{"outputs": {"jsonl": {"path": "/\#(long)"}}}"#).map(\.keyPath) == ["outputs.jsonl.path"])
        #expect(problems(#"{"profile": "\#(long)"}"#).map(\.keyPath) == ["profile"])
    }

    @Test func numbersBeyondInt64AreWrittenNotTrapped() {
        for value in [1e300, -1e300, 9.3e18, .infinity, .nan, 1e-300] {
            #expect(!StatusText.fixed(value, decimals: 1).isEmpty)
        }
        #expect(StatusText.fixed(12.345, decimals: 1) == "12.3")
        for seconds in [1e300, .infinity, .nan, -1e300] { #expect(!StatusText.duration(seconds).isEmpty) }
        // A charge against a tiny always-on figure, and a receiver time moved by an absurd offset.
        #expect(EnergyLedger.summary(charge: 1, alwaysOn: 1e-300).hasSuffix("% more)"))
        #expect(!EnergyLedger.summary(charge: .nan, alwaysOn: 1).isEmpty)
        let now = UTCTime.now()
        for offset in [1e300, -1e300, .infinity, .nan] { _ = now.adding(seconds: offset) }
        #expect(now.adding(seconds: .nan) == now)
    }
}
