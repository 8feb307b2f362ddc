import Testing

@testable import GPSModel

@Suite struct UTCTimeTests {
    @Test(arguments: [
        (Int64(0), Int32(0), "1970-01-01T00:00:00.000Z"),
        (Int64(951_782_400), Int32(0), "2000-02-29T00:00:00.000Z"),
        (Int64(1_490_958_084), Int32(0), "2017-03-31T11:01:24.000Z"),
        (Int64(1_796_013_137), Int32(949_000_000), "2026-11-30T04:32:17.949Z"),
        (Int64(4_102_444_799), Int32(999_999_999), "2099-12-31T23:59:59.999Z"),
        (Int64(-1), Int32(0), "1969-12-31T23:59:59.000Z"),
    ])
    func formatsLikeGpsd(seconds: Int64, nanoseconds: Int32, expected: String) {
        #expect(UTCTime(seconds: seconds, nanoseconds: nanoseconds).iso8601 == expected)
    }

    @Test func ordersAndMeasures() {
        let a = UTCTime(seconds: 10, nanoseconds: 500_000_000)
        let b = UTCTime(seconds: 11, nanoseconds: 0)
        #expect(a < b)
        #expect(b.interval(since: a) == 0.5)
    }
}

@Suite struct LocationAssemblerTests {
    let time = UTCTime(seconds: 1_700_000_000)

    func fix(eph: Double? = 19, epv: Double? = 23, device: String = "/dev/ttyACM0", mode: FixMode = .threeD) -> Fix {
        Fix(
            device: device, mode: mode, time: time, latitude: 48.1, longitude: 11.5, altitudeMSL: 520, eph: eph,
            epv: epv, speed: 3, eps: 1.96, track: 90, epd: 9.8)
    }

    @Test func gpsdEstimateIsScaledFrom95To68() throws {
        let location = try #require(LocationAssembler().location(for: fix()))
        #expect(location.horizontalAccuracySource == .gpsdEstimate)
        #expect(abs((location.horizontalAccuracy ?? 0) - 19 * 1.414 / 2.45) < 1e-9)
        #expect(abs((location.verticalAccuracy ?? 0) - 23 / 1.96) < 1e-9)
        #expect(abs((location.speedAccuracy ?? 0) - 1) < 1e-9)
        #expect(abs((location.courseAccuracy ?? 0) - 5) < 1e-9)
    }

    @Test func gstWinsWhenItDescribesTheSameEpoch() throws {
        var assembler = LocationAssembler()
        assembler.note(.gst(GST(device: "/dev/ttyACM0", time: time, latitudeError: 3, longitudeError: 4, altitudeError: 6)))
        let location = try #require(assembler.location(for: fix()))
        #expect(location.horizontalAccuracySource == .gst)
        #expect(location.horizontalAccuracy == 5)
        #expect(location.verticalAccuracy == 6)
    }

    @Test func anOldGSTIsNotUsed() throws {
        var assembler = LocationAssembler()
        let old = UTCTime(seconds: time.seconds - 10)
        assembler.note(.gst(GST(device: "/dev/ttyACM0", time: old, latitudeError: 3, longitudeError: 4)))
        let location = try #require(assembler.location(for: fix()))
        #expect(location.horizontalAccuracySource == .gpsdEstimate)
    }

    @Test func ubloxBinaryAccuracyIsTakenAsIs() throws {
        var assembler = LocationAssembler()
        assembler.note(.device(DeviceInfo(path: "/dev/ttyACM0", driver: "u-blox", activated: time)))
        let location = try #require(assembler.location(for: fix(eph: 2.5, epv: 4)))
        #expect(location.horizontalAccuracySource == .receiver)
        #expect(location.horizontalAccuracy == 2.5)
        #expect(location.verticalAccuracy == 4)
    }

    @Test func skyGivesSatellitesAndHDOP() throws {
        var assembler = LocationAssembler()
        assembler.note(.sky(SkyView(device: "/dev/ttyACM0", hdop: 0.9, satellites: [
            Satellite(prn: 1, elevation: 10, azimuth: 20, signalStrength: 30, used: true),
            Satellite(prn: 2, elevation: 10, azimuth: 20, signalStrength: 30, used: false),
        ])))
        let location = try #require(assembler.location(for: fix()))
        #expect(location.satellitesUsed == 1)
        #expect(location.hdop == 0.9)
    }

    @Test func noPositionOrNoTimeIsNoLocation() {
        let assembler = LocationAssembler()
        #expect(assembler.location(for: fix(mode: .noFix)) == nil)
        var timeless = fix()
        timeless.time = nil
        #expect(assembler.location(for: timeless) == nil)
        var outOfRange = fix()
        outOfRange.latitude = 91
        #expect(assembler.location(for: outOfRange) == nil)
    }

    @Test func twoDimensionalFixHasNoAltitude() throws {
        let location = try #require(LocationAssembler().location(for: fix(mode: .twoD)))
        #expect(location.altitude == nil)
        #expect(location.verticalAccuracy == nil)
        #expect(location.fixMode == .twoD)
    }
}

@Suite struct GeodesyTests {
    @Test func oneDegreeOfLatitudeIsAbout111Kilometres() {
        let metres = Geodesy.distance(latitude1: 0, longitude1: 0, latitude2: 1, longitude2: 0)
        #expect(abs(metres - 111_195) < 5)
    }

    @Test func samePointIsZero() {
        #expect(Geodesy.distance(latitude1: 48.1, longitude1: 11.5, latitude2: 48.1, longitude2: 11.5) == 0)
    }
}
