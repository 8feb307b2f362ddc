import CMosquitto
import Forwarding
import GPSModel
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// Where and as whom OwnTracks locations are published.
public struct OwnTracksMQTTSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// The user part of the topic (OwnTracks' `owntracks/<user>/<device>`).
    public var user: String
    /// The device part of the topic.
    public var device: String
    /// `tid`, the short name OwnTracks shows on the map; nil or empty leaves it out.
    public var trackerID: String?
    /// The broker login; nil connects without one.
    public var username: String?
    public var password: String?
    public var tls: Bool
    /// Trust anchors for the broker's certificate; with neither, the system's CA certificates.
    public var caFile: String?
    public var caPath: String?
    /// Skip the check that the broker's certificate names `host` (the chain is still checked).
    public var insecure: Bool
    /// The MQTT client id: fixed, so the broker sees one device and drops an older connection of it.
    public var clientID: String
    /// Seconds one `send` may take in all: connecting, publishing and waiting for every PUBACK.
    public var timeout: Double
    /// MQTT keep-alive in seconds (libmosquitto takes 5 or more).
    public var keepAlive: Int

    /// `port` defaults to MQTT's 1883, or 8883 with TLS; `trackerID` to the last two characters of `device`
    /// (what OwnTracks' apps use); `clientID` to `lodestar-<user>-<device>`.
    public init(
        host: String, port: Int? = nil, user: String, device: String, trackerID: String? = nil,
        username: String? = nil, password: String? = nil, tls: Bool = false, caFile: String? = nil,
        caPath: String? = nil, insecure: Bool = false, clientID: String? = nil, timeout: Double = 30,
        keepAlive: Int = 60
    ) {
        self.host = host
        self.port = port ?? (tls ? 8883 : 1883)
        self.user = user
        self.device = device
        self.trackerID = trackerID ?? String(device.suffix(2))
        self.username = username
        self.password = password
        self.tls = tls
        self.caFile = caFile
        self.caPath = caPath
        self.insecure = insecure
        self.clientID = clientID ?? "lodestar-\(user)-\(device)"
        self.timeout = timeout
        self.keepAlive = keepAlive
    }

    /// `owntracks/<user>/<device>`, where OwnTracks' recorder and apps look for a device's locations.
    public var topic: String { "owntracks/\(user)/\(device)" }

    /// `host:port`, IPv6 addresses in brackets, for messages.
    public var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Publishes stored locations as OwnTracks `location` messages to an MQTT broker: one connection per batch,
/// QoS 1, in order; a location counts as delivered when its PUBACK came (docs/upload.md).
public final class OwnTracksMQTTTransport: UploadTransport {
    public let settings: OwnTracksMQTTSettings

    /// For tests: after this many PUBACKs the socket is closed without a DISCONNECT, as a lost link ends it,
    /// so the broker publishes the will.
    var dropsConnectionAfterAcknowledged: Int?

    /// How long one turn of the network loop may wait: the granularity of `shouldStop` and the timeout.
    static let loopSlice: Int32 = 100
    /// What a clean disconnect may add to a finished batch.
    static let disconnectGrace = 0.5
    static let publishQoS: Int32 = 1

    public init(settings: OwnTracksMQTTSettings) {
        self.settings = settings
    }

    public var name: String {
        "owntracks \(settings.tls ? "mqtts" : "mqtt")://\(settings.endpoint) \(settings.topic)"
    }

    public func send(_ batch: [StoredLocation], shouldStop: () -> Bool) -> UploadOutcome {
        guard !batch.isEmpty else { return UploadOutcome(acknowledged: 0, connectionsOpened: 0) }
        let deadline = monotonicSeconds() + settings.timeout
        let endpoint = settings.endpoint
        let connection: MQTTConnection
        do throws(MQTTError) {
            connection = try MQTTConnection(clientID: settings.clientID, endpoint: endpoint)
            if let username = settings.username { try connection.setCredentials(username: username, password: settings.password) }
            try connection.setWill(
                topic: settings.topic, payload: OwnTracksPayload.lastWill(connectedAt: Self.wallClock()),
                qos: Self.publishQoS, retain: false)
            if settings.tls {
                try connection.setTLS(
                    .init(caFile: settings.caFile, caPath: settings.caPath, insecure: settings.insecure))
            }
        } catch {
            return UploadOutcome(acknowledged: 0, connectionsOpened: 0, failure: error.message)
        }
        do throws(MQTTError) {
            try connection.startConnecting(host: settings.host, port: settings.port, keepAlive: settings.keepAlive)
        } catch {
            return UploadOutcome(acknowledged: 0, connectionsOpened: 1, failure: error.message)
        }

        // CONNACK first: a refused login is then told apart from a lost connection.
        if let failure = run(connection, until: { $0.connackCode != nil }, deadline: deadline, shouldStop: shouldStop,
                             phase: "connecting to") {
            return UploadOutcome(acknowledged: 0, connectionsOpened: 1, failure: failure)
        }
        if let code = connection.events.connackCode, code != 0 {
            return UploadOutcome(
                acknowledged: 0, connectionsOpened: 1,
                failure: "\(endpoint) refused the connection: \(MQTTConnection.connackText(code)) (CONNACK \(code))")
        }

        // libmosquitto keeps at most 20 in flight and sends the rest as PUBACKs free the window, in order.
        // A publish that fails (the broker hung up) ends the queueing; the loop below still reads the PUBACKs
        // that arrived before the hang-up.
        var messageIDs: [Int32] = []
        messageIDs.reserveCapacity(batch.count)
        var publishFailure: String?
        for stored in batch {
            let payload = OwnTracksPayload.location(stored, trackerID: settings.trackerID)
            do throws(MQTTError) {
                messageIDs.append(
                    try connection.publish(topic: settings.topic, payload: payload, qos: Self.publishQoS, retain: false))
            } catch {
                publishFailure = error.message
                break
            }
        }

        let dropAfter = dropsConnectionAfterAcknowledged
        var dropped = false
        let failure = run(
            connection,
            until: { events in
                let acknowledged = Self.acknowledgedPrefix(messageIDs, events.acknowledged)
                if let dropAfter, acknowledged >= dropAfter {
                    dropped = true
                    return true
                }
                return acknowledged == messageIDs.count
            },
            deadline: deadline, shouldStop: shouldStop, phase: "publishing to")
        let acknowledged = Self.acknowledgedPrefix(messageIDs, connection.events.acknowledged)
        if dropped {
            connection.dropWithoutDisconnect()
            return UploadOutcome(
                acknowledged: acknowledged, connectionsOpened: 1,
                failure: "connection to \(endpoint) dropped without a DISCONNECT (test hook)")
        }
        if connection.events.disconnection == nil {
            connection.disconnect()
            // Lets the DISCONNECT out so the broker does not publish the will; bounded, as a dead link may not take it.
            let grace = min(Self.disconnectGrace, max(0, deadline - monotonicSeconds()) + 0.2)
            _ = run(connection, until: { $0.disconnection != nil }, deadline: monotonicSeconds() + grace,
                    shouldStop: { false }, phase: "disconnecting from")
        }
        if let failure {
            return UploadOutcome(acknowledged: acknowledged, connectionsOpened: 1, failure: failure)
        }
        if acknowledged < batch.count {
            return UploadOutcome(
                acknowledged: acknowledged, connectionsOpened: 1,
                failure: publishFailure ?? "\(endpoint) acknowledged \(acknowledged) of \(batch.count)")
        }
        return UploadOutcome(acknowledged: acknowledged, connectionsOpened: 1)
    }

    /// Runs the network loop until `done` holds; nil then, otherwise why it stopped (lost connection, TLS
    /// failure, timeout, stop request).
    private func run(
        _ connection: MQTTConnection, until done: (MQTTConnectionEvents) -> Bool, deadline: Double,
        shouldStop: () -> Bool, phase: String
    ) -> String? {
        let endpoint = connection.endpoint
        while !done(connection.events) {
            if shouldStop() { return "stopped while \(phase) \(endpoint)" }
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 {
                return "timed out after \(Self.seconds(settings.timeout)) s \(phase) \(endpoint)"
            }
            let slice = min(Self.loopSlice, Int32((remaining * 1000).rounded(.up)))
            let code = connection.loop(milliseconds: slice)
            if done(connection.events) { return nil }
            if code != MOSQ_ERR_SUCCESS.rawValue {
                return lostConnection(connection, code: code, phase: phase)
            }
        }
        return nil
    }

    /// Words for a loop that ended the connection.
    private func lostConnection(_ connection: MQTTConnection, code: Int32, phase: String) -> String {
        let endpoint = connection.endpoint
        let events = connection.events
        if let connack = events.connackCode, connack != 0 {
            return "\(endpoint) refused the connection: \(MQTTConnection.connackText(connack)) (CONNACK \(connack))"
        }
        let cause = events.disconnection?.errno ?? errno
        if events.connackCode == nil || code == MOSQ_ERR_TLS.rawValue {
            // Never connected: refused, unreachable, a failed TLS handshake, or a broker that hung up.
            return MQTTConnection.connectFailure(
                code: code, errno: cause, endpoint: endpoint, logged: events.lastLoggedError)
        }
        let reason =
            code == MOSQ_ERR_ERRNO.rawValue ? errnoText(cause) : MosquittoLibrary.text(code)
        return "\(endpoint) went away while \(phase) it: \(reason)"
    }

    /// How many of `messageIDs`, from the first, have their PUBACK: the ones that are done. A broker acknowledges
    /// one connection's QoS 1 messages in order, so this is normally every PUBACK received.
    static func acknowledgedPrefix(_ messageIDs: [Int32], _ acknowledged: Set<Int32>) -> Int {
        messageIDs.firstIndex { !acknowledged.contains($0) } ?? messageIDs.count
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }

    /// UTC now on the system clock (for the will's `tst`).
    static func wallClock() -> UTCTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UTCTime(seconds: Int64(now.tv_sec), nanoseconds: Int32(now.tv_nsec))
    }
}
