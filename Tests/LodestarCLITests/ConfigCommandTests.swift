import Daemon
import Foundation
import Testing

@testable import LodestarCLI

/// A folder of config files for one test, removed at the end.
private final class ConfigFolder {
    let path = NSTemporaryDirectory() + "lodestar-config-\(UUID().uuidString)"

    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `name` in the folder and returns its path.
    func file(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}

private let example = repositoryRoot.appendingPathComponent("examples/lodestar.json").path

/// A JSON object's values by dotted key path.
private struct Document {
    var object: [String: Any]
    func value(_ path: String) -> Any? {
        var current: Any? = object
        for key in path.split(separator: ".") { current = (current as? [String: Any])?[String(key)] }
        return current
    }
}

private func document(_ text: String) throws -> Document {
    Document(object: try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]))
}

@Suite struct ConfigCommandTests {
    @Test func validatePrintsValidAndASummary() {
        let (code, output, error) = run(["config", "validate", "--config", example])
        #expect(code == 0, "\(error)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(example): valid")
        #expect(lines.count == 2)
        #expect(lines.last?.hasPrefix("profile car; gpsd localhost:2947 /dev/ttyACM0; receiver usb, power control;") == true)
        #expect(error.isEmpty)
    }

    /// `config validate FILE` is `config validate --config FILE`; both at once is a usage error.
    @Test func validateTakesTheFileAsAnOperand() throws {
        let (code, output, error) = run(["config", "validate", example])
        #expect(code == 0, "\(error)")
        #expect(output.hasPrefix("\(example): valid\n"))
        let folder = try ConfigFolder()
        let file = try folder.file("bad.json", #"{"profile": 3}"#)
        let bad = run(["config", "validate", file])
        #expect(bad.0 == 78)
        #expect(bad.2.hasPrefix("\(file): profile: is a number"), "\(bad.2)")
        #expect(run(["config", "validate", file, "--config", example]).0 == 64)
        #expect(run(["config", "validate", folder.path + "/missing.json"]).0 == 66)
    }

    @Test func validateListsEveryProblemAndExits78() throws {
        let folder = try ConfigFolder()
        let file = try folder.file(
            "bad.json", #"{"gpsd": {"port": 70000}, "outputs": {"jsonl": {"rotaton": {}}}, "status": {"updateInterval": 0}}"#)
        let (code, output, error) = run(["config", "validate", "--config", file, "--set", "receiver.connection=usbb"])
        #expect(code == 78)
        #expect(output.isEmpty)
        let lines = error.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines[0].hasPrefix("\(file): gpsd.port: is 70000, out of range"))
        #expect(lines[1] == "--set: receiver.connection: 'usbb' is not a known value (did you mean 'usb'?) (allowed: auto, usb, uart)")
        #expect(lines[2].hasPrefix("\(file): outputs.jsonl.rotaton: unknown key (did you mean 'rotation'?)"))
        #expect(lines[3].hasPrefix("\(file): status.updateInterval: is 0, out of range"))
        #expect(lines[4] == "lodestar config validate: \(file) is not a valid config (4 problems)")
    }

    @Test func notJSONExits78WithLineAndColumn() throws {
        let folder = try ConfigFolder()
        let file = try folder.file("broken.json", "{\n  \"profile\": \"car\"\n  \"gpsd\": {}\n}\n")
        let (code, _, error) = run(["config", "validate", "--config", file])
        #expect(code == 78)
        #expect(error.hasPrefix("\(file): line 3, column 3: not valid JSON: expected ',' or '}'"))
    }

    @Test func anInvalidProfileIsAProblemUnderProfile() throws {
        let folder = try ConfigFolder()
        let profile = try folder.file("p.json", #"{"policy": {"nonsense": 1}}"#)
        let file = try folder.file("c.json", #"{"profile": "\#(profile)"}"#)
        let (code, _, error) = run(["config", "validate", "--config", file])
        #expect(code == 78)
        let lines = error.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(file): profile: '\(profile)' is not a valid profile (1 problem):")
        #expect(lines.dropFirst().first?.hasPrefix("  \(profile): policy.nonsense: unknown key") == true)
        // The flag replaces the file's profile, and a problem with it names the flag.
        #expect(run(["config", "validate", "--config", file, "--profile", "bike"]).0 == 0)
        let flagged = run(["config", "validate", "--config", example, "--profile", profile])
        #expect(flagged.0 == 78)
        #expect(flagged.2.hasPrefix("--profile: profile: '\(profile)' is not a valid profile"))
    }

    @Test func aMissingFileExits66() throws {
        let folder = try ConfigFolder()
        for command in ["validate", "show"] {
            let (code, output, error) = run(["config", command, "--config", folder.path + "/missing.json"])
            #expect(code == 66)
            #expect(output.isEmpty)
            #expect(error == "\(folder.path)/missing.json: no such file\n")
        }
        let (code, _, error) = run(["config", "validate", "--config", folder.path])
        #expect(code == 66)
        #expect(error.contains("cannot read \(folder.path)"))
    }

    @Test func showPrintsTheEffectiveConfigWithTheFlags() throws {
        let (code, output, error) = run([
            "config", "show", "--config", example, "--gpsd", "pi.local:2950", "--stdout", "jsonl", "--gpx", "none",
            "--power-switch", "gpio:gpiochip0:17:active-low", "--no-power-control", "--set", "status.noFixInterval=60",
            "--jsonl", "/tmp/t.jsonl", "--connection", "uart", "--state-dir", "/srv/lodestar",
        ])
        #expect(code == 0, "\(error)")
        let shown = try document(output)
        #expect(shown.value("gpsd.host") as? String == "pi.local")
        #expect(shown.value("gpsd.port") as? Int == 2950)
        #expect(shown.value("outputs.stdout.format") as? String == "jsonl")
        #expect(shown.value("outputs.gpx") is NSNull)
        #expect(shown.value("outputs.jsonl.path") as? String == "/tmp/t.jsonl")
        #expect(shown.value("outputs.jsonl.fsyncInterval") as? Int == 10)
        #expect(shown.value("receiver.powerSwitch.type") as? String == "gpio")
        #expect(shown.value("receiver.powerSwitch.line") as? Int == 17)
        #expect(shown.value("receiver.powerSwitch.activeLow") as? Bool == true)
        #expect(shown.value("receiver.powerControl") as? Bool == false)
        #expect(shown.value("receiver.connection") as? String == "uart")
        #expect(shown.value("status.noFixInterval") as? Int == 60)
        #expect(shown.value("stateDirectory") as? String == "/srv/lodestar")
        // What show prints is a config file that gives the same configuration.
        let folder = try ConfigFolder()
        let again = run(["config", "show", "--config", try folder.file("shown.json", output)])
        #expect(again.0 == 0)
        #expect(again.1 == output)
    }

    @Test func flagsOfTheWrongFormAreUsageErrors() {
        for (arguments, message) in [
            (["--power-switch", "gpio:chip"], "option '--power-switch' takes gpio:CHIP:LINE[:active-low]"),
            (["--stdout", "csv"], "option '--stdout' takes jsonl|text, not 'csv'"),
            (["--connection", "serial"], "option '--connection' takes auto|usb|uart"),
            (["--set", "novalue"], "option '--set' takes KEY=VALUE"),
            (["--gpsd", "host:"], "option '--gpsd' takes HOST[:PORT]"),
        ] {
            let (code, _, error) = run(["config", "show", "--config", example] + arguments)
            #expect(code == 64, "\(arguments)")
            #expect(error.contains(message), "\(error)")
        }
    }

    @Test func gpsdAndPowerSwitchForms() throws {
        #expect(try GPSDAddressOption.hostAndPort("pi") == ("pi", nil))
        #expect(try GPSDAddressOption.hostAndPort("pi:2948") == ("pi", "2948"))
        #expect(try GPSDAddressOption.hostAndPort("[::1]:2948") == ("::1", "2948"))
        #expect(try GPSDAddressOption.hostAndPort("[::1]") == ("::1", nil))
        #expect(try GPSDAddressOption.hostAndPort("fe80::1") == ("fe80::1", nil))
        let shown = try document(
            run(["config", "show", "--config", example, "--power-switch", "usb-port", "--socket", "none"]).1)
        #expect(shown.value("receiver.powerSwitch.type") as? String == "usbPort")
        #expect(shown.value("outputs.socket") is NSNull)
    }

    /// The entry point `lodestar run` uses, and its SIGHUP reload: the same file and flags read again, the
    /// failure returned rather than printed.
    @Test func configurationAndReload() throws {
        let folder = try ConfigFolder()
        let file = try folder.file("c.json", #"{"profile": "walk"}"#)
        let parsed = try ConfigCommand.showDeclaration.parse(["--config", file, "--gpsd", "pi:2950"])
        let output = MemorySink()
        let error = MemorySink()
        let context = CommandContext(standardOutput: output, standardError: error, shouldStop: { false })
        let loaded = try RunOptions.configuration(parsed, context: context).get()
        #expect(loaded.file == file)
        #expect(loaded.profile.name == "walk")
        #expect(loaded.configuration.gpsd.port == "2950")
        #expect(error.text.isEmpty)

        _ = try folder.file("c.json", #"{"profile": "boat"}"#)
        let reloaded = try loaded.reloaded().get()
        #expect(reloaded.profile.name == "boat")
        #expect(reloaded.configuration.gpsd.host == "pi")

        _ = try folder.file("c.json", #"{"profile": "boat", "status": {"noFixInterval": 0}}"#)
        guard case .failure(let failure) = reloaded.reloaded() else {
            Issue.record("a broken config reloaded")
            return
        }
        #expect(failure.problems.map(\.keyPath) == ["status.noFixInterval"])
        #expect(error.text.isEmpty && output.text.isEmpty)
    }

    @Test func aMissingDefaultFileMeansTheDefaults() throws {
        let source = RunConfigurationSource(
            file: "/nonexistent/lodestar.json", usesDefaultFile: true, overrides: [])
        let loaded = try source.load().get()
        #expect(loaded.file == nil)
        let folder = try ConfigFolder()
        let empty = try folder.file("e.json", "{}")
        #expect(loaded.configuration.jsonText == run(["config", "show", "--config", empty]).1)
        let named = RunConfigurationSource(file: "/nonexistent/lodestar.json", usesDefaultFile: false, overrides: [])
        guard case .failure(.notFound) = named.load() else {
            Issue.record("a named missing file loaded")
            return
        }
    }

    /// docs/config.md's tables of keys are what the schema generates: change a key, then run
    /// scripts/update-profiles-doc.
    @Test func theDocumentedTablesAreTheGeneratedOnes() throws {
        let documented = try generatedLines(
            of: "docs/config.md", DaemonConfigurationSchema.markdownBegin, DaemonConfigurationSchema.markdownEnd)
        #expect(documented == DaemonConfigurationSchema.markdown, "regenerate: scripts/update-profiles-doc")
        let (code, printed, _) = run(["config", "schema"])
        #expect(code == 0)
        #expect(printed == DaemonConfigurationSchema.markdown)
        // Every key `config show` writes (every section on) has its row.
        let folder = try ConfigFolder()
        let everySection = try folder.file(
            "all.json",
            """
            {"outputs": {"stdout": true, "capture": true},
             "upload": {"owntracks": {"user": "u", "device": "d"}, "traccar": {"url": "http://t:5055", "deviceID": "x"}}}
            """)
        let (shown, text, error) = run(["config", "show", "--config", everySection])
        try #require(shown == 0, "\(error)")
        var leaves: [String] = []
        func walk(_ value: Any, _ path: String) {
            guard let object = value as? [String: Any] else { return leaves.append(path) }
            for (key, member) in object { walk(member, path.isEmpty ? key : path + "." + key) }
        }
        walk(try JSONSerialization.jsonObject(with: Data(text.utf8)), "")
        #expect(leaves.count > 50)
        for leaf in leaves {
            #expect(DaemonConfigurationSchema.markdown.contains("| `\(leaf)` |"), "\(leaf) has no row in docs/config.md")
        }
    }
}
