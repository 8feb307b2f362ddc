import Testing

@testable import GPSModel

/// A published WGS-84 → GCJ-02 pair.
struct DatumReference: Sendable, CustomTestStringConvertible {
    var place: String
    var wgs84: (latitude: Double, longitude: Double)
    var gcj02: (latitude: Double, longitude: Double)
    var testDescription: String { place }
}

@Suite struct MapDatumTests {
    /// Values published by open implementations of the same formula (their tests and examples), and one
    /// conversion by Amap's (Gaode's) online service. Each is held to 0.5 m.
    static let references: [DatumReference] = [
        // googollee/eviltransform, go/transform_test.go (the same three in c/test.c and javascript/test.js).
        DatumReference(
            place: "Shanghai (eviltransform)", wgs84: (31.1774276, 121.5272106),
            gcj02: (31.17530398364597, 121.531541859215)),
        DatumReference(
            place: "Shenzhen (eviltransform)", wgs84: (22.543847, 113.912316),
            gcj02: (22.540796131694766, 113.9171764808363)),
        DatumReference(
            place: "Beijing (eviltransform)", wgs84: (39.911954, 116.377817),
            gcj02: (39.91334545536069, 116.38404722455657)),
        // wandergis/coordtransform, test/app.js (given there as longitude, latitude).
        DatumReference(
            place: "Beijing (coordtransform)", wgs84: (39.915, 116.404),
            gcj02: (39.91640428150164, 116.41024449916938)),
        // hujiulong/gcoord, test/unit/crs/WGS84.spec.ts ("WGS84 to GCJ02", longitude, latitude): Jilin.
        DatumReference(
            place: "Jilin (gcoord)", wgs84: (45, 123), gcj02: (45.00197815, 123.00607541)),
        // madlogos/asesgeo, tests/testthat/test_tranform_coord.R ("wgs 2 gcj").
        DatumReference(
            place: "Tiananmen (asesgeo)", wgs84: (39.90734, 116.39089), gcj02: (39.90874107, 116.39713094)),
        // madlogos/asesgeo, tests/testthat/test_conv_coord.R ("convCoord without api").
        DatumReference(
            place: "Beijing station (asesgeo)", wgs84: (39.90105589, 116.42079784),
            gcj02: (39.90245219, 116.42702991)),
        // madlogos/asesgeo, tests/testthat/test_conv_coord.R ("convCoord with gaode api"): Amap's own service.
        DatumReference(
            place: "Beijing station (Amap service, via asesgeo)", wgs84: (39.90105, 116.42079),
            gcj02: (39.902445203994, 116.427020941841)),
    ]

    /// From hujiulong/gcoord, test/fixtures/china-cities.json (given there as longitude, latitude): city centres
    /// far from Beijing and Shanghai, where the polynomial's terms in x = longitude - 105 are large. That list's
    /// GCJ-02 values come from a map service, not from the formula: every one of its 332 cities differs from
    /// the published formula by 0.64 to 0.73 m (measured when these were chosen), so they are held to 0.75 m.
    static let cities: [DatumReference] = [
        DatumReference(place: "Kashgar", wgs84: (39.470184, 75.9868089), gcj02: (39.4704064, 75.9897602)),
        DatumReference(place: "Artux, Kizilsu", wgs84: (39.7141079, 76.1647682), gcj02: (39.7145315, 76.1678223)),
        DatumReference(place: "Urumqi", wgs84: (43.824388, 87.6140048), gcj02: (43.8255962, 87.6168579)),
        DatumReference(place: "Altay", wgs84: (47.8436168, 88.1378895), gcj02: (47.8449292, 88.1412573)),
        DatumReference(place: "Lhasa", wgs84: (29.655277, 91.1706414), gcj02: (29.6524954, 91.1721167)),
        DatumReference(place: "Nagqu", wgs84: (31.4784436, 92.0499619), gcj02: (31.4762063, 92.0512438)),
        DatumReference(place: "Jiuquan", wgs84: (39.7319946, 98.4937175), gcj02: (39.7328234, 98.4943595)),
        DatumReference(place: "Chuxiong", wgs84: (25.048566, 101.5265949), gcj02: (25.0455363, 101.5280737)),
        DatumReference(place: "Qinzhou", wgs84: (21.9828281, 108.6503952), gcj02: (21.9799392, 108.6541485)),
        DatumReference(place: "Sanya", wgs84: (18.2545417, 109.507813), gcj02: (18.2528524, 109.5119135)),
        DatumReference(place: "Sansha", wgs84: (16.8334801, 112.3337959), gcj02: (16.8318454, 112.3387036)),
        DatumReference(place: "Xilinhot", wgs84: (43.9312805, 116.0414035), gcj02: (43.9334573, 116.0482308)),
        DatumReference(place: "Shenyang", wgs84: (41.8032629, 123.4253306), gcj02: (41.8057023, 123.4314787)),
        DatumReference(place: "Qiqihar", wgs84: (47.3523122, 123.9116361), gcj02: (47.3543511, 123.9181885)),
        DatumReference(place: "Jiagedaqi, Da Hinggan Ling", wgs84: (52.3338635, 124.7038236), gcj02: (52.3352664, 124.7115324)),
        DatumReference(place: "Heihe", wgs84: (50.2434852, 127.5209846), gcj02: (50.2451332, 127.528304)),
    ]

    static func error(_ reference: DatumReference) -> Double {
        let converted = GCJ02.fromWGS84(latitude: reference.wgs84.latitude, longitude: reference.wgs84.longitude)
        return Geodesy.distance(
            latitude1: converted.latitude, longitude1: converted.longitude,
            latitude2: reference.gcj02.latitude, longitude2: reference.gcj02.longitude)
    }

    @Test(arguments: references)
    func matchesPublishedConversions(_ reference: DatumReference) {
        let metres = Self.error(reference)
        #expect(metres <= 0.5, "\(reference.place): \(metres) m from the published GCJ-02 value")
        // The offset itself is hundreds of metres, so a no-op would fail by far.
        let offset = Geodesy.distance(
            latitude1: reference.wgs84.latitude, longitude1: reference.wgs84.longitude,
            latitude2: reference.gcj02.latitude, longitude2: reference.gcj02.longitude)
        #expect(offset > 100)
    }

    @Test(arguments: cities)
    func matchesGcoordCityListAcrossChina(_ reference: DatumReference) {
        #expect(GCJ02.isInMainlandChina(latitude: reference.wgs84.latitude, longitude: reference.wgs84.longitude))
        let metres = Self.error(reference)
        #expect(metres <= 0.75, "\(reference.place): \(metres) m from the listed GCJ-02 value")
    }

    /// Places in mainland China next to a border or a hole of the polygon (town centres, to about a
    /// kilometre), which must still be converted.
    @Test(arguments: [
        ("Shenzhen, Nanshan", 22.5438, 113.9123), ("Shekou", 22.49, 113.92), ("Zhuhai, Gongbei", 22.225, 113.55),
        ("Hengqin", 22.13, 113.52), ("Nan'ao, Shenzhen", 22.53, 114.48), ("Xiamen", 24.48, 118.09),
        ("Pingtan", 25.50, 119.79), ("Huangqi, Lianjiang", 26.33, 119.88), ("Shengsi", 30.72, 122.45),
        ("Dandong", 40.13, 124.39), ("Ji'an", 41.12, 126.18), ("Hunchun", 42.87, 130.36),
        ("Suifenhe", 44.40, 131.15), ("Fuyuan", 48.36, 134.29), ("Heihe", 50.24, 127.49), ("Mohe", 52.97, 122.54),
        ("Manzhouli", 49.60, 117.43), ("Erenhot", 43.65, 111.98), ("Ejin", 41.96, 101.07), ("Altay", 47.84, 88.14),
        ("Tacheng", 46.75, 82.98), ("Khorgas", 44.21, 80.42), ("Tashkurgan", 37.77, 75.23),
        ("Shiquanhe", 32.50, 80.10), ("Burang", 30.29, 81.18), ("Zhangmu", 27.99, 85.98), ("Yadong", 27.48, 88.91),
        ("Cona", 27.99, 91.96), ("Medog", 29.33, 95.33), ("Zayu", 28.66, 97.47), ("Ruili", 24.01, 97.85),
        ("Mengla", 21.46, 101.56), ("Hekou", 22.51, 103.96), ("Pingxiang", 22.10, 106.76),
        ("Dongxing", 21.55, 107.97), ("Sanya", 18.25, 109.51),
    ])
    func convertsNearTheBorder(place: String, latitude: Double, longitude: Double) {
        #expect(GCJ02.isInMainlandChina(latitude: latitude, longitude: longitude), "\(place)")
        let converted = GCJ02.fromWGS84(latitude: latitude, longitude: longitude)
        #expect(converted.latitude != latitude || converted.longitude != longitude, "\(place)")
    }

    /// Outside mainland China, including places the usual 72-137.8 E, 0.8-55.8 N rectangle wrongly converts.
    @Test(arguments: [
        ("Hong Kong, Tsim Sha Tsui", 22.302, 114.177), ("Hong Kong, Lantau", 22.26, 113.94),
        ("Hong Kong, Tuen Mun", 22.39, 113.97), ("Hong Kong, Sheung Shui", 22.50, 114.13),
        ("Hong Kong, Sai Kung", 22.38, 114.27), ("Macau", 22.19, 113.54), ("Macau, Taipa", 22.155, 113.56),
        ("Macau, Coloane", 22.125, 113.56), ("Taipei", 25.03, 121.56), ("Kaohsiung", 22.62, 120.30),
        ("Penghu", 23.57, 119.58), ("Kinmen", 24.43, 118.32), ("Matsu, Nangan", 26.16, 119.93),
        ("Seoul", 37.57, 126.98), ("Pyongyang", 39.03, 125.75), ("Ulaanbaatar", 47.92, 106.92),
        ("Choibalsan", 48.07, 114.50), ("Hanoi", 21.03, 105.85), ("Haiphong", 20.86, 106.68),
        ("Lao Cai", 22.48, 103.98), ("Tokyo", 35.68, 139.69), ("Okinawa", 26.21, 127.68), ("Jeju", 33.50, 126.53),
        ("London", 51.51, -0.13), ("sea east of Shanghai", 31.0, 123.5), ("Vladivostok", 43.12, 131.89),
        ("Khabarovsk", 48.48, 135.07), ("Almaty", 43.24, 76.89), ("Bishkek", 42.87, 74.59),
        ("Kathmandu", 27.72, 85.32), ("New Delhi", 28.61, 77.21), ("Leh", 34.15, 77.58), ("Thimphu", 27.47, 89.64),
        ("Tawang", 27.59, 91.86), ("Myitkyina", 25.38, 97.40), ("Vientiane", 17.97, 102.63),
        ("Da Nang", 16.05, 108.20), ("Manila", 14.60, 120.98), ("Islamabad", 33.68, 73.05),
    ])
    func leavesOtherPlacesUnchanged(place: String, latitude: Double, longitude: Double) {
        #expect(!GCJ02.isInMainlandChina(latitude: latitude, longitude: longitude), "\(place)")
        let converted = GCJ02.fromWGS84(latitude: latitude, longitude: longitude)
        #expect(converted.latitude == latitude && converted.longitude == longitude, "\(place)")
    }

    @Test func notANumberIsNotInChina() {
        #expect(!GCJ02.isInMainlandChina(latitude: .nan, longitude: 116))
        #expect(!GCJ02.isInMainlandChina(latitude: 39.9, longitude: .infinity))
    }

    @Test func locationConversionChangesOnlyTheCoordinates() throws {
        let reference = try #require(Self.references.first)
        let location = Location(
            timestamp: UTCTime(seconds: 1_700_000_000), latitude: reference.wgs84.latitude,
            longitude: reference.wgs84.longitude, altitude: 12, horizontalAccuracy: 4, horizontalAccuracySource: .gst,
            speed: 3, course: 90, fixMode: .threeD, satellitesUsed: 9, hdop: 0.9, device: "/dev/ttyACM0")
        #expect(location.converted(to: .wgs84) == location)
        let converted = location.converted(to: .gcj02)
        #expect(abs(converted.latitude - reference.gcj02.latitude) < 1e-8)
        #expect(abs(converted.longitude - reference.gcj02.longitude) < 1e-8)
        var expected = converted
        expected.latitude = location.latitude
        expected.longitude = location.longitude
        #expect(expected == location)
    }

    @Test func coordinateSystemNamesAreStable() {
        #expect(CoordinateSystem.allCases.map(\.rawValue) == ["wgs84", "gcj02"])
        #expect(CoordinateSystem(rawValue: "gcj02") == .gcj02)
    }
}
