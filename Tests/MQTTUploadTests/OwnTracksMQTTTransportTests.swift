import Forwarding
import GPSModel
import Synchronization
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

@testable import MQTTUpload

/// The transport against a real mosquitto (TestSupport's PrivateMosquitto), checked by an independent client,
/// `mosquitto_sub`, as the broker's reader.
@Suite(.tags(.mosquitto)) struct OwnTracksMQTTTransportTests {
    static let device = "car"

    /// `count` stored locations with ids from `firstID`, a metre apart, all figures known.
    static func batch(_ count: Int, firstID: Int64 = 1) -> [StoredLocation] {
        (0..<count).map { index in
            let id = firstID + Int64(index)
            let location = Location(
                timestamp: UTCTime(seconds: 1_700_000_000 + id), latitude: 48.1 + Double(index) * 1e-5,
                longitude: 11.5, altitude: 520, horizontalAccuracy: 4, verticalAccuracy: 6, speed: 1.5,
                course: 90, fixMode: .threeD)
            return StoredLocation(
                id: id, location: location, reason: index % 2 == 0 ? .update : .significantChange,
                stored: UTCTime(seconds: 1_700_000_100 + id))
        }
    }

    static func settings(_ broker: PrivateMosquitto, user: String? = nil, password: String? = nil, timeout: Double = 30)
        -> OwnTracksMQTTSettings
    {
        OwnTracksMQTTSettings(
            host: "127.0.0.1", port: Int(broker.port), user: user ?? broker.options.owntracksUser, device: device,
            username: broker.publisher.username, password: password ?? broker.publisher.password, timeout: timeout)
    }

    /// The `_id` of an OwnTracks payload, as the store id it was made from.
    static func storeID(_ payload: String) -> Int64? {
        let parts = payload.split(separator: "\"_id\":\"", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let digits = parts[1].split(separator: "\"").first else { return nil }
        return Int64(digits, radix: 16)
    }

    static func locations(_ messages: [MosquittoSubscriber.Message]) -> [MosquittoSubscriber.Message] {
        messages.filter { $0.payload.contains("\"_type\":\"location\"") }
    }

    @Test func aBatchArrivesInOrderOnTheDevicesTopicWithItsPayloads() throws {
        let broker = try PrivateMosquitto()
        let subscriber = try MosquittoSubscriber(broker: broker)
        let transport = OwnTracksMQTTTransport(settings: Self.settings(broker))
        #expect(transport.settings.topic == "owntracks/pi/car")
        #expect(transport.settings.trackerID == "ar")
        #expect(transport.settings.clientID == "lodestar-pi-car")
        #expect(transport.name == "owntracks mqtt://127.0.0.1:\(broker.port) owntracks/pi/car")

        let first = Self.batch(25)
        let outcome = transport.send(first, shouldStop: { false })
        #expect(outcome == UploadOutcome(acknowledged: 25, connectionsOpened: 1, failure: nil))
        let received = try subscriber.waitForMessages("25 locations") { Self.locations($0).count >= 25 }
        #expect(received.map(\.topic) == Array(repeating: "owntracks/pi/car", count: 25))
        #expect(received.map(\.payload) == first.map { OwnTracksPayload.location($0, trackerID: "ar") })

        // A second connection: had the first ended without its DISCONNECT, its will would have come before these.
        let second = Self.batch(5, firstID: 26)
        #expect(transport.send(second, shouldStop: { false }).acknowledged == 5)
        let all = try subscriber.waitForMessages("30 locations") { Self.locations($0).count >= 30 }
        #expect(all.count == 30)
        #expect(!all.contains { $0.payload.contains("\"lwt\"") })
        #expect(broker.connectionCount(clientID: "lodestar-pi-car") == 2)
    }

    @Test func anEmptyBatchOpensNoConnection() throws {
        let transport = OwnTracksMQTTTransport(
            settings: OwnTracksMQTTSettings(host: "127.0.0.1", port: 9, user: "pi", device: "car"))
        #expect(transport.send([], shouldStop: { false }) == UploadOutcome(acknowledged: 0, connectionsOpened: 0))
    }

    @Test func aWrongPasswordIsNotAuthorisedAndNothingIsAcknowledged() throws {
        let broker = try PrivateMosquitto()
        let transport = OwnTracksMQTTTransport(settings: Self.settings(broker, password: "wrong"))
        let outcome = transport.send(Self.batch(3), shouldStop: { false })
        #expect(outcome.acknowledged == 0)
        #expect(outcome.connectionsOpened == 1)
        let failure = try #require(outcome.failure)
        #expect(failure.contains("127.0.0.1:\(broker.port)"))
        #expect(failure.contains("not authorised"))
    }

    @Test func aPortNobodyListensOnIsConnectionRefused() throws {
        let port = try freeLoopbackPort()
        let transport = OwnTracksMQTTTransport(
            settings: OwnTracksMQTTSettings(host: "127.0.0.1", port: Int(port), user: "pi", device: "car", timeout: 5))
        let (outcome, took) = timed { transport.send(Self.batch(1), shouldStop: { false }) }
        #expect(took < 2)
        #expect(
            outcome == UploadOutcome(
                acknowledged: 0, connectionsOpened: 1, failure: "connection refused by 127.0.0.1:\(port)"))
    }

    /// The trap: mosquitto 2 answers a QoS 1 PUBLISH to a topic its ACL denies with a PUBACK (MQTT 3.1.1 has
    /// no way to say no) and drops the message; Debian's 2.0.11 then closes the connection. So a denied
    /// location counts as acknowledged, one per connection, and is gone: a PUBACK does not prove anyone got it.
    /// What shows the denial is the reader, which sees nothing, and the broker's debug log.
    @Test func aTopicOutsideTheACLIsAcknowledgedButNeverDelivered() throws {
        var options = PrivateMosquitto.Options()
        options.debugLog = true
        let broker = try PrivateMosquitto(options: options)
        let subscriber = try MosquittoSubscriber(broker: broker)
        let outside = OwnTracksMQTTTransport(settings: Self.settings(broker, user: "someone-else"))
        let denied = outside.send(Self.batch(4), shouldStop: { false })
        #expect(denied.connectionsOpened == 1)
        #expect(denied.acknowledged >= 1, "mosquitto 2 acknowledges what its ACL drops: \(denied)")

        // A location on the allowed topic, sent after: once it is there, anything of the denied batch would be too.
        let inside = OwnTracksMQTTTransport(settings: Self.settings(broker))
        #expect(inside.send(Self.batch(1, firstID: 100), shouldStop: { false }).acknowledged == 1)
        let received = try subscriber.waitForMessages("the allowed location") { !$0.isEmpty }
        #expect(received.map(\.topic) == ["owntracks/pi/car"])
        #expect(received.compactMap { Self.storeID($0.payload) } == [100])
        #expect(broker.log.contains("Denied PUBLISH from lodestar-someone-else-car"))
    }

    @Test func tlsWithTheBrokersCAWorksAndWithAnotherCAFailsWithTheReason() throws {
        var options = PrivateMosquitto.Options()
        options.tls = true
        let broker = try PrivateMosquitto(options: options)
        let tlsPort = try #require(broker.tlsPort)
        let subscriber = try MosquittoSubscriber(broker: broker)

        var settings = Self.settings(broker)
        settings.port = Int(tlsPort)
        settings.tls = true
        settings.caFile = broker.caFile
        let trusted = OwnTracksMQTTTransport(settings: settings)
        #expect(trusted.name == "owntracks mqtts://127.0.0.1:\(tlsPort) owntracks/pi/car")
        let batch = Self.batch(3)
        #expect(trusted.send(batch, shouldStop: { false }) == UploadOutcome(acknowledged: 3, connectionsOpened: 1))
        let received = try subscriber.waitForMessages("3 locations over TLS") { $0.count >= 3 }
        #expect(received.map(\.payload) == batch.map { OwnTracksPayload.location($0, trackerID: "ar") })

        // The certificate names localhost as well as 127.0.0.1: the host name check passes for it.
        settings.host = "localhost"
        #expect(OwnTracksMQTTTransport(settings: settings).send(batch, shouldStop: { false }).acknowledged == 3)

        settings.host = "127.0.0.1"
        settings.caFile = broker.unrelatedCAFile
        let untrusted = OwnTracksMQTTTransport(settings: settings)
        let outcome = untrusted.send(batch, shouldStop: { false })
        #expect(outcome.acknowledged == 0)
        #expect(outcome.connectionsOpened == 1)
        let failure = try #require(outcome.failure)
        #expect(failure.contains("TLS with 127.0.0.1:\(tlsPort) failed"))
        #expect(failure.contains("certificate verify failed"))

        // Plain MQTT to the TLS port is not a TLS failure but a broker that hangs up.
        settings.tls = false
        let plain = OwnTracksMQTTTransport(settings: settings).send(batch, shouldStop: { false })
        #expect(plain.acknowledged == 0)
        #expect(plain.failure != nil)
    }

    /// The will is the broker's: it publishes it when the client's connection ends without a DISCONNECT. The
    /// transport's test hook closes the socket after some PUBACKs, as a lost link would, so the will checked is
    /// the one the transport set on its connection.
    @Test func theLastWillIsPublishedWhenTheConnectionDropsWithoutDisconnect() throws {
        let broker = try PrivateMosquitto()
        let subscriber = try MosquittoSubscriber(broker: broker)
        let transport = OwnTracksMQTTTransport(settings: Self.settings(broker))
        transport.dropsConnectionAfterAcknowledged = 2
        let before = OwnTracksMQTTTransport.wallClock()
        let outcome = transport.send(Self.batch(2), shouldStop: { false })
        #expect(outcome.acknowledged == 2)
        #expect(outcome.failure?.contains("dropped without a DISCONNECT") == true)

        let received = try subscriber.waitForMessages("the will") { $0.contains { $0.payload.contains("lwt") } }
        let will = try #require(received.first { $0.payload.contains("lwt") })
        #expect(will.topic == "owntracks/pi/car")
        #expect(received.firstIndex(of: will) == 2, "after the two locations")
        let expected = [before.seconds, before.seconds + 1].map { #"{"_type":"lwt","tst":\#($0)}"# }
        #expect(expected.contains(will.payload), "\(will.payload)")
    }

    /// A broker that goes away while a large batch is going out: the transport reports how many were
    /// acknowledged; after a restart on the same port the rest goes again. The subscriber (a persistent
    /// session, saved by the broker each second) gets every location the transport sent again, first arrivals
    /// in order; repeats are the in-flight ones whose PUBACK the crash swallowed.
    ///
    /// Stopped (SIGTERM), mosquitto saves what it still held for the subscriber: nothing is missing. Killed
    /// (SIGKILL), it loses what it had acknowledged but not yet written to the subscriber: MQTT makes an
    /// acknowledged message the broker's to keep, so the only locations that may be missing are ones the
    /// transport rightly counted as acknowledged before the crash, never ones it gave up on.
    @Test(arguments: [false, true])
    func aBrokerGoneMidBatchGetsTheRestOnceItIsBack(killed: Bool) throws {
        let broker = try PrivateMosquitto()
        let subscriber = try MosquittoSubscriber(broker: broker)
        // Persistence saves each second: let the subscriber's session be saved before the crash.
        sleepSeconds(1.5)
        let count = 4000
        let batch = Self.batch(count)
        let transport = UncheckedBox(OwnTracksMQTTTransport(settings: Self.settings(broker)))
        let result = Mutex<UploadOutcome?>(nil)
        let batchBox = UncheckedBox(batch)
        #expect(DetachedThread.start {
            let outcome = transport.value.send(batchBox.value, shouldStop: { false })
            result.withLock { $0 = outcome }
        })
        try subscriber.waitForMessages("the first hundred locations", timeout: 30) { $0.count >= 100 }
        if killed { broker.kill() } else { broker.stop() }
        try waitUntil("send to return after the broker went away", timeout: 35) { result.withLock { $0 != nil } }
        let first = try #require(result.withLock { $0 })
        #expect(first.connectionsOpened == 1)
        #expect(first.acknowledged < count, "the broker went before the batch was through: \(first)")
        let failure = try #require(first.failure)
        #expect(failure.contains("127.0.0.1:\(broker.port)"))

        try broker.restart()
        try subscriber.waitUntilSubscribed(times: 2)
        let rest = Array(batch[first.acknowledged...])
        let second = transport.value.send(rest, shouldStop: { false })
        #expect(second == UploadOutcome(acknowledged: rest.count, connectionsOpened: 1))

        let resent = Set(rest.map(\.id))
        let expected = killed ? resent : Set(batch.map(\.id))
        let received = try subscriber.waitForMessages("the locations sent again", timeout: 30) { messages in
            expected.isSubset(of: Set(messages.compactMap { Self.storeID($0.payload) }))
        }
        let ids = received.compactMap { Self.storeID($0.payload) }
        var seen = Set<Int64>()
        let firstArrivals = ids.filter { seen.insert($0).inserted }
        let missing = batch.map(\.id).filter { !seen.contains($0) }
        #expect(firstArrivals == batch.map(\.id).filter { seen.contains($0) }, "first arrivals in order")
        let lastAcknowledged = first.acknowledged > 0 ? batch[first.acknowledged - 1].id : 0
        #expect(missing.allSatisfy { $0 <= lastAcknowledged }, "missing: \(missing)")
        if !killed { #expect(missing.isEmpty) }
        // Only what was in flight and unacknowledged when the broker went can come twice.
        let duplicates = ids.count - firstArrivals.count
        #expect(duplicates <= rest.count, "\(duplicates) repeats")
        #expect(Set(received.map(\.topic)) == ["owntracks/pi/car"])
    }

    @Test func shouldStopEndsSendWithinASecondOfTheRequest() throws {
        let broker = try PrivateMosquitto()
        broker.pause()
        defer { broker.resume() }
        let transport = OwnTracksMQTTTransport(settings: Self.settings(broker))
        let (outcome, took) = timed {
            let stopAt = monotonicSeconds() + 0.5
            return transport.send(Self.batch(3), shouldStop: { monotonicSeconds() >= stopAt })
        }
        #expect(took >= 0.5)
        #expect(took < 1.5, "send took \(took) s")
        #expect(
            outcome == UploadOutcome(
                acknowledged: 0, connectionsOpened: 1, failure: "stopped while connecting to 127.0.0.1:\(broker.port)"))
    }

    @Test func aBrokerThatNeverAnswersTimesOut() throws {
        let broker = try PrivateMosquitto()
        broker.pause()
        defer { broker.resume() }
        let transport = OwnTracksMQTTTransport(settings: Self.settings(broker, timeout: 1))
        let (outcome, took) = timed { transport.send(Self.batch(3), shouldStop: { false }) }
        #expect(took >= 1)
        #expect(took < 2.5, "send took \(took) s")
        #expect(outcome.acknowledged == 0)
        #expect(outcome.failure == "timed out after 1 s connecting to 127.0.0.1:\(broker.port)")
    }

    @Test func theLongestAcknowledgedPrefixCounts() {
        #expect(OwnTracksMQTTTransport.acknowledgedPrefix([4, 5, 6], [4, 6]) == 1)
        #expect(OwnTracksMQTTTransport.acknowledgedPrefix([4, 5, 6], [5, 6]) == 0)
        #expect(OwnTracksMQTTTransport.acknowledgedPrefix([4, 5, 6], [4, 5, 6, 7]) == 3)
        #expect(OwnTracksMQTTTransport.acknowledgedPrefix([], []) == 0)
    }

    @Test func settingsDefaults() {
        let plain = OwnTracksMQTTSettings(host: "broker.example", user: "anna", device: "pi4")
        #expect(plain.port == 1883)
        #expect(plain.trackerID == "i4")
        #expect(plain.clientID == "lodestar-anna-pi4")
        #expect(plain.timeout == 30)
        #expect(plain.keepAlive == 60)
        #expect(!plain.insecure)
        #expect(plain.topic == "owntracks/anna/pi4")
        let secure = OwnTracksMQTTSettings(host: "::1", user: "anna", device: "pi4", trackerID: "AP", tls: true)
        #expect(secure.port == 8883)
        #expect(secure.trackerID == "AP")
        #expect(secure.endpoint == "[::1]:8883")
    }
}

/// Hands a value to the one thread that uses it while the test waits.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
