import GPSModel
import Testing

@testable import Forwarding

@Suite struct OsmAndRequestTests {
    /// The query's fields in order, split by hand (not by anything the encoder uses).
    func fields(_ query: String) -> [(String, String)] {
        query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    func value(_ key: String, in query: String) -> String? {
        fields(query).first { $0.0 == key }?.1
    }

    func stored(_ location: Location, id: Int64 = 41) -> StoredLocation {
        StoredLocation(id: id, location: location, reason: .update, stored: UTCTime(seconds: 1_700_000_100))
    }

    @Test func everyKnownValueWithItsUnit() {
        let location = Location(
            timestamp: UTCTime(seconds: 1_700_000_000, nanoseconds: 750_000_000), latitude: 48.1372, longitude: 11.5756,
            altitude: 519.25, horizontalAccuracy: 4.5, speed: 10, course: 271.5, fixMode: .threeD, hdop: 0.9)
        let query = OsmAndRequest.query(stored(location), deviceID: "pi-car", battery: 87)
        #expect(
            query
                == "id=pi-car&timestamp=1700000000&lat=48.1372&lon=11.5756&speed=19.438&bearing=271.5"
                + "&altitude=519.25&accuracy=4.5&hdop=0.9&batt=87&valid=true&lodestarId=41")
    }

    @Test(arguments: [(10.0, "19.438"), (1.0, "1.944"), (0.0, "0"), (1852.0 / 36.0, "100")])
    func speedIsInKnots(metresPerSecond: Double, knots: String) {
        let location = Location(
            timestamp: UTCTime(seconds: 1_700_000_000), latitude: 1, longitude: 2, speed: metresPerSecond, fixMode: .twoD)
        #expect(value("speed", in: OsmAndRequest.query(stored(location), deviceID: "d", battery: nil)) == knots)
    }

    @Test func negativeCoordinatesKeepTheirSignUnescaped() {
        let location = Location(
            timestamp: UTCTime(seconds: 1_700_000_000), latitude: -33.8688, longitude: -151.2093, altitude: -12.5,
            fixMode: .threeD)
        let query = OsmAndRequest.query(stored(location), deviceID: "d", battery: nil)
        #expect(value("lat", in: query) == "-33.8688")
        #expect(value("lon", in: query) == "-151.2093")
        #expect(value("altitude", in: query) == "-12.5")
    }

    @Test func smallValuesAreNeverInExponentForm() {
        let location = Location(
            timestamp: UTCTime(seconds: 1_700_000_000), latitude: 0.00001, longitude: -0.0000001, fixMode: .twoD)
        let query = OsmAndRequest.query(stored(location), deviceID: "d", battery: nil)
        #expect(value("lat", in: query) == "0.00001")
        #expect(value("lon", in: query) == "-0.0000001")
        // Below the last place rounds to a plain zero, without a sign.
        #expect(OsmAndRequest.decimal(-0.00000001, places: 7) == "0")
    }

    @Test func unknownValuesAreLeftOut() {
        let location = Location(timestamp: UTCTime(seconds: 1_700_000_000), latitude: 1.5, longitude: 2.5, fixMode: .twoD)
        let query = OsmAndRequest.query(stored(location, id: 7), deviceID: "d", battery: nil)
        #expect(fields(query).map(\.0) == ["id", "timestamp", "lat", "lon", "valid", "lodestarId"])
        #expect(value("lodestarId", in: query) == "7")
    }

    @Test func deviceIDIsPercentEncoded() {
        let location = Location(timestamp: UTCTime(seconds: 1_700_000_000), latitude: 1, longitude: 2, fixMode: .twoD)
        let query = OsmAndRequest.query(stored(location), deviceID: "my car&x=1 é", battery: nil)
        #expect(value("id", in: query) == "my%20car%26x%3D1%20%C3%A9")
    }

    @Test func timestampIsTheFixsWholeSecondsNotTheStoreTime() {
        let location = Location(
            timestamp: UTCTime(seconds: 1_600_000_000, nanoseconds: 999_000_000), latitude: 1, longitude: 2, fixMode: .twoD)
        #expect(value("timestamp", in: OsmAndRequest.query(stored(location), deviceID: "d", battery: nil)) == "1600000000")
    }
}
