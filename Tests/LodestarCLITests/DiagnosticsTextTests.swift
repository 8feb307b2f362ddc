import Foundation
import LocationStore
@testable import Receivers
import SystemInterface
import Testing

@testable import LodestarCLI

/// What the commands and the docs say agrees with what the program does.
@Suite struct DiagnosticsTextTests {

    static func document(_ path: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func identifyNamesTheModelItUsesWhenNoneIsBuiltIn() {
        let unknown = ReceiverIdentification(ReceiverIdentity(path: "/dev/ttyUSB0", driver: "Garmin Serial"))
        let line = ReceiverCommand.modelLine(unknown, given: .genericNMEA)
        #expect(line.hasPrefix("model: generic-nmea, none built in for this receiver ("), "\(line)")
        let nmea = ReceiverIdentification(ReceiverIdentity(path: "/dev/ttyUSB0", driver: "NMEA0183"))
        #expect(ReceiverCommand.modelLine(nmea, given: .genericNMEA).hasPrefix("model: generic-nmea ("))
    }

    @Test func configDocsShowTheAllowedKeysValidateLists() throws {
        let folder = try #require(TemporaryDirectory(prefix: "lodestar-allowed"))
        defer { folder.remove() }
        let file = folder.path + "/lodestar.json"
        try #"{"profil": "car"}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let (code, _, error) = run(["config", "validate", file])
        #expect(code == 78)
        let said = try #require(error.split(separator: "\n").first { $0.contains("profil: unknown key") })
        let documented = try #require(
            try Self.document("docs/config.md").split(separator: "\n").first { $0.contains(": profil: unknown key") })
        #expect(
            said.replacingOccurrences(of: file, with: "/etc/lodestar/lodestar.json") == documented,
            "docs/config.md:\n\(documented)\nvalidate:\n\(said)")
    }

    @Test func storeExportReadsTheStoreAConfigNames() throws {
        let folder = try #require(TemporaryDirectory(prefix: "lodestar-export-config"))
        defer { folder.remove() }
        let rows = try StoreExportTests.makeStore(folder.path + "/state/kept.sqlite")
        let config = folder.path + "/lodestar.json"
        try #"{"profile": "car", "stateDirectory": "\#(folder.path)/state", "store": {"path": "kept.sqlite"}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let (code, output, error) = run(["store", "export", "--config", config])
        #expect(code == 0, "\(error)")
        #expect(output.split(separator: "\n").count { $0.contains(#""type":"location""#) } == rows.count)
        // --store wins; a config without a store, or one that does not exist, is said.
        #expect(run(["store", "export", "--config", config, "--store", folder.path + "/none.sqlite"]).0 == 66)
        try #"{"profile": "car", "store": null}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let (none, _, noneError) = run(["store", "export", "--config", config])
        #expect(none == 66 && noneError.contains("has no store"), "\(noneError)")
        #expect(run(["store", "export", "--config", folder.path + "/missing.json"]).0 == 66)
        let help = run(["store", "export", "--help"]).1
        #expect(help.contains("--config"))
    }

    @Test func theReadmesQuickTryLooksWhereItsServiceWrites() throws {
        let readme = try Self.document("README.md")
        let block = try #require(readme.components(separatedBy: "lodestar run --profile car --stdout text").dropFirst().first)
        let lines = block.split(separator: "\n").prefix(5)
        #expect(lines.contains { $0.hasPrefix("lodestar status --runtime-dir /tmp/lodestar/run") }, "\(lines)")
        #expect(lines.contains { $0.contains("store export --store /tmp/lodestar/store.sqlite") }, "\(lines)")
        #expect(lines.contains { $0.contains("UNIX-CONNECT:/tmp/lodestar/run/locations.sock") }, "\(lines)")
    }

    @Test func hardwareDocSaysWhenLodestarWritesTheTtyItself() throws {
        let hardware = try Self.document("hardware.md")
        #expect(!hardware.contains("never opens the serial port"))
        #expect(hardware.contains("writes that one wake command to the\ntty itself") || hardware.contains("tty itself"))
    }
}
