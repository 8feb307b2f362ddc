import Forwarding
import GPSModel
import SystemInterface
import Synchronization
import TestSupport
import Testing

@testable import HTTPUpload

#if canImport(Glibc)
import Glibc
#endif

/// `count` stored locations with ids from `firstID`, a second apart, each value different so a swap shows.
func storedBatch(_ count: Int, firstID: Int64 = 1, start: UTCTime = UTCTime(seconds: 1_700_000_000)) -> [StoredLocation] {
    (0..<count).map { index in
        let offset = Double(index)
        let location = Location(
            timestamp: start.adding(seconds: offset), latitude: -33.8688 + offset * 0.0001,
            longitude: 151.2093 - offset * 0.0001, altitude: 20 + offset, horizontalAccuracy: 3 + offset / 10,
            speed: 1.5 * offset + 0.25, course: 10 * offset + 5, fixMode: .threeD, hdop: 0.8 + offset / 100)
        return StoredLocation(id: firstID + Int64(index), location: location, reason: .update, stored: start)
    }
}

/// The store ids the stand-in recorded, from the `lodestarId` attribute.
func recordedIDs(_ standIn: OsmAndStandIn) -> [Int64] {
    standIn.positions.compactMap { $0.attributes["lodestarId"].flatMap { Int64($0) } }
}

/// Log lines, collected from the transport's callback.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

@Suite struct TraccarEndpointTests {
    @Test(arguments: [
        ("http://traccar.example:5055", "traccar.example:5055"),
        ("https://traccar.example/osmand?x=1", "traccar.example:443"),
        ("http://user:secret@traccar.example", "traccar.example:80"),
        ("http://[::1]:5055/", "[::1]:5055"),
        ("http://[::1]/", "[::1]:80"),
    ])
    func hostAndPortForFailures(url: String, endpoint: String) {
        #expect(TraccarHTTPTransport.endpoint(of: url) == endpoint)
    }

    @Test func emptyBatchOpensNothing() {
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: "http://127.0.0.1:1", deviceID: "d"), log: { _ in })
        #expect(transport.send([], shouldStop: { false }) == UploadOutcome(acknowledged: 0, connectionsOpened: 0))
    }
}

@Suite(.tags(.http)) struct TraccarHTTPTransportTests {
    @Test(arguments: [TraccarHTTPSettings.Method.post, .get])
    func batchArrivesInOrderOnOneConnectionInTraccarsUnits(method: TraccarHTTPSettings.Method) throws {
        let standIn = try OsmAndStandIn()
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: standIn.url, deviceID: "pi car", method: method), log: { _ in })
        let batch = storedBatch(5, firstID: 40)
        let outcome = transport.send(batch, shouldStop: { false })
        #expect(outcome == UploadOutcome(acknowledged: 5, connectionsOpened: 1))
        #expect(standIn.connectionsAccepted == 1)
        let positions = standIn.positions
        try #require(positions.count == 5)
        #expect(recordedIDs(standIn) == [40, 41, 42, 43, 44])
        for (position, stored) in zip(positions, batch) {
            let location = stored.location
            #expect(position.method == (method == .post ? "POST" : "GET"))
            #expect(position.connection == 1)
            #expect(position.deviceID == "pi car")
            #expect(position.time == UTCTime(seconds: location.timestamp.seconds))
            #expect(abs((position.latitude ?? 0) - location.latitude) < 1e-7)
            #expect(abs((position.longitude ?? 0) - location.longitude) < 1e-7)
            // Knots on the wire, three decimals: back in m/s within half a thousandth of a knot.
            #expect(abs((position.speedMetresPerSecond ?? -1) - (location.speed ?? 0)) < 0.0005 * 1852 / 3600 + 1e-9)
            #expect(abs((position.speedKnots ?? -1) - (location.speed ?? 0) * 3600 / 1852) < 0.0005 + 1e-9)
            #expect(position.course == location.course)
            #expect(abs((position.altitude ?? 0) - (location.altitude ?? 1)) < 0.005)
            #expect(abs((position.accuracy ?? 0) - (location.horizontalAccuracy ?? 1)) < 0.005)
            #expect(abs((position.hdop ?? 0) - (location.hdop ?? 1)) < 0.005)
            #expect(position.valid == true)
            #expect(position.battery == nil)
        }
    }

    @Test func batteryFromAFileReadAtSendTime() throws {
        let standIn = try OsmAndStandIn()
        let directory = try #require(TemporaryDirectory(prefix: "lodestar-battery"))
        defer { directory.remove() }
        let path = directory.path + "/capacity"
        let log = LogLines()
        let transport = TraccarHTTPTransport(
            settings: TraccarHTTPSettings(url: standIn.url, deviceID: "d", batterySource: path), log: log.add)

        // Missing: no batt, and one log line for two batches.
        #expect(transport.send(storedBatch(1, firstID: 1), shouldStop: { false }).acknowledged == 1)
        #expect(transport.send(storedBatch(1, firstID: 2), shouldStop: { false }).acknowledged == 1)
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains(path) == true)

        try writeText("87\n", to: path)
        #expect(transport.send(storedBatch(2, firstID: 3), shouldStop: { false }).acknowledged == 2)
        try writeText("86", to: path)
        #expect(transport.send(storedBatch(1, firstID: 5), shouldStop: { false }).acknowledged == 1)
        #expect(standIn.positions.map(\.battery) == [nil, nil, 87, 87, 86])
        #expect(log.all.count == 1)
    }

    @Test func http500sLeaveTheRestForLaterAndLoseNothing() throws {
        let standIn = try OsmAndStandIn()
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: standIn.url, deviceID: "d"), log: { _ in })
        let batch = storedBatch(6, firstID: 100)
        standIn.failNext(2, after: 2)

        let first = transport.send(batch, shouldStop: { false })
        #expect(
            first == UploadOutcome(
                acknowledged: 2, connectionsOpened: 1, failure: "HTTP 500 from 127.0.0.1:\(standIn.port)"))

        // As the uploader does: what was not acknowledged goes again, in order.
        var pending = Array(batch.dropFirst(first.acknowledged))
        var attempts = 1
        while !pending.isEmpty && attempts < 5 {
            let outcome = transport.send(pending, shouldStop: { false })
            pending.removeFirst(outcome.acknowledged)
            attempts += 1
        }
        #expect(pending.isEmpty)
        #expect(attempts == 3)
        #expect(recordedIDs(standIn) == Array(100...105))
        #expect(standIn.statuses == [200, 200, 500, 500, 200, 200, 200, 200])
        #expect(standIn.connectionsAccepted == 3)
    }

    @Test func aServerThatClosesEachConnectionIsCountedConnectionByConnection() throws {
        let standIn = try OsmAndStandIn()
        standIn.closeAfterEachAnswer(true)
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: standIn.url, deviceID: "d"), log: { _ in })
        let outcome = transport.send(storedBatch(3), shouldStop: { false })
        #expect(outcome == UploadOutcome(acknowledged: 3, connectionsOpened: 3))
        #expect(standIn.connectionsAccepted == 3)
        #expect(standIn.positions.map(\.connection) == [1, 2, 3])
    }

    @Test func aLateServerTimesOutWithinTheTimeout() throws {
        let standIn = try OsmAndStandIn()
        standIn.delayResponses(by: 5)
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: standIn.url, deviceID: "d", timeout: 1), log: { _ in })
        let (outcome, elapsed) = timed { transport.send(storedBatch(3), shouldStop: { false }) }
        #expect(elapsed < 2)
        #expect(elapsed >= 0.9)
        #expect(
            outcome == UploadOutcome(
                acknowledged: 0, connectionsOpened: 1, failure: "timed out after 1 s waiting for 127.0.0.1:\(standIn.port)"))
    }

    @Test func connectionRefusedThenAcceptedAgain() throws {
        let standIn = try OsmAndStandIn()
        standIn.refuseConnections()
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: standIn.url, deviceID: "d"), log: { _ in })
        let batch = storedBatch(2)
        let refused = transport.send(batch, shouldStop: { false })
        #expect(
            refused == UploadOutcome(
                acknowledged: 0, connectionsOpened: 1, failure: "connection refused by 127.0.0.1:\(standIn.port)"))

        try standIn.acceptConnections()
        #expect(transport.send(batch, shouldStop: { false }) == UploadOutcome(acknowledged: 2, connectionsOpened: 1))
        #expect(recordedIDs(standIn) == [1, 2])
    }

    @Test func shouldStopAbortsAWaitingRequestWithinASecond() throws {
        let standIn = try OsmAndStandIn()
        standIn.delayResponses(by: 30)
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: standIn.url, deviceID: "d"), log: { _ in })
        let stopAt = monotonicSeconds() + 0.5
        let outcome = transport.send(storedBatch(3), shouldStop: { monotonicSeconds() >= stopAt })
        let late = monotonicSeconds() - stopAt
        #expect(late < 1.2)
        #expect(outcome.acknowledged == 0)
        #expect(outcome.failure == "stopped while sending to 127.0.0.1:\(standIn.port)")
    }

    @Test func stoppingBeforeTheFirstRequestSendsNothing() throws {
        let standIn = try OsmAndStandIn()
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: standIn.url, deviceID: "d"), log: { _ in })
        let outcome = transport.send(storedBatch(4), shouldStop: { true })
        #expect(outcome == UploadOutcome(acknowledged: 0, connectionsOpened: 0, failure: "stopped while sending to 127.0.0.1:\(standIn.port)"))
        #expect(standIn.connectionsAccepted == 0)
    }

    @Test func tlsToAServerThatIsNotTLSFailsWithCurlsWords() throws {
        // An SSH banner where a TLS server hello belongs.
        let impostor = try ImpostorServer(.greets(ImpostorServer.sshBanner))
        defer { impostor.stop() }
        let transport = TraccarHTTPTransport(
            settings: TraccarHTTPSettings(url: "https://127.0.0.1:\(impostor.port)", deviceID: "d", timeout: 5),
            log: { _ in })
        let outcome = transport.send(storedBatch(1), shouldStop: { false })
        #expect(outcome.acknowledged == 0)
        let failure = try #require(outcome.failure)
        #expect(failure.hasPrefix("TLS error with 127.0.0.1:\(impostor.port): "))
        #expect(failure.count > "TLS error with 127.0.0.1:\(impostor.port): ".count)
    }
}

func writeText(_ text: String, to path: String) throws(SystemError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { throw SystemError("open", path) }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
        throw SystemError("write", path)
    }
}
