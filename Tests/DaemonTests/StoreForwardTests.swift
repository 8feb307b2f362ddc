import Foundation
import GPSModel
import LocationStore
import Policy
import SystemInterface
import TestSupport
import Testing

@testable import Daemon

/// `lodestar run` with its store and both uploaders, end to end: an emulated receiver plays a day of real
/// drives and parked stretches (`DayTimeline`) through a private gpsd at high speed; the daemon stores what
/// it delivers and sends it to a real mosquitto broker (read by an independent `mosquitto_sub`) and to the
/// Traccar stand-in. The network is cut in the middle of the day by stopping both servers.
///
/// `LODESTAR_DAY_HOURS` (default 1.5), `LODESTAR_DAY_SPEED` (default 180) and `LODESTAR_DAY_STORE_BYTES` set the
/// day's length, its pace and the store's bound: bench/store-forward-day.sh runs a full day with them and prints
/// the figures.
@Suite(.tags(.gpsd, .slow), .serialized) struct StoreForwardTests {
    static let hours = Double(ProcessInfo.processInfo.environment["LODESTAR_DAY_HOURS"] ?? "") ?? 1.5
    static let speed = Double(ProcessInfo.processInfo.environment["LODESTAR_DAY_SPEED"] ?? "") ?? 180
    /// `LODESTAR_DAY_STORE_BYTES` (default 2 MB): the store's bound, big enough for the cut's backlog.
    static let storeBound = Int(ProcessInfo.processInfo.environment["LODESTAR_DAY_STORE_BYTES"] ?? "") ?? 2_000_000

    /// What one run of the day gave.
    struct DayRun {
        var delivered: [[String: Any]]
        var owntracks: [OwnTracksRecord]
        var traccar: [OsmAndStandIn.Position]
        /// Connections the broker and the stand-in accepted.
        var mqttConnections: Int
        var httpConnections: Int
        /// Connections each uploader opened (or tried to), as `lodestar status` counts them.
        var uploaderConnections: [String: Int]
        var largestStore: Int
        var stderr: String
        /// The store's locations after the run, as `lodestar store export` reads them, and what SQLite's
        /// integrity check said of the file ("ok").
        var stored: [[String: Any]]
        var integrity: String
        /// The receiver's capture seconds when each stand-in position arrived.
        var traccarArrivalClock: [Double]
    }

    struct OwnTracksRecord {
        var id: Int
        var tst: Int
        var latitude: Double
        var longitude: Double
    }

    /// Runs the day; `cut` is the stretch of capture seconds with both servers down.
    static func runDay(
        hours: Double, speed: Double, maxBatchAge: Double, cut: ClosedRange<Double>?, kills: [Double] = [],
        slowServer: Double = 0, standInFaults: [(at: Double, fault: @Sendable (OsmAndStandIn) -> Void)] = []
    ) async throws -> DayRun {
        let epochs = try DayTimeline.epochs(hours: hours, parkedMinutes: 30)
        let daemon = try DaemonUnderTest(epochs: epochs, model: .ublox8, connection: .uart, speed: speed)
        let broker = try PrivateMosquitto()
        let subscriber = try MosquittoSubscriber(broker: broker)
        let standIn = try OsmAndStandIn()
        if slowServer > 0 { standIn.delayResponses(by: slowServer) }
        defer {
            subscriber.stop()
            broker.stop()
            standIn.stop()
        }
        var config = daemon.baseConfig(profile: "car")
        config["outputs"] = ["jsonl": ["path": "track/locations.jsonl", "fsyncInterval": 0]] as [String: Any]
        config["store"] = ["path": "store.sqlite", "maxBytes": storeBound]
        config["upload"] = [
            "maxBatchAge": maxBatchAge, "initialBackoff": 10, "maxBackoff": 300,
            "owntracks": [
                "host": "127.0.0.1", "port": Int(broker.port), "user": broker.options.owntracksUser, "device": "van",
                "username": broker.publisher.username, "password": broker.publisher.password, "timeout": 5,
            ] as [String: Any],
            "traccar": ["url": standIn.url, "deviceID": "van-7731", "timeout": 5] as [String: Any],
        ] as [String: Any]
        try daemon.writeConfig(config)
        try daemon.start()
        let startedWall = monotonicSeconds()
        let startedClock = daemon.receiver.clock
        let storePath = daemon.stateDirectory + "/store.sqlite"
        var largestStore = 0
        var cutDone = false
        var cutting = false
        let killed = !kills.isEmpty
        var kills = kills.sorted()
        var earlierLogs = ""
        var faults = standInFaults.sorted { $0.at < $1.at }
        while !daemon.receiver.isFinished {
            let now = daemon.receiver.clock
            largestStore = max(largestStore, fileSize(storePath) + fileSize(storePath + "-wal"))
            if let cut, !cutting, !cutDone, now >= cut.lowerBound {
                cutting = true
                broker.stop()
                standIn.refuseConnections()
            }
            if let cut, cutting, now >= cut.upperBound {
                cutting = false
                cutDone = true
                try broker.restart()
                try subscriber.waitUntilSubscribed(times: 2)
                try standIn.acceptConnections()
            }
            while let next = faults.first, now >= next.at {
                next.fault(standIn)
                faults.removeFirst()
            }
            // SIGKILL: the process gets no chance to commit, sync or close; the page cache keeps what it wrote.
            while let kill = kills.first, now >= kill {
                kills.removeFirst()
                daemon.signal(SIGKILL)
                _ = daemon.process?.waitForExit(timeout: 5)
                // The next start writes a new stderr file.
                earlierLogs += daemon.stderr + "--- SIGKILL; started again ---\n"
                try daemon.start(startReceiver: false)
                // Two kills due at once (the restart took receiver minutes under load) would kill the new process
                // before it started its uploaders: each kill is of a daemon that runs.
                try await daemon.waitUntil("the daemon to start again", timeout: 30) {
                    daemon.stderr.contains("lodestar run: upload traccar: to")
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        // The receiver's last fix is out: once both servers have what was delivered, stop. A kill loses what the
        // store held back (at most its commit interval), which the jsonl has: then what was stored is the count,
        // once the last held locations are committed (the service ticks every second).
        let delivered = { daemon.jsonlRecords().filter { $0["type"] as? String == "location" } }
        if killed { try await Task.sleep(for: .milliseconds(1500)) }
        try await daemon.waitUntil("both servers to catch up", timeout: 60) {
            let count = killed ? storedCount(storePath) ?? delivered().count : delivered().count
            let ids = Set(standIn.positions.compactMap { $0.attributes["lodestarId"].flatMap { Int($0) } })
            let mqttIDs = Set(ownTracks(subscriber.messages).map(\.id))
            return ids.count >= count && mqttIDs.count >= count
        }
        // The status is rewritten every second: one written after the catch-up has the final counts.
        try await Task.sleep(for: .milliseconds(1500))
        let status = try? JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: daemon.runtimeDirectory + "/status.json"))) as? [String: Any]
        var uploaderConnections: [String: Int] = [:]
        for upload in status?["uploads"] as? [[String: Any]] ?? [] {
            if let name = upload["name"] as? String { uploaderConnections[name] = upload["connections"] as? Int }
        }
        let (exitStatus, _) = try await daemon.terminate()
        #expect(exitStatus == 0, "lodestar run exited \(exitStatus)\n\(daemon.stderr.suffix(2000))")
        largestStore = max(largestStore, fileSize(storePath) + fileSize(storePath + "-wal"))
        let (stored, integrity) = try storeContents(daemon)
        return DayRun(
            delivered: delivered(), owntracks: ownTracks(subscriber.messages), traccar: standIn.positions,
            mqttConnections: broker.connectionCount(clientID: "lodestar-\(broker.options.owntracksUser)-van"),
            httpConnections: standIn.connectionsAccepted, uploaderConnections: uploaderConnections,
            largestStore: largestStore, stderr: earlierLogs + daemon.stderr, stored: stored, integrity: integrity,
            traccarArrivalClock: standIn.arrivals.map { startedClock + ($0 - startedWall) * speed })
    }

    /// The store's locations (`lodestar store export`) and `PRAGMA integrity_check` of the file (sqlite3).
    /// The locations in the store at `path`, read as the export reads it; nil when it cannot be read.
    static func storedCount(_ path: String) -> Int? {
        guard let store = try? LocationStore(readingOnly: path) else { return nil }
        defer { store.close() }
        var count = 0
        guard (try? store.forEachLocation(since: nil, { _ in count += 1 })) != nil else { return nil }
        return count
    }

    static func storeContents(_ daemon: DaemonUnderTest) throws -> (locations: [[String: Any]], integrity: String) {
        let binary = try #require(DaemonUnderTest.executable)
        let storePath = daemon.stateDirectory + "/store.sqlite"
        let exportPath = daemon.folder + "/export.jsonl"
        let export = try ChildProcess(
            executable: binary, arguments: ["store", "export", "--format", "jsonl", "--store", storePath],
            standardOutput: exportPath, standardError: daemon.folder + "/export.err")
        #expect(export.waitForExit(timeout: 30) == 0)
        let locations = ((try? String(contentsOfFile: exportPath, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "location" }
        let checkPath = daemon.folder + "/integrity"
        let check = try ChildProcess(
            executable: try #require(findExecutable("sqlite3"), "sqlite3 (scripts/setup installs it)"),
            arguments: [storePath, "PRAGMA integrity_check;"], standardOutput: checkPath,
            standardError: checkPath + ".err")
        #expect(check.waitForExit(timeout: 30) == 0)
        let integrity = ((try? String(contentsOfFile: checkPath, encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return (locations, integrity)
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    static func ownTracks(_ messages: [MosquittoSubscriber.Message]) -> [OwnTracksRecord] {
        messages.compactMap { message in
            guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any],
                object["_type"] as? String == "location", let idText = object["_id"] as? String,
                let id = Int(idText, radix: 16), let tst = object["tst"] as? Int,
                let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double
            else { return nil }
            return OwnTracksRecord(id: id, tst: tst, latitude: latitude, longitude: longitude)
        }
    }

    /// Each delivered location (the daemon's jsonl, in order) is the store's row id its position + 1: checks
    /// that every one reached the server, that first arrivals come in order, and that what arrived is that
    /// location. Returns the duplicates.
    static func check(
        _ delivered: [[String: Any]], arrivals: [(id: Int, time: Int?, latitude: Double?, longitude: Double?)],
        server: String
    ) -> Int {
        var seen = Set<Int>()
        var firstArrivals: [Int] = []
        for arrival in arrivals where seen.insert(arrival.id).inserted { firstArrivals.append(arrival.id) }
        let outOfOrder = zip(firstArrivals, 1...).first { $0.0 != $0.1 }.map { "position \($0.1): id \($0.0)" } ?? "none"
        let why = "\(server): \(firstArrivals.count) first arrivals for \(delivered.count) delivered; first out of order at \(outOfOrder)"
        #expect(firstArrivals == Array(0..<delivered.count).map { $0 + 1 }, "\(why)")
        for arrival in arrivals {
            guard arrival.id >= 1, arrival.id <= delivered.count else {
                Issue.record("\(server): id \(arrival.id) was never delivered (\(delivered.count) were)")
                continue
            }
            let location = delivered[arrival.id - 1]
            if let latitude = arrival.latitude, let expected = location["latitude"] as? Double {
                #expect(abs(latitude - expected) < 1e-6, "\(server): id \(arrival.id) latitude \(latitude) vs \(expected)")
            }
            if let longitude = arrival.longitude, let expected = location["longitude"] as? Double {
                #expect(abs(longitude - expected) < 1e-6, "\(server): id \(arrival.id) longitude \(longitude) vs \(expected)")
            }
            if let time = arrival.time, let text = location["timestamp"] as? String,
                let timestamp = UTCTime(iso8601: text.utf8)
            {
                #expect(Int64(time) == timestamp.seconds, "\(server): id \(arrival.id) time \(time) vs \(text)")
            }
        }
        return arrivals.count - seen.count
    }

    /// The acceptance day: both servers get every delivered location in order, the store stays within its
    /// bound, a location waits at most `maxBatchAge` while the network is up, and batching with the policy
    /// opens at least 5 times fewer connections than sending each location as it comes, on the same day.
    @Test func aDayWithTheNetworkCutReachesBothServersInOrderWithinTheStoreBound() async throws {
        let length = Self.hours * 3600
        let cut = (length / 4)...(length * 3 / 4)
        let maxBatchAge = 300.0
        let run = try await Self.runDay(hours: Self.hours, speed: Self.speed, maxBatchAge: maxBatchAge, cut: cut)
        #expect(run.delivered.count > 100, "only \(run.delivered.count) locations delivered\n\(run.stderr.suffix(2000))")
        let mqttDuplicates = Self.check(
            run.delivered, arrivals: run.owntracks.map { ($0.id, $0.tst, $0.latitude, $0.longitude) }, server: "owntracks")
        let httpDuplicates = Self.check(
            run.delivered,
            arrivals: run.traccar.map {
                (Int($0.attributes["lodestarId"] ?? "") ?? -1, $0.time.map { Int($0.seconds) }, $0.latitude, $0.longitude)
            }, server: "traccar")
        #expect(run.largestStore <= Self.storeBound, "the store grew to \(run.largestStore) bytes")
        #expect(run.stderr.contains("offline"), "no offline line in the log\n\(run.stderr.suffix(2000))")
        #expect(run.stderr.contains("caught up"), "no caught-up line in the log\n\(run.stderr.suffix(2000))")

        // Latency while the network is up: from the fix's time (capture seconds) to its first arrival at the
        // stand-in, for locations the cut and the retries after it did not touch. The fix's time is a little
        // before its delivery, so this errs long.
        var firstArrival: [Int: Double] = [:]
        for (position, clock) in zip(run.traccar, run.traccarArrivalClock) {
            if let id = Int(position.attributes["lodestarId"] ?? ""), firstArrival[id] == nil { firstArrival[id] = clock }
        }
        let start = UTCTime(seconds: 1_780_293_600)
        var latencies: [Double] = []
        for (index, location) in run.delivered.enumerated() {
            guard let text = location["timestamp"] as? String, let time = UTCTime(iso8601: text.utf8),
                let arrived = firstArrival[index + 1]
            else { continue }
            let t = time.interval(since: start)
            if t > cut.lowerBound - maxBatchAge, t < cut.upperBound + 600 { continue }
            latencies.append(arrived - t)
        }
        let worstLatency = latencies.max() ?? .infinity
        // One wall-clock second of slack, in capture seconds: the worker wakes at most every half second and
        // the stand-in's clock is read against the receiver's at the start.
        #expect(worstLatency <= maxBatchAge + Self.speed, "a location waited \(worstLatency) s with the network up")

        // The same day, sending each location as it is stored.
        let everyLocation = try await Self.runDay(hours: Self.hours, speed: Self.speed, maxBatchAge: 0, cut: cut)
        for name in ["owntracks", "traccar"] {
            let batched = run.uploaderConnections[name] ?? .max
            let each = everyLocation.uploaderConnections[name] ?? 0
            #expect(batched * 5 <= each, "\(name): \(batched) connections batched against \(each) sending every location")
        }
        print(
            "store and forward, \(Self.hours) h at \(Self.speed)x, servers down from \(Int(cut.lowerBound)) s to "
                + "\(Int(cut.upperBound)) s, maxBatchAge \(Int(maxBatchAge)) s: \(run.delivered.count) delivered; "
                + "owntracks \(run.owntracks.count) arrived, \(mqttDuplicates) duplicates; traccar \(run.traccar.count) "
                + "arrived, \(httpDuplicates) duplicates; largest store \(run.largestStore) bytes (bound "
                + "\(Self.storeBound)); worst latency with the network up \(Int(worstLatency)) s over "
                + "\(latencies.count) locations; connections opened (owntracks, traccar): batched "
                + "\(run.uploaderConnections["owntracks"] ?? -1), \(run.uploaderConnections["traccar"] ?? -1), accepted "
                + "by the servers \(run.mqttConnections), \(run.httpConnections); every location "
                + "\(everyLocation.uploaderConnections["owntracks"] ?? -1), \(everyLocation.uploaderConnections["traccar"] ?? -1), "
                + "accepted \(everyLocation.mqttConnections), \(everyLocation.httpConnections) "
                + "(\(everyLocation.delivered.count) delivered)")
    }

    /// SIGKILL at eight random points of the day, each followed by a restart, while a batch is on its way
    /// (the stand-in answers slowly, so one always is); the stand-in also answers HTTP 500 five times and lets
    /// requests time out for a while. After every kill the store opens without damage; at the end SQLite's
    /// integrity check passes, the store holds every location the jsonl has but those it held back in the
    /// commit interval before a kill (docs/store.md), neither holds a location twice, and every stored location
    /// reaches both servers: the uploads resume where the acknowledgements ended, with duplicates only.
    @Test func theDaemonKilledAtRandomPointsAndRestartedLosesAndRepeatsNothing() async throws {
        var random = SplitMix64(seed: 0x5EED_C0DE)
        // Anywhere but in the 100 s after a scripted fault: a kill there could take the failed answers with
        // it, and the log would not show the uploader meeting them.
        var kills: [Double] = []
        while kills.count < 8 {
            let at: Double = 300 + random.unit() * 2_200
            if !(600...700).contains(at) && !(1800...1900).contains(at) { kills.append(at) }
        }
        let run = try await Self.runDay(
            hours: 0.75, speed: 90, maxBatchAge: 60, cut: nil, kills: kills, slowServer: 0.05,
            standInFaults: [
                (600, { $0.failNext(5) }),
                // The uploader's timeout is 5 s: answers 6 s late time out, for about 8 s of wall clock.
                (1800, { $0.delayResponses(by: 6) }), (2520, { $0.delayResponses(by: 0.05) }),
            ])
        #expect(run.stderr.contains("HTTP 500"), "no HTTP 500 in the log\n\(run.stderr.suffix(2000))")
        #expect(run.stderr.contains("timed out"), "no timeout in the log\n\(run.stderr.suffix(2000))")
        let lives = run.stderr.components(separatedBy: "--- SIGKILL; started again ---\n")
        #expect(lives.count == kills.count + 1, "\(lives.count - 1) restarts for \(kills.count) kills")
        #expect(lives.dropFirst().allSatisfy { $0.contains("lodestar run: upload traccar: to") },
            "the daemon did not start again after each kill\n\(run.stderr.suffix(2000))")
        #expect(!run.stderr.contains("moved aside"), "a kill damaged the store\n\(run.stderr.suffix(2000))")
        #expect(run.integrity == "ok", "PRAGMA integrity_check: \(run.integrity)")

        let key = { (location: [String: Any]) in
            "\(location["timestamp"] as? String ?? "?") \(location["latitude"] as? Double ?? .nan)"
        }
        let delivered = run.delivered.map(key)
        let stored = run.stored.map(key)
        #expect(Set(delivered).count == delivered.count, "the jsonl holds a location twice")
        #expect(Set(stored).count == stored.count, "the store holds a location twice")
        // A location the jsonl has and the store lacks was held back for its commit when a kill came: delivered
        // within the commit interval before it (the kill comes up to 9 s of the capture's time after its point, on
        // the test's 100 ms turn, and a fix is delivered a little after its time).
        let storedKeys = Set(stored)
        let start = UTCTime(seconds: 1_780_293_600)
        let notStored = run.delivered.filter { !storedKeys.contains(key($0)) }
        let outsideKills = notStored.filter { location in
            guard let text = location["timestamp"] as? String, let time = UTCTime(iso8601: text.utf8) else { return true }
            let t = time.interval(since: start)
            return !kills.contains { t >= $0 - StoreForwarder.commitInterval - 5 && t <= $0 + 15 }
        }
        #expect(outsideKills.isEmpty, "\(outsideKills.count) delivered locations not in the store, not held at a kill: \(outsideKills.prefix(3).map(key))")
        // What ends a batch is committed before the outputs write: a kill between the two leaves it stored only.
        #expect(storedKeys.subtracting(delivered).count <= kills.count, "\(stored.count) stored, \(delivered.count) in the jsonl")
        #expect(delivered.count > 100, "only \(delivered.count) locations delivered")

        let owntracks = run.owntracks.map { (id: $0.id, time: $0.tst, latitude: $0.latitude) }
        let traccar = run.traccar.map {
            (id: Int($0.attributes["lodestarId"] ?? "") ?? -1, time: Int($0.time?.seconds ?? -1), latitude: $0.latitude ?? .nan)
        }
        for (server, arrivals) in [("owntracks", owntracks), ("traccar", traccar)] {
            var seen = Set<Int>()
            var firstIDs: [Int] = []
            for arrival in arrivals where seen.insert(arrival.id).inserted { firstIDs.append(arrival.id) }
            #expect(firstIDs == firstIDs.sorted(), "\(server): first arrivals out of order")
            var missing = 0
            for location in run.stored {
                guard let text = location["timestamp"] as? String, let time = UTCTime(iso8601: text.utf8),
                    let latitude = location["latitude"] as? Double
                else { continue }
                if !arrivals.contains(where: { Int64($0.time) == time.seconds && abs($0.latitude - latitude) < 1e-6 }) {
                    missing += 1
                }
            }
            #expect(missing == 0, "\(server): \(missing) of \(run.stored.count) stored locations never arrived")
            print("\(kills.count) kills: \(server) \(arrivals.count) arrivals for \(run.stored.count) stored "
                + "(\(run.delivered.count) in the jsonl), \(arrivals.count - seen.count) duplicates")
        }
    }
}

/// The store and the outputs on a short drive each, with their own gpsd, daemon and stand-in: they run in the
/// main phase of scripts/test, not after it with the day and the kills above (a kill's restart must catch up in
/// real time, and the day plays at 180x).
@Suite(.tags(.gpsd)) struct StoreRecoveryTests {
    /// A store that is not a database any more: the daemon says so, moves it aside, starts a new one and
    /// runs; SIGTERM still exits 0.
    @Test func aCorruptStoreIsMovedAsideAndTheDaemonRunsOn() async throws {
        let daemon = try DaemonUnderTest(model: .ublox8, speed: 30)
        let standIn = try OsmAndStandIn()
        defer { standIn.stop() }
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        let storePath = daemon.stateDirectory + "/store.sqlite"
        // A database's header, then garbage: what a card that lost its last writes can leave.
        var damaged = Array("SQLite format 3\u{0}".utf8)
        damaged += (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        try Data(damaged).write(to: URL(fileURLWithPath: storePath))
        var config = daemon.baseConfig(profile: "car")
        config["upload"] = ["maxBatchAge": 30, "traccar": ["url": standIn.url, "deviceID": "van"]] as [String: Any]
        try daemon.writeConfig(config)
        try daemon.start()
        try await daemon.waitUntil("the stand-in to get locations", timeout: 60) { standIn.positions.count >= 3 }
        let (status, _) = try await daemon.terminate()
        #expect(status == 0)
        let log = daemon.stderr
        #expect(log.contains("store: \(storePath)"), "\(log.suffix(2000))")
        #expect(log.contains("moved aside to \(storePath).corrupt-"), "\(log.suffix(2000))")
        let names = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory)
        #expect(names.contains { $0.hasPrefix("store.sqlite.corrupt-") }, "\(names)")
        let kept = try Data(contentsOf: URL(fileURLWithPath: storePath))
        #expect(kept.prefix(16) == Data("SQLite format 3\u{0}".utf8) && kept.count != damaged.count)
    }

    /// `coordinates: "gcj02"` on a drive moved to Shanghai: the jsonl output and the Traccar upload carry the
    /// GCJ-02 coordinates of what the store keeps in WGS-84 (read back with `lodestar store export`).
    @Test func gcj02ReachesTheOutputsAndTheUploadsWhileTheStoreKeepsWGS84() async throws {
        let epochs = try DayTimeline.epochs(hours: 0.25, parkedMinutes: 5, startingAt: (31.2304, 121.4737))
        let daemon = try DaemonUnderTest(epochs: epochs, model: .ublox8, connection: .uart, speed: 60)
        let standIn = try OsmAndStandIn()
        defer { standIn.stop() }
        var config = daemon.baseConfig(profile: "car")
        config["outputs"] = ["jsonl": ["path": "track/locations.jsonl", "fsyncInterval": 0]] as [String: Any]
        config["upload"] = ["maxBatchAge": 0, "traccar": ["url": standIn.url, "deviceID": "van"]] as [String: Any]
        config["coordinates"] = "gcj02"
        try daemon.writeConfig(config)
        try daemon.start()
        try await daemon.waitUntil("the drive to end", timeout: 60) { daemon.receiver.isFinished }
        let delivered = { daemon.jsonlRecords().filter { $0["type"] as? String == "location" } }
        try await daemon.waitUntil("the stand-in to have every location", timeout: 30) {
            Set(standIn.positions.compactMap { $0.attributes["lodestarId"] }).count >= delivered().count
        }
        let (status, _) = try await daemon.terminate()
        #expect(status == 0)
        let stored = try StoreForwardTests.storeContents(daemon).locations
        let outputs = delivered()
        #expect(outputs.count > 20 && stored.count == outputs.count, "\(outputs.count) in jsonl, \(stored.count) stored")
        var uploaded: [Int: OsmAndStandIn.Position] = [:]
        for position in standIn.positions {
            if let id = Int(position.attributes["lodestarId"] ?? "") { uploaded[id] = position }
        }
        for (row, output) in zip(stored, outputs) {
            guard let latitude = row["latitude"] as? Double, let longitude = row["longitude"] as? Double,
                let id = row["id"] as? Int
            else {
                Issue.record("a stored row without coordinates or id: \(row)")
                continue
            }
            #expect(GCJ02.isInMainlandChina(latitude: latitude, longitude: longitude))
            let expected = GCJ02.fromWGS84(latitude: latitude, longitude: longitude)
            #expect(abs((output["latitude"] as? Double ?? 0) - expected.latitude) < 1e-9, "jsonl row \(id)")
            #expect(abs((output["longitude"] as? Double ?? 0) - expected.longitude) < 1e-9, "jsonl row \(id)")
            // The stand-in gets 7 decimals.
            #expect(abs((uploaded[id]?.latitude ?? 0) - expected.latitude) < 1e-6, "uploaded row \(id)")
            #expect(abs((uploaded[id]?.longitude ?? 0) - expected.longitude) < 1e-6, "uploaded row \(id)")
            #expect(abs(expected.longitude - longitude) > 1e-3, "row \(id) was not moved")
        }
    }
}
