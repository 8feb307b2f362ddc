import GPSModel
import SystemInterface
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The stand-in's decoder against queries written by hand, as Traccar's OsmAndProtocolDecoder reads them.
@Suite struct OsmAndStandInDecodingTests {
    @Test func queryStringWithEveryKey() throws {
        let position = try OsmAndStandIn.decode(
            target: "/?id=pi%20car&timestamp=1700000000&lat=-33.8688&lon=151.2093&speed=19.438&bearing=90.5"
                + "&altitude=-12.5&accuracy=4.5&hdop=0.9&batt=87&valid=true&lodestarId=12&charge=false",
            body: [])
        #expect(position.deviceID == "pi car")
        #expect(position.time == UTCTime(seconds: 1_700_000_000))
        #expect(position.latitude == -33.8688)
        #expect(position.longitude == 151.2093)
        #expect(position.speedKnots == 19.438)
        #expect(abs((position.speedMetresPerSecond ?? 0) - 10) < 0.001)
        #expect(position.course == 90.5)
        #expect(position.altitude == -12.5)
        #expect(position.accuracy == 4.5)
        #expect(position.hdop == 0.9)
        #expect(position.battery == 87)
        #expect(position.valid == true)
        #expect(position.attributes == ["lodestarId": "12", "charge": "false"])
    }

    @Test func formBodyWhenTheQueryIsEmpty() throws {
        let position = try OsmAndStandIn.decode(
            target: "/", body: Array("deviceid=abc&location=48.5%2C11.25&heading=10&valid=1".utf8))
        #expect(position.deviceID == "abc")
        #expect(position.latitude == 48.5)
        #expect(position.longitude == 11.25)
        #expect(position.course == 10)
        #expect(position.valid == true)
        #expect(position.time == nil)
        #expect(position.speedKnots == nil)
    }

    @Test func theQueryWinsOverTheBody() throws {
        let position = try OsmAndStandIn.decode(target: "/?id=from-query&lat=1&lon=2", body: Array("id=from-body".utf8))
        #expect(position.deviceID == "from-query")
    }

    @Test(arguments: [
        ("1700000000", UTCTime(seconds: 1_700_000_000)),
        // From 2^31 - 1 on, Traccar reads milliseconds.
        ("1700000000250", UTCTime(seconds: 1_700_000_000, nanoseconds: 250_000_000)),
        ("2023-11-14T22:13:20Z", UTCTime(seconds: 1_700_000_000)),
        ("2023-11-14 22:13:20", UTCTime(seconds: 1_700_000_000)),
    ])
    func timestampForms(text: String, time: UTCTime) throws {
        let position = try OsmAndStandIn.decode(target: "/?id=a&timestamp=\(text.split(separator: " ").joined(separator: "%20"))", body: [])
        #expect(position.time == time)
    }

    @Test func noDeviceIsRejected() {
        #expect(throws: OsmAndStandIn.DecodeError.self) {
            try OsmAndStandIn.decode(target: "/?lat=1&lon=2", body: [])
        }
        #expect(throws: OsmAndStandIn.DecodeError.self) {
            try OsmAndStandIn.decode(target: "/?id=a&lat=north", body: [])
        }
    }
}

/// A bare HTTP client on a POSIX socket: the stand-in's own tests send hand-written requests through it.
final class RawHTTPConnection {
    let descriptor: Int32

    init(port: UInt16) throws(SystemError) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw SystemError("socket", "AF_INET") }
        let connected = withLoopbackAddress(port: port) { connect(descriptor, $0, $1) }
        guard connected == 0 else {
            let failure = SystemError("connect", "127.0.0.1:\(port)")
            close(descriptor)
            throw failure
        }
    }

    deinit { close(descriptor) }

    /// Sends `request` and reads until `answers` complete answers (head and no body) came, or 5 s pass.
    func exchange(_ request: String, answers: Int = 1) -> String {
        _ = Array(request.utf8).withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        let deadline = monotonicSeconds() + 5
        while monotonicSeconds() < deadline {
            let text = String(decoding: received, as: UTF8.self)
            if text.split(separator: "\r\n\r\n", omittingEmptySubsequences: true).count >= answers, text.hasSuffix("\r\n\r\n") {
                return text
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += chunk[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}

@Suite(.tags(.http)) struct OsmAndStandInTests {
    @Test func decodesHandWrittenRequestsOnOneKeptAliveConnection() throws {
        let standIn = try OsmAndStandIn()
        let connection = try RawHTTPConnection(port: standIn.port)
        let body = "id=car&timestamp=1700000001&lat=1.5&lon=-2.25&speed=1&lodestarId=2"
        let answers = connection.exchange(
            "GET /?id=car&timestamp=1700000000&lat=48.1&lon=11.5&speed=10 HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)",
            answers: 2)
        #expect(answers.components("HTTP/1.1 200 OK") == 2)
        let positions = standIn.positions
        try #require(positions.count == 2)
        #expect(positions[0].method == "GET")
        #expect(positions[0].time == UTCTime(seconds: 1_700_000_000))
        #expect(positions[0].latitude == 48.1)
        #expect(positions[0].speedKnots == 10)
        #expect(positions[1].method == "POST")
        #expect(positions[1].longitude == -2.25)
        #expect(positions[1].attributes["lodestarId"] == "2")
        #expect(positions.map(\.connection) == [1, 1])
        #expect(standIn.connectionsAccepted == 1)
        #expect(standIn.statuses == [200, 200])
    }

    @Test func answers400WithoutADeviceAnd500WhenToldTo() throws {
        let standIn = try OsmAndStandIn()
        let connection = try RawHTTPConnection(port: standIn.port)
        #expect(connection.exchange("GET /?lat=1&lon=2 HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 400"))
        standIn.failNext(1, after: 1)
        #expect(connection.exchange("GET /?id=a&lat=1&lon=2 HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(connection.exchange("GET /?id=b&lat=1&lon=2 HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 500"))
        #expect(connection.exchange("GET /?id=c&lat=1&lon=2 HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(standIn.statuses == [400, 200, 500, 200])
        #expect(standIn.positions.map(\.deviceID) == ["a", "c"])
    }

    @Test func refusesAndListensAgainOnTheSamePort() throws {
        let standIn = try OsmAndStandIn()
        standIn.refuseConnections()
        #expect(throws: SystemError.self) { try RawHTTPConnection(port: standIn.port) }
        try standIn.acceptConnections()
        let connection = try RawHTTPConnection(port: standIn.port)
        #expect(connection.exchange("GET /?id=a HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(standIn.connectionsAccepted == 1)
    }

    @Test func answersLateWhenToldTo() throws {
        let standIn = try OsmAndStandIn()
        standIn.delayResponses(by: 0.5)
        let connection = try RawHTTPConnection(port: standIn.port)
        let start = monotonicSeconds()
        #expect(connection.exchange("GET /?id=a HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(monotonicSeconds() - start >= 0.45)
    }
}

extension String {
    /// How many times `part` occurs.
    func components(_ part: String) -> Int {
        split(separator: part, omittingEmptySubsequences: false).count - 1
    }
}
