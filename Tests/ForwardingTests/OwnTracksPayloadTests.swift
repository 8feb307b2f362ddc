import GPSModel
import JSON
import Testing

@testable import Forwarding

@Suite struct OwnTracksPayloadTests {
    static let fixTime = UTCTime(seconds: 1_700_000_000, nanoseconds: 900_000_000)
    static let storedTime = UTCTime(seconds: 1_700_000_042)

    static func stored(
        id: Int64 = 7, reason: DeliveryReason = .update, altitude: Double? = 35.4, horizontal: Double? = 4.6,
        vertical: Double? = 7.5, speed: Double? = 10, course: Double? = 271.2
    ) -> StoredLocation {
        let location = Location(
            timestamp: fixTime, latitude: 52.516_275, longitude: 13.377_704, altitude: altitude,
            horizontalAccuracy: horizontal, verticalAccuracy: vertical, speed: speed, course: course,
            fixMode: .threeD)
        return StoredLocation(id: id, location: location, reason: reason, stored: storedTime)
    }

    /// The payload's members by key, and the keys in order.
    static func members(_ text: String) throws -> (keys: [String], values: [String: JSONValue]) {
        guard case .object(let members) = try JSONParser.parse(Array(text.utf8)) else {
            Issue.record("not an object: \(text)")
            return ([], [:])
        }
        return (members.map(\.key), Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) }))
    }

    static func number(_ value: JSONValue?) -> Double? {
        if case .number(let number)? = value { number } else { nil }
    }

    static func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { text } else { nil }
    }

    @Test func aFullLocationCarriesEveryFieldInOwnTracksUnits() throws {
        let text = OwnTracksPayload.location(Self.stored(), trackerID: "pi")
        #expect(!text.contains("\n"))
        let (keys, values) = try Self.members(text)
        #expect(keys == ["_type", "tid", "tst", "lat", "lon", "acc", "alt", "vac", "vel", "cog", "t", "created_at", "_id"])
        #expect(Self.string(values["_type"]) == "location")
        #expect(Self.string(values["tid"]) == "pi")
        // Whole epoch seconds of the fix, not of storing it; the fraction is dropped.
        #expect(Self.number(values["tst"]) == 1_700_000_000)
        #expect(Self.number(values["lat"]) == 52.516_275)
        #expect(Self.number(values["lon"]) == 13.377_704)
        #expect(Self.number(values["acc"]) == 5)
        #expect(Self.number(values["alt"]) == 35)
        #expect(Self.number(values["vac"]) == 8)
        // 10 m/s is 36 km/h.
        #expect(Self.number(values["vel"]) == 36)
        #expect(Self.number(values["cog"]) == 271)
        #expect(Self.string(values["t"]) == "t")
        #expect(Self.number(values["created_at"]) == 1_700_000_042)
        #expect(Self.string(values["_id"]) == "00000007")
        // Whole numbers are written without a fraction, as OwnTracks' integers.
        #expect(text.contains("\"vel\":36,"))
        #expect(text.contains("\"tst\":1700000000,"))
    }

    @Test(arguments: [
        (1.0, 4), (2.5, 9), (13.89, 50), (0.1, nil), (0.14, 1), (41.67, 150),
    ] as [(Double, Int?)])
    func speedIsWholeKilometresPerHour(metresPerSecond: Double, kilometresPerHour: Int?) throws {
        let (_, values) = try Self.members(
            OwnTracksPayload.location(Self.stored(speed: metresPerSecond), trackerID: nil))
        #expect(Self.number(values["vel"]).map { Int($0) } == kilometresPerHour)
    }

    @Test func unknownFiguresAreLeftOut() throws {
        let text = OwnTracksPayload.location(
            Self.stored(altitude: nil, horizontal: nil, vertical: nil, speed: nil, course: nil), trackerID: nil)
        let (keys, _) = try Self.members(text)
        #expect(keys == ["_type", "tst", "lat", "lon", "t", "created_at", "_id"])
    }

    /// OwnTracks adds acc, alt, vac, vel and cog only when not zero; a figure that rounds to zero counts as zero.
    @Test func zeroFiguresAreLeftOutAsOwnTracksDoes() throws {
        let text = OwnTracksPayload.location(
            Self.stored(altitude: -0.4, horizontal: 0.3, vertical: 0, speed: 0.1, course: 359.7), trackerID: "")
        let (keys, _) = try Self.members(text)
        #expect(keys == ["_type", "tst", "lat", "lon", "t", "created_at", "_id"])
        let below = OwnTracksPayload.location(Self.stored(altitude: -12.6), trackerID: nil)
        #expect(Self.number(try Self.members(below).values["alt"]) == -13)
    }

    @Test(arguments: [(359.4, 359), (0.6, 1), (180.5, 181), (-90, 270), (720.2, nil)] as [(Double, Int?)])
    func courseIsWholeDegreesBelow360(course: Double, degrees: Int?) throws {
        let (_, values) = try Self.members(OwnTracksPayload.location(Self.stored(course: course), trackerID: nil))
        #expect(Self.number(values["cog"]).map { Int($0) } == degrees)
    }

    @Test func theTriggerFollowsTheDeliveryReason() throws {
        let expected: [DeliveryReason: String] = [
            .update: "t", .deferredBatch: "t", .significantChange: "p", .request: "r",
        ]
        for reason in DeliveryReason.allCases {
            let (_, values) = try Self.members(OwnTracksPayload.location(Self.stored(reason: reason), trackerID: nil))
            #expect(Self.string(values["t"]) == expected[reason], "\(reason)")
        }
    }

    @Test func theIDIsTheStoreIDInHexadecimalAndStable() {
        #expect(OwnTracksPayload.messageID(for: 1) == "00000001")
        #expect(OwnTracksPayload.messageID(for: 255) == "000000ff")
        #expect(OwnTracksPayload.messageID(for: 0x1_2345_6789) == "123456789")
        let first = OwnTracksPayload.location(Self.stored(id: 42), trackerID: "pi")
        let again = OwnTracksPayload.location(Self.stored(id: 42), trackerID: "pi")
        let other = OwnTracksPayload.location(Self.stored(id: 43), trackerID: "pi")
        #expect(first == again)
        #expect(first.contains("\"_id\":\"0000002a\""))
        #expect(other.contains("\"_id\":\"0000002b\""))
    }

    @Test func aTrackerIDIsEscapedAsAJSONString() throws {
        let (_, values) = try Self.members(OwnTracksPayload.location(Self.stored(), trackerID: "a\"b"))
        #expect(Self.string(values["tid"]) == "a\"b")
    }

    @Test func theLastWillIsAnLWTMessageWithTheConnectionTime() throws {
        let text = OwnTracksPayload.lastWill(connectedAt: UTCTime(seconds: 1_700_000_123, nanoseconds: 5))
        #expect(text == #"{"_type":"lwt","tst":1700000123}"#)
    }
}
