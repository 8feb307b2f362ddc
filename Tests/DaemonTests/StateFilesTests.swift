@testable import Daemon
import Foundation
import GPSModel
import Policy
import Testing

/// A fresh temporary directory, removed when the test ends.
private final class TemporaryFolder {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "lodestar-daemon-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name))
    }
    func read(_ name: String) -> String? {
        FileManager.default.contents(atPath: path + "/" + name).map { String(decoding: $0, as: UTF8.self) }
    }
    var entries: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
}

private let sampleLocation = Location(
    timestamp: UTCTime(seconds: 1_796_000_000, nanoseconds: 250_000_000), latitude: 48.8583701,
    longitude: -2.2944813, altitude: 35.5, horizontalAccuracy: 4.2, horizontalAccuracySource: .gst,
    verticalAccuracy: 6.1, speed: 12.25, speedAccuracy: 0.3, course: 271.5, courseAccuracy: 2, fixMode: .twoD,
    satellitesUsed: 9, hdop: 0.9, device: "/dev/ttyACM0", origin: .live)

private let sampleStatus: DaemonStatus = {
    var status = DaemonStatus(
        pid: 4242, started: UTCTime(seconds: 1_796_000_000), updated: UTCTime(seconds: 1_796_003_600, nanoseconds: 1_000_000),
        profile: "car", device: "/dev/ttyACM0", receiver: "u-blox 8 (UBX)", mechanism: "ubx", regime: .standby,
        regimeReason: "stopped for 5 min", lastFix: sampleLocation.timestamp, lastLocation: sampleLocation,
        fixesDelivered: 1234, chargeMilliampHours: 0.42, alwaysOnMilliampHours: 1.73,
        lastError: "jsonl /var/lib/lodestar/track/locations.jsonl: No space left on device",
        lastErrorAt: UTCTime(seconds: 1_796_003_000), updateInterval: 2.5)
    status.errors = [
        "reload refused: lodestar.json: gpsd.port: is a string",
        "jsonl /var/lib/lodestar/track/locations.jsonl: No space left on device",
    ]
    return status
}()

@Suite struct StatusFileTests {
    @Test func roundTripsEveryMember() throws {
        let folder = try TemporaryFolder()
        let file = StatusFile(runtimeDirectory: folder.path)
        #expect(file.path == folder.path + "/status.json")
        try file.write(sampleStatus)
        #expect(try file.read() == sampleStatus)
        // Written by rename: nothing else is left in the directory.
        #expect(folder.entries == ["status.json"])
        var bare = sampleStatus
        (bare.device, bare.receiver, bare.lastFix, bare.lastLocation, bare.lastError, bare.lastErrorAt) =
            (nil, nil, nil, nil, nil, nil)
        bare.errors = []
        try file.write(bare)
        #expect(try file.read() == bare)
    }

    @Test func theStoreAndTheUploadersRoundTrip() throws {
        let folder = try TemporaryFolder()
        let file = StatusFile(runtimeDirectory: folder.path)
        var status = sampleStatus
        status.store = "/var/lib/lodestar/store.sqlite"
        status.storeDropped = 3
        status.uploads = [
            UploadStatus(
                name: "owntracks", destination: "owntracks mqtt://broker:1883 owntracks/pi/van", state: "backing off",
                queueDepth: 812, lastSuccess: UTCTime(seconds: 1_796_003_500), lastError: "connection refused by broker:1883",
                sent: 5120, connections: 44, worstLatency: 901.5),
            UploadStatus(name: "traccar", destination: "traccar http://t:5055 van", state: "idle", queueDepth: 0),
        ]
        try file.write(status)
        #expect(try file.read() == status)
        let text = String(decoding: try #require(FileManager.default.contents(atPath: file.path)), as: UTF8.self)
        #expect(text.contains("\"queueDepth\":812") || text.contains("\"queueDepth\": 812"), "\(text)")
    }

    @Test func aMinimalFileReadsWithDefaults() throws {
        let text = """
            {"pid": 7, "started": "2026-11-30T03:22:00Z", "updated": "2026-11-30T03:22:05.5Z", "profile": "bike",
             "mechanism": "none", "regime": "continuous", "future": {"x": 1}, "device": null}
            """
        let status = try StatusFile.decode(Array(text.utf8), path: "s.json")
        #expect(status.pid == 7)
        #expect(status.regime == .continuous)
        #expect(status.regimeReason == "")
        #expect(status.fixesDelivered == 0)
        #expect(status.device == nil)
        #expect(status.updateInterval == 5)
        #expect(status.updated.interval(since: status.started) == 5.5)
    }

    @Test(arguments: [
        ("", "the file is empty"),
        ("{\"pid\": 7,", "line 1, column 11"),
        ("[1]", "a list, not a JSON object"),
        (#"{"started": "2026-11-30T03:22:00Z"}"#, "\"pid\" is missing"),
        (#"{"pid": -3}"#, "\"pid\" is -3, not a process id"),
        (#"{"pid": 7.5}"#, "\"pid\" is 7.5, not a whole number"),
        (
            #"{"pid": 7, "started": "yesterday", "updated": "2026-11-30T03:22:00Z"}"#,
            "\"started\" is \"yesterday\", not a UTC time"
        ),
        (
            #"{"pid": 7, "started": "2026-11-30T03:22:00Z", "updated": "2026-11-30T03:22:00Z", "profile": "car", "mechanism": "ubx", "regime": "asleep"}"#,
            "\"regime\" is \"asleep\", not one of off, standby, powerSave, continuous"
        ),
        (
            #"{"pid": 7, "started": "2026-11-30T03:22:00Z", "updated": "2026-11-30T03:22:00Z", "profile": "car", "mechanism": "ubx", "regime": "off", "fixesDelivered": "many"}"#,
            "\"fixesDelivered\" is a string, not a number"
        ),
        (
            #"{"pid": 7, "started": "2026-11-30T03:22:00Z", "updated": "2026-11-30T03:22:00Z", "profile": "car", "mechanism": "ubx", "regime": "off", "lastLocation": {"timestamp": "2026-11-30T03:22:00Z", "latitude": 91, "longitude": 0}}"#,
            "\"lastLocation.latitude\" is 91.0, not a latitude"
        ),
        (
            #"{"pid": 7, "started": "2026-11-30T03:22:00Z", "updated": "2026-11-30T03:22:00Z", "profile": "car", "mechanism": "ubx", "regime": "off", "lastLocation": {"timestamp": "2026-11-30T03:22:00Z", "latitude": 1, "longitude": 0, "horizontalAccuracySource": "guess"}}"#,
            "\"lastLocation.horizontalAccuracySource\" is \"guess\", not one of gst, receiver, gpsdEstimate"
        ),
    ])
    func aDamagedFileSaysWhatAndWhere(text: String, message: String) {
        #expect(throws: DaemonFileError.self) { try StatusFile.decode(Array(text.utf8), path: "/run/x/status.json") }
        do throws(DaemonFileError) {
            _ = try StatusFile.decode(Array(text.utf8), path: "/run/x/status.json")
        } catch {
            guard case .damaged(let path, let reason) = error else {
                Issue.record("not damaged: \(error)")
                return
            }
            #expect(path == "/run/x/status.json")
            #expect(reason.contains(message), "\(reason)")
            #expect(error.description.hasPrefix("/run/x/status.json is damaged: "))
        }
    }

    @Test func missingAndUnreadableAreTold() throws {
        let folder = try TemporaryFolder()
        let file = StatusFile(runtimeDirectory: folder.path)
        #expect(throws: DaemonFileError.missing(path: file.path)) { try file.read() }
        try FileManager.default.createDirectory(atPath: file.path, withIntermediateDirectories: false)
        do throws(DaemonFileError) {
            _ = try file.read()
            Issue.record("a directory was read as a status")
        } catch {
            guard case .unreadable(_, let reason) = error else {
                Issue.record("not unreadable: \(error)")
                return
            }
            #expect(reason.contains("Is a directory"), "\(reason)")
        }
    }

    @Test func writingWhereThereIsNoDirectoryFails() throws {
        let folder = try TemporaryFolder()
        let file = StatusFile(runtimeDirectory: folder.path + "/missing")
        #expect(throws: DaemonFileError.self) { try file.write(sampleStatus) }
    }
}

@Suite struct PersistedStateFileTests {
    let saved = PersistedState(
        lastLocation: sampleLocation, regime: .off, lastNavigating: UTCTime(seconds: 1_796_000_100),
        fixesDelivered: 99_999, chargeMilliampHours: 12.5, alwaysOnMilliampHours: 400.25, runs: 3)

    @Test func roundTripsAndLeavesNoTemporaryFile() throws {
        let folder = try TemporaryFolder()
        let file = PersistedStateFile(stateDirectory: folder.path)
        try file.save(saved)
        let loaded = file.load()
        #expect(loaded.state == saved)
        #expect(loaded.message == nil)
        #expect(folder.entries == ["state.json"])
        try file.save(PersistedState())
        #expect(file.load().state == PersistedState())
    }

    @Test func aSaveCutShortLeavesTheOldStateAndLoadRemovesItsTemporaryFile() throws {
        let folder = try TemporaryFolder()
        let file = PersistedStateFile(stateDirectory: folder.path)
        try file.save(saved)
        try folder.write("state.json.tmp-31337", "{\"runs\": ")
        try folder.write("state.json.tmp-notes", "kept: not one of ours")
        #expect(file.load().state == saved)
        #expect(folder.entries == ["state.json", "state.json.tmp-notes"])
    }

    @Test func aMissingFileIsAFreshStart() throws {
        let folder = try TemporaryFolder()
        let loaded = PersistedStateFile(stateDirectory: folder.path).load()
        #expect(loaded.state == PersistedState())
        #expect(loaded.message == nil)
    }

    @Test(arguments: ["{\"runs\": 3", "{\"runs\": \"three\"}", "{\"runs\": -1}", "\u{0}\u{0}\u{0}"])
    func aDamagedFileIsMovedAside(text: String) throws {
        let folder = try TemporaryFolder()
        try folder.write("state.json", text)
        let file = PersistedStateFile(stateDirectory: folder.path)
        let now = UTCTime(iso8601: "2026-11-30T22:37:05.123Z".utf8) ?? UTCTime(seconds: 0)
        let loaded = file.load(now: now)
        #expect(loaded.state == PersistedState())
        let aside = "state.json.damaged-20261130T223705Z"
        #expect(folder.entries == [aside])
        #expect(folder.read(aside) == text)
        let message = try #require(loaded.message)
        #expect(message.contains("\(file.path) is damaged"), "\(message)")
        #expect(message.contains("moved to \(folder.path)/\(aside)"), "\(message)")
        // The next save starts a good file again.
        try file.save(saved)
        #expect(file.load().state == saved)
    }

    @Test func anUnreadableFileIsAFreshStartWithAMessage() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path + "/state.json", withIntermediateDirectories: false)
        let loaded = PersistedStateFile(stateDirectory: folder.path).load()
        #expect(loaded.state == PersistedState())
        #expect(loaded.message?.contains("cannot be read") == true, "\(loaded.message ?? "")")
    }

    @Test func savingWhereThereIsNoDirectoryFails() throws {
        let folder = try TemporaryFolder()
        let file = PersistedStateFile(stateDirectory: folder.path + "/missing")
        do throws(DaemonFileError) {
            try file.save(saved)
            Issue.record("saved into a missing directory")
        } catch {
            guard case .unwritable(let path, let reason) = error else {
                Issue.record("not unwritable: \(error)")
                return
            }
            #expect(path == file.path)
            #expect(reason.contains("No such file or directory"), "\(reason)")
        }
    }
}
