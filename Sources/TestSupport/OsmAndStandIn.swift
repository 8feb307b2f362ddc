import GPSModel
import SystemInterface
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The Traccar stand-in: an HTTP/1.1 server on 127.0.0.1 that takes OsmAnd requests and decodes them the way
/// Traccar's OsmAndProtocolDecoder does, for tests of the Traccar uploader without a Traccar. Written apart from
/// the uploader's encoder (Forwarding's OsmAndRequest), so a mistake in one is not repeated in the other.
///
/// It keeps connections alive (many requests on one), records each decoded position with the number of the
/// connection it came on, answers 200 (400 without a device id, as Traccar does), and has faults to order:
/// answer the next requests with 500, answer late, refuse connections and listen again on the same port.
public final class OsmAndStandIn: Sendable {
    /// A position as Traccar's decoder makes it: the units it stores (speed in knots), unknown values nil.
    public struct Position: Sendable, Equatable {
        /// `id` or `deviceid`.
        public var deviceID: String
        /// `timestamp`: epoch seconds below 2^31, milliseconds above; or ISO 8601. nil when not sent.
        public var time: UTCTime?
        /// `lat`/`lon`, or `location=lat,lon`.
        public var latitude: Double?
        public var longitude: Double?
        /// `speed`, in knots as sent and as Traccar keeps it.
        public var speedKnots: Double?
        /// `bearing` or `heading`, degrees.
        public var course: Double?
        /// Metres.
        public var altitude: Double?
        public var accuracy: Double?
        public var hdop: Double?
        /// `batt`, percent.
        public var battery: Double?
        /// `valid`: `true` or `1`; nil when not sent.
        public var valid: Bool?
        /// Every other key, with its decoded value (Traccar keeps them as position attributes).
        public var attributes: [String: String] = [:]
        /// The number of the connection it came on: 1 for the first the stand-in accepted.
        public var connection: Int = 0
        /// `GET` or `POST`.
        public var method: String = "GET"

        /// `speedKnots` in metres per second.
        public var speedMetresPerSecond: Double? { speedKnots.map { $0 * 1852 / 3600 } }
    }

    /// Why a request was not decoded (answered 400).
    public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public let port: UInt16
    /// `http://127.0.0.1:PORT`, the URL to give an uploader.
    public var url: String { "http://127.0.0.1:\(port)" }

    private let shared = Shared()

    private final class Shared: Sendable {
        let state = Mutex(State())
        let stopping = StopFlag()
        let finished = StopFlag()
    }

    private struct State: Sendable {
        var positions: [Position] = []
        /// When each of `positions` arrived, on the monotonic clock.
        var arrivals: [Double] = []
        var statuses: [Int] = []
        var connectionsAccepted = 0
        var failuresToGive = 0
        var answersBeforeFailures = 0
        var failureStatus = 500
        var closesAfterEachAnswer = false
        var responseDelay = 0.0
        /// A listening socket for the server thread to take over (-1: none waiting).
        var newListener: Int32 = -1
        var wantsListening = true
        /// Whether the server thread has a listening socket (what `refuseConnections` waits for).
        var listening = true
    }

    /// Listens on `port` (0: any free port) at once; serves from its own thread until `stop` or deinit.
    public init(port: UInt16 = 0) throws(SystemError) {
        let (listener, bound) = try LoopbackListener.open(port: port)
        self.port = bound
        shared.state.withLock { $0.newListener = listener }
        let started = DetachedThread.start { [shared] in Self.serve(shared) }
        if !started {
            close(listener)
            throw SystemError("pthread_create", "OsmAndStandIn")
        }
    }

    deinit { stop() }

    // MARK: What it saw

    /// Every position answered 200, in arrival order.
    public var positions: [Position] { shared.state.withLock { $0.positions } }
    /// When each of `positions` arrived, in seconds on the monotonic clock (`monotonicSeconds()`).
    public var arrivals: [Double] { shared.state.withLock { $0.arrivals } }
    /// The status of every OsmAnd request's answer, in arrival order (200, 400, the ordered failures), whether
    /// or not the client stayed for it.
    public var statuses: [Int] { shared.state.withLock { $0.statuses } }
    /// Connections accepted since the start.
    public var connectionsAccepted: Int { shared.state.withLock { $0.connectionsAccepted } }

    // MARK: Faults

    /// Answers the next `count` OsmAnd requests with `status` (500: Traccar's answer when it cannot store),
    /// after answering `after` requests as usual; the failed requests' positions are not recorded.
    public func failNext(_ count: Int, after: Int = 0, status: Int = 500) {
        shared.state.withLock {
            $0.failuresToGive = count
            $0.answersBeforeFailures = after
            $0.failureStatus = status
        }
    }

    /// Whether each answer from now on closes its connection (`Connection: close`), as a server or proxy
    /// without keep-alive does.
    public func closeAfterEachAnswer(_ closes: Bool) {
        shared.state.withLock { $0.closesAfterEachAnswer = closes }
    }

    /// Answers requests that arrive from now on `seconds` late (0: at once). Their positions are recorded on
    /// arrival, as Traccar stores a position before it answers, so a client that gave up sends a duplicate.
    public func delayResponses(by seconds: Double) {
        shared.state.withLock { $0.responseDelay = max(0, seconds) }
    }

    /// Stops listening and closes every open connection: connecting gets "connection refused" until
    /// `acceptConnections`. Returns once it is so.
    public func refuseConnections() {
        shared.state.withLock { $0.wantsListening = false }
        while shared.state.withLock({ $0.listening }) && !shared.finished.isSet { sleepSeconds(0.005) }
    }

    /// Listens again on the same port.
    public func acceptConnections() throws(SystemError) {
        let (listener, _) = try LoopbackListener.open(port: port)
        shared.state.withLock {
            if $0.newListener >= 0 { close($0.newListener) }
            $0.newListener = listener
            $0.wantsListening = true
            $0.listening = true
        }
    }

    /// Stops serving and closes every socket. Safe to call twice.
    public func stop() {
        shared.stopping.set()
        while !shared.finished.isSet { sleepSeconds(0.005) }
    }

    // MARK: Decoding, as Traccar's OsmAndProtocolDecoder

    /// The position in an OsmAnd request: the target's query, or when it has none the form body (Traccar's
    /// order). Throws what Traccar answers 400 for: no device id, or a value it cannot parse.
    public static func decode(target: String, body: [UInt8]) throws(DecodeError) -> Position {
        var pairs = parameters(target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? "")
        if pairs.isEmpty { pairs = parameters(String(decoding: body, as: UTF8.self)) }
        var position = Position(deviceID: "")
        var hasDevice = false
        func number(_ key: String, _ value: String) throws(DecodeError) -> Double {
            guard let number = Double(value) else { throw DecodeError(description: "\(key)=\(value) is not a number") }
            return number
        }
        for (key, value) in pairs {
            switch key {
            case "id", "deviceid":
                position.deviceID = value
                hasDevice = true
            case "valid": position.valid = value == "true" || value == "1"
            case "timestamp": position.time = try time(value)
            case "lat": position.latitude = try number(key, value)
            case "lon": position.longitude = try number(key, value)
            case "location":
                let parts = value.split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count == 2 else { throw DecodeError(description: "location=\(value) is not lat,lon") }
                position.latitude = try number(key, String(parts[0]))
                position.longitude = try number(key, String(parts[1]))
            case "speed": position.speedKnots = try number(key, value)
            case "bearing", "heading": position.course = try number(key, value)
            case "altitude": position.altitude = try number(key, value)
            case "accuracy": position.accuracy = try number(key, value)
            case "hdop": position.hdop = try number(key, value)
            case "batt": position.battery = try number(key, value)
            default: position.attributes[key] = value
            }
        }
        guard hasDevice, !position.deviceID.isEmpty else { throw DecodeError(description: "no id or deviceid") }
        return position
    }

    /// `key=value&…` split and percent-decoded (`+` is a space, as in a form), in order; a key without `=`
    /// has an empty value.
    static func parameters(_ text: String) -> [(String, String)] {
        text.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = percentDecoded(parts[0])
            return key.isEmpty ? nil : (key, parts.count > 1 ? percentDecoded(parts[1]) : "")
        }
    }

    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), input.count >= 2, let high = hex(input[input.startIndex]),
                let low = hex(input[input.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                input = input.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Traccar's timestamp: an integer is seconds below 2^31 - 1 and milliseconds from there; else ISO 8601
    /// (`…T…Z`) or `yyyy-MM-dd HH:mm:ss` (UTC).
    static func time(_ value: String) throws(DecodeError) -> UTCTime {
        if let integer = Int64(value) {
            if integer < Int64(Int32.max) { return UTCTime(seconds: integer) }
            let (seconds, milliseconds) = integer.quotientAndRemainder(dividingBy: 1000)
            return UTCTime(seconds: seconds, nanoseconds: Int32(milliseconds) * 1_000_000)
        }
        let iso = value.contains("T") ? value : String(value.map { $0 == " " ? "T" : $0 }) + "Z"
        guard let time = UTCTime(iso8601: Array(iso.utf8)) else {
            throw DecodeError(description: "timestamp=\(value) is not a time")
        }
        return time
    }

    // MARK: Serving


    /// One open connection, owned by the server thread.
    private final class Connection {
        let descriptor: Int32
        let number: Int
        var received: [UInt8] = []
        /// Answers not yet sent, in request order: when each is due and whether the connection closes after it.
        var answers: [(due: Double, bytes: [UInt8], closes: Bool)] = []
        var closed = false

        init(descriptor: Int32, number: Int) {
            self.descriptor = descriptor
            self.number = number
        }

        func close() {
            guard !closed else { return }
            closed = true
            Glibc.close(descriptor)
        }
    }

    /// The server thread: one poll loop over the listening socket and every connection, so a late answer
    /// on one connection holds up no other.
    private static func serve(_ shared: Shared) {
        var listener: Int32 = -1
        var connections: [Connection] = []
        defer {
            if listener >= 0 { close(listener) }
            for connection in connections { connection.close() }
            shared.state.withLock {
                if $0.newListener >= 0 { close($0.newListener) }
                $0.newListener = -1
                $0.listening = false
            }
            shared.finished.set()
        }
        while !shared.stopping.isSet {
            let (taken, wantsListening) = shared.state.withLock { state in
                let taken = state.newListener
                state.newListener = -1
                return (taken, state.wantsListening)
            }
            if taken >= 0 {
                if listener >= 0 { close(listener) }
                listener = taken
            }
            if !wantsListening && listener >= 0 {
                close(listener)
                listener = -1
                for connection in connections { connection.close() }
                connections = []
                shared.state.withLock { $0.listening = false }
            }

            let now = monotonicSeconds()
            let nextDue = connections.compactMap { $0.answers.first?.due }.min()
            let wait = min(0.05, max(0, (nextDue ?? .infinity) - now))
            var pollers = connections.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            if listener >= 0 { pollers.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&pollers, nfds_t(pollers.count), Int32((wait * 1000).rounded(.up)))

            let polled = connections.count
            if listener >= 0, let last = pollers.last, last.revents & Int16(POLLIN) != 0 {
                let descriptor = accept(listener, nil, nil)
                if descriptor >= 0 {
                    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                    let number = shared.state.withLock { state in
                        state.connectionsAccepted += 1
                        return state.connectionsAccepted
                    }
                    connections.append(Connection(descriptor: descriptor, number: number))
                }
            }
            for (index, connection) in connections.prefix(polled).enumerated() {
                guard pollers[index].revents != 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let count = chunk.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else {
                    connection.close()
                    continue
                }
                connection.received += chunk[..<count]
                handleRequests(on: connection, shared)
            }
            let sendingTime = monotonicSeconds()
            for connection in connections where !connection.closed {
                while let answer = connection.answers.first, answer.due <= sendingTime {
                    connection.answers.removeFirst()
                    let sent = answer.bytes.withUnsafeBytes {
                        send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                    if sent != answer.bytes.count || answer.closes {
                        connection.close()
                        break
                    }
                }
            }
            connections.removeAll { $0.closed }
        }
    }

    /// Takes every complete request off the connection's input and queues its answer.
    private static func handleRequests(on connection: Connection, _ shared: Shared) {
        let headEnd = Array("\r\n\r\n".utf8)
        while !connection.closed {
            guard let end = firstIndex(of: headEnd, in: connection.received) else {
                // No head this long is an OsmAnd request.
                if connection.received.count > 1 << 20 { connection.close() }
                return
            }
            let head = String(decoding: connection.received[..<end], as: UTF8.self)
            let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
            let requestLine = lines.first.map { $0.split(separator: " ") } ?? []
            var contentLength = 0
            var connectionHeader = ""
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingSpaces
                if name == "content-length" { contentLength = Int(value) ?? 0 }
                if name == "connection" { connectionHeader = value.lowercased() }
            }
            let bodyStart = end + headEnd.count
            guard connection.received.count >= bodyStart + contentLength else { return }
            let body = Array(connection.received[bodyStart..<(bodyStart + contentLength)])
            connection.received.removeFirst(bodyStart + contentLength)

            guard requestLine.count == 3 else {
                connection.answers.append((monotonicSeconds(), response(400), true))
                continue
            }
            let method = String(requestLine[0])
            let version = String(requestLine[2])
            var keepsAlive = version == "HTTP/1.1" ? connectionHeader != "close" : connectionHeader == "keep-alive"
            let decoded: Result<Position, DecodeError>
            do throws(DecodeError) {
                var position = try decode(target: String(requestLine[1]), body: body)
                position.connection = connection.number
                position.method = method
                decoded = .success(position)
            } catch {
                decoded = .failure(error)
            }
            let (status, delay, closes) = shared.state.withLock { state -> (Int, Double, Bool) in
                var status = 200
                switch decoded {
                case .failure: status = 400
                case .success(let position):
                    if state.failuresToGive > 0 && state.answersBeforeFailures > 0 {
                        state.answersBeforeFailures -= 1
                        state.positions.append(position)
                        state.arrivals.append(monotonicSeconds())
                    } else if state.failuresToGive > 0 {
                        state.failuresToGive -= 1
                        status = state.failureStatus
                    } else {
                        state.positions.append(position)
                        state.arrivals.append(monotonicSeconds())
                    }
                }
                state.statuses.append(status)
                return (status, state.responseDelay, state.closesAfterEachAnswer)
            }
            if closes { keepsAlive = false }
            connection.answers.append((monotonicSeconds() + delay, response(status, keepsAlive: keepsAlive), !keepsAlive))
        }
    }

    private static func response(_ status: Int, keepsAlive: Bool = false) -> [UInt8] {
        let reason =
            switch status {
            case 200: "OK"
            case 400: "Bad Request"
            case 500: "Internal Server Error"
            case 503: "Service Unavailable"
            default: "Status"
            }
        let connection = keepsAlive ? "keep-alive" : "close"
        return Array("HTTP/1.1 \(status) \(reason)\r\nContent-Length: 0\r\nConnection: \(connection)\r\n\r\n".utf8)
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
