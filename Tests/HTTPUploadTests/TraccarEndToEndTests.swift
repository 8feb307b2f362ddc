@testable import Forwarding
import GPSModel
import JSON
import SystemInterface
import TestSupport
import Testing

@testable import HTTPUpload

#if canImport(Glibc)
import Glibc
#endif

/// A position as the server kept it, read back to compare with what was sent.
struct ReadBackPosition {
    var storeID: Int64
    var latitude: Double
    var longitude: Double
    var speedKnots: Double?
    var course: Double?
}

/// Where the end-to-end test sends: a real Traccar or the stand-in.
protocol TraccarTarget {
    var url: String { get }
    var deviceID: String { get }
    var description: String { get }
    /// The positions the server kept with store ids in `ids`, or nil when it cannot be asked (a real Traccar
    /// without API credentials: the test then relies on the 200s).
    func readBack(ids: Set<Int64>, from: UTCTime, to: UTCTime) throws -> [ReadBackPosition]?
}

struct StandInTarget: TraccarTarget {
    let standIn: OsmAndStandIn
    var url: String { standIn.url }
    var deviceID: String { "lodestar-test" }
    var description: String { "the Traccar stand-in at \(standIn.url)" }

    func readBack(ids: Set<Int64>, from: UTCTime, to: UTCTime) throws -> [ReadBackPosition]? {
        standIn.positions.compactMap { position in
            guard let id = position.attributes["lodestarId"].flatMap({ Int64($0) }), ids.contains(id),
                let latitude = position.latitude, let longitude = position.longitude
            else { return nil }
            return ReadBackPosition(
                storeID: id, latitude: latitude, longitude: longitude, speedKnots: position.speedKnots,
                course: position.course)
        }
    }
}

struct ReadBackFailure: Error, CustomStringConvertible {
    var description: String
}

/// A real Traccar: `LODESTAR_TRACCAR_URL` (its OsmAnd port, `http://host:5055`), `LODESTAR_TRACCAR_DEVICE` (a
/// device identifier Traccar knows; default `lodestar-test`), and to read positions back through its REST API
/// `LODESTAR_TRACCAR_API` (`http://host:8082`) with `LODESTAR_TRACCAR_USER` and `LODESTAR_TRACCAR_PASSWORD`.
struct RealTraccarTarget: TraccarTarget {
    var url: String
    var deviceID: String
    var api: String?
    var user: String?
    var password: String?
    var description: String { "Traccar at \(url)" }

    static func fromEnvironment() -> RealTraccarTarget? {
        func variable(_ name: String) -> String? {
            getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let url = variable("LODESTAR_TRACCAR_URL") else { return nil }
        return RealTraccarTarget(
            url: url, deviceID: variable("LODESTAR_TRACCAR_DEVICE") ?? "lodestar-test", api: variable("LODESTAR_TRACCAR_API"),
            user: variable("LODESTAR_TRACCAR_USER"), password: variable("LODESTAR_TRACCAR_PASSWORD"))
    }

    func readBack(ids: Set<Int64>, from: UTCTime, to: UTCTime) throws -> [ReadBackPosition]? {
        guard let api, let user else { return nil }
        let base = api.hasSuffix("/") ? String(api.dropLast()) : api
        let requester: HTTPRequester
        do throws(HTTPRequesterError) {
            requester = try HTTPRequester(
                options: .init(timeout: 10, caFile: nil, insecure: false, username: user, password: password ?? ""))
        } catch {
            throw ReadBackFailure(description: error.description)
        }
        func get(_ path: String) throws -> JSONValue {
            let result = requester.perform(url: base + path, method: .get, body: "", keepingBody: true, shouldStop: { false })
            guard result.status == 200 else {
                throw ReadBackFailure(description: "GET \(base + path): \(result.status.map { "HTTP \($0)" } ?? "\(String(describing: result.failure))")")
            }
            return try JSONParser.parse(result.body)
        }
        let devices = try get("/api/devices?uniqueId=\(OsmAndRequest.percentEncoded(deviceID))")
        guard case .array(let list) = devices, case .number(let deviceNumber)? = list.first?.value(at: "id") else {
            throw ReadBackFailure(description: "Traccar at \(base) has no device \(deviceID)")
        }
        let positions = try get(
            "/api/positions?deviceId=\(Int64(deviceNumber))&from=\(from.iso8601)&to=\(to.iso8601)")
        guard case .array(let items) = positions else { throw ReadBackFailure(description: "/api/positions is not a list") }
        return items.compactMap { item in
            guard case .number(let id)? = item.value(at: "attributes.lodestarId"), ids.contains(Int64(id)),
                case .number(let latitude)? = item.value(at: "latitude"),
                case .number(let longitude)? = item.value(at: "longitude")
            else { return nil }
            var speed: Double?
            if case .number(let value)? = item.value(at: "speed") { speed = value }
            var course: Double?
            if case .number(let value)? = item.value(at: "course") { course = value }
            return ReadBackPosition(storeID: Int64(id), latitude: latitude, longitude: longitude, speedKnots: speed, course: course)
        }
    }
}

/// The wall clock: a real Traccar files positions by their time, so a run's positions are recent ones.
func wallClockNow() -> UTCTime {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return UTCTime(seconds: Int64(now.tv_sec))
}

/// One test, two targets: a real Traccar when LODESTAR_TRACCAR_URL is set, else the stand-in.
@Suite(.tags(.http)) struct TraccarEndToEndTests {
    @Test func aBatchReachesTheServerAndReadsBackTheSame() throws {
        let standIn: OsmAndStandIn? = RealTraccarTarget.fromEnvironment() == nil ? try OsmAndStandIn() : nil
        let target: any TraccarTarget =
            if let standIn { StandInTarget(standIn: standIn) } else { try #require(RealTraccarTarget.fromEnvironment()) }
        try uploadAndReadBack(to: target)
    }

    func uploadAndReadBack(to target: any TraccarTarget) throws {
        let now = wallClockNow()
        let start = now.adding(seconds: -120)
        // Ids of this run only (a real server keeps earlier runs' positions).
        let firstID = now.seconds * 10
        let batch = storedBatch(4, firstID: firstID, start: start)
        let transport = TraccarHTTPTransport(settings: TraccarHTTPSettings(url: target.url, deviceID: target.deviceID, timeout: 10), log: { _ in })
        let outcome = transport.send(batch, shouldStop: { false })
        #expect(outcome.failure == nil, "\(target.description)")
        #expect(outcome.acknowledged == batch.count, "\(target.description)")

        let ids = Set(batch.map(\.id))
        var kept: [ReadBackPosition]? = []
        let deadline = monotonicSeconds() + 10
        repeat {
            kept = try target.readBack(ids: ids, from: start.adding(seconds: -1), to: now.adding(seconds: 1))
            if kept == nil || kept?.count == batch.count { break }
            sleepSeconds(0.5)
        } while monotonicSeconds() < deadline
        guard let kept else { return }
        #expect(kept.map(\.storeID).sorted() == batch.map(\.id), "\(target.description)")
        for position in kept {
            guard let stored = batch.first(where: { $0.id == position.storeID }) else { continue }
            #expect(abs(position.latitude - stored.location.latitude) < 1e-6)
            #expect(abs(position.longitude - stored.location.longitude) < 1e-6)
            #expect(abs((position.speedKnots ?? -1) - (stored.location.speed ?? 0) * 3600 / 1852) < 0.001)
            #expect(abs((position.course ?? -1) - (stored.location.course ?? 0)) < 0.05)
        }
    }
}
