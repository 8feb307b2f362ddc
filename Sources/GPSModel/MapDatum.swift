#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The datum a location's latitude and longitude are given in. Everything inside Lodestar (the policy, the
/// store, the filters) works in WGS-84; GCJ-02 is only ever produced for an output or an upload.
public enum CoordinateSystem: String, Sendable, Equatable, CaseIterable {
    /// What GPS receivers report, and what every map outside mainland China uses.
    case wgs84
    /// China's obfuscated datum ("Mars coordinates"), which maps published in mainland China (Amap/Gaode,
    /// Tencent, Apple Maps there) expect: a WGS-84 position shown on them without conversion lands 100 to
    /// 700 m off.
    case gcj02
}

/// The published WGS-84 → GCJ-02 forward transform, applied only inside mainland China.
///
/// The formula is the one circulated since about 2010 and used by every open implementation (eviltransform,
/// coordtransform, gcoord and the like): a pair of polynomial-plus-sine offsets in metres, turned into degrees on
/// the Krasovsky 1940 ellipsoid. It reproduces those projects' reference values to a millimetre; conversions
/// done by online map services differ from it by up to about 0.7 m (see docs/upload.md, "Map datum: GCJ-02").
/// There is no exact inverse, and Lodestar needs none: it never reads GCJ-02.
public enum GCJ02 {
    /// Krasovsky 1940: the semi-major axis in metres and the first eccentricity squared the formula uses.
    static let semiMajorAxis = 6_378_245.0
    static let eccentricitySquared = 0.00669342162296594323

    /// Whether a WGS-84 point is in mainland China, where GCJ-02 applies (not Hong Kong, Macau, Taiwan, nor
    /// neighbouring countries).
    public static func isInMainlandChina(latitude: Double, longitude: Double) -> Bool {
        guard latitude.isFinite, longitude.isFinite,
            contains(mainlandBorder, latitude: latitude, longitude: longitude)
        else { return false }
        return !excluded.contains { contains($0, latitude: latitude, longitude: longitude) }
    }

    /// The GCJ-02 coordinates of a WGS-84 point; the point unchanged outside mainland China.
    public static func fromWGS84(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        guard isInMainlandChina(latitude: latitude, longitude: longitude) else { return (latitude, longitude) }
        let x = longitude - 105
        let y = latitude - 35
        let northMetres = offsetNorth(x: x, y: y)
        let eastMetres = offsetEast(x: x, y: y)
        let phi = latitude * .pi / 180
        let sinPhi = sin(phi)
        let w = 1 - eccentricitySquared * sinPhi * sinPhi
        let sqrtW = w.squareRoot()
        // Radii of curvature of the ellipsoid: meridian M = a(1-e²)/W³, prime vertical N = a/W.
        let meridianRadius = semiMajorAxis * (1 - eccentricitySquared) / (w * sqrtW)
        let primeVerticalRadius = semiMajorAxis / sqrtW
        return (
            latitude + northMetres * 180 / (meridianRadius * .pi),
            longitude + eastMetres * 180 / (primeVerticalRadius * cos(phi) * .pi)
        )
    }

    /// The formula's northward offset in metres ("transformLat"), of degrees from 105 E, 35 N.
    static func offsetNorth(x: Double, y: Double) -> Double {
        var offset = -100 + 2 * x + 3 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * abs(x).squareRoot()
        offset += (20 * sin(6 * x * .pi) + 20 * sin(2 * x * .pi)) * 2 / 3
        offset += (20 * sin(y * .pi) + 40 * sin(y / 3 * .pi)) * 2 / 3
        offset += (160 * sin(y / 12 * .pi) + 320 * sin(y * .pi / 30)) * 2 / 3
        return offset
    }

    /// The formula's eastward offset in metres ("transformLon").
    static func offsetEast(x: Double, y: Double) -> Double {
        var offset = 300 + x + 2 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * abs(x).squareRoot()
        offset += (20 * sin(6 * x * .pi) + 20 * sin(2 * x * .pi)) * 2 / 3
        offset += (20 * sin(x * .pi) + 40 * sin(x / 3 * .pi)) * 2 / 3
        offset += (150 * sin(x / 12 * .pi) + 300 * sin(x / 30 * .pi)) * 2 / 3
        return offset
    }

    /// A ring of (latitude, longitude) vertices in degrees; the last joins the first.
    typealias Ring = [(latitude: Double, longitude: Double)]

    /// Even-odd ray casting in the latitude/longitude plane: fine for rings a few degrees across or more,
    /// none of which crosses the antimeridian or a pole.
    static func contains(_ ring: Ring, latitude: Double, longitude: Double) -> Bool {
        var inside = false
        var previous = ring[ring.count - 1]
        for vertex in ring {
            if (vertex.latitude > latitude) != (previous.latitude > latitude) {
                let crossing = vertex.longitude + (latitude - vertex.latitude) / (previous.latitude - vertex.latitude)
                    * (previous.longitude - vertex.longitude)
                if longitude < crossing { inside.toggle() }
            }
            previous = vertex
        }
        return inside
    }

    /// Mainland China's land border and coast, counter-clockwise from the mouth of the Yalu, traced by hand for
    /// Lodestar from the borders as administered (the Yalu and Tumen, the Ussuri and Amur, the Argun, the
    /// Mongolian, Central Asian and Himalayan borders, the lines of actual control, Myanmar, Laos and
    /// Vietnam), then the coast a few kilometres to a few tens of kilometres out to the sea, with Hainan and
    /// the Paracel Islands (Sansha). Coarse, to tenths of a degree: towns facing each other across a border
    /// river (Dandong and Sinuiju, Heihe and Blagoveshchensk, Dongxing and Mong Cai, Erenhot and Zamyn-Uud,
    /// Manzhouli and Zabaykalsk) can fall on the Chinese side, which only shifts a point on foreign soil by
    /// the GCJ-02 offset. Checked, when it was traced, against every city of the gcoord project's test list of
    /// Chinese cities (hujiulong/gcoord, test/fixtures/china-cities.json: 332 prefecture-level cities, all
    /// inside) and against the capitals and border towns around China (outside); Tests/GPSModelTests holds a
    /// sample of both.
    static let mainlandBorder: Ring = [
        (39.8, 124.1), (40.45, 124.95), (41.15, 126.3), (41.85, 127.05), (41.45, 128.25), (42.0, 128.1),
        (42.1, 129.3), (43.0, 129.95), (42.4, 130.55), (42.45, 130.75), (43.4, 131.3), (44.4, 131.3),
        (45.0, 131.85), (45.3, 133.1), (46.6, 134.0), (47.7, 134.75), (48.45, 134.7), (48.4, 134.0),
        (47.7, 132.5), (47.9, 131.0), (48.9, 130.5), (49.6, 128.6), (50.25, 127.55), (51.7, 126.75),
        (52.8, 125.8), (53.6, 123.4), (53.4, 121.3), (51.5, 119.8), (50.3, 119.3), (49.9, 117.8),
        (49.85, 116.7), (47.85, 115.7), (47.7, 118.6), (47.8, 119.8), (46.7, 120.0), (46.4, 117.4),
        (45.4, 114.5), (44.8, 113.5), (43.7, 111.8), (42.55, 110.3), (42.3, 107.5), (41.55, 105.0),
        (42.7, 101.0), (42.55, 96.5), (44.5, 93.5), (45.0, 91.0), (47.5, 90.4), (48.1, 89.6),
        (49.1, 87.8), (49.2, 87.3), (48.5, 85.6), (47.0, 85.5), (46.8, 82.8), (45.2, 82.4),
        (44.9, 80.1), (44.2, 80.3), (43.0, 80.4), (42.2, 80.2), (41.5, 78.5), (40.9, 77.2),
        (40.5, 75.4), (39.8, 73.7), (39.3, 73.6), (38.5, 74.8), (37.2, 74.8), (36.8, 75.4),
        (35.8, 76.8), (35.5, 77.8), (34.4, 78.7), (33.0, 79.3), (32.3, 79.4), (31.0, 79.0),
        (30.3, 81.1), (29.8, 82.4), (29.2, 83.6), (28.7, 84.6), (28.2, 85.3), (27.9, 86.1),
        (27.9, 88.0), (27.25, 88.85), (27.9, 89.3), (28.2, 90.4), (27.85, 91.65), (28.2, 92.6),
        (28.6, 93.5), (29.0, 95.3), (29.15, 96.2), (28.2, 97.3), (28.5, 98.0), (27.5, 98.7),
        (25.9, 98.6), (25.0, 97.6), (24.0, 97.45), (23.9, 97.95), (23.1, 98.9), (21.8, 99.2),
        (21.1, 101.2), (21.5, 101.8), (22.4, 102.1), (22.8, 102.5), (22.45, 103.95), (23.2, 104.5),
        (22.95, 105.4), (22.9, 106.6), (22.0, 106.75), (21.48, 108.0), (20.7, 108.3), (18.0, 108.4),
        (15.7, 111.0), (15.7, 113.0), (18.5, 111.6), (21.0, 112.0), (21.7, 113.0), (21.9, 114.4),
        (22.5, 115.8), (23.2, 117.2), (23.5, 117.6), (24.3, 118.6), (24.95, 119.3), (25.4, 119.95),
        (26.4, 120.6), (27.0, 120.9), (28.0, 121.8), (29.0, 122.4), (30.5, 123.0), (31.6, 122.3),
        (32.5, 121.6), (34.4, 120.0), (35.9, 120.8), (36.9, 122.8), (37.6, 122.8), (38.3, 120.9),
        (38.7, 121.15), (39.0, 123.3),
    ]

    /// Hong Kong: its land border along the Shenzhen River and its waters from Deep Bay round Lantau to
    /// Mirs Bay, kept west of Shenzhen's Dapeng peninsula.
    static let hongKong: Ring = [
        (22.47, 113.9), (22.5, 113.96), (22.515, 114.03), (22.53, 114.08), (22.545, 114.13), (22.56, 114.22),
        (22.57, 114.3), (22.56, 114.44), (22.14, 114.44), (22.14, 113.83), (22.3, 113.82), (22.42, 113.88),
    ]

    /// Macau: the peninsula south of the Gongbei border, Taipa, Cotai and Coloane, east of Hengqin (Zhuhai).
    static let macau: Ring = [
        (22.217, 113.528), (22.217, 113.556), (22.19, 113.565), (22.16, 113.6), (22.105, 113.6), (22.105, 113.553),
        (22.15, 113.548), (22.175, 113.53),
    ]

    /// Taiwan and Penghu (and Orchid and Green Islands), kept east of the mainland's Pingtan and Nanri islands.
    static let taiwan: Ring = [
        (21.7, 119.2), (21.7, 122.2), (25.8, 122.2), (25.45, 121.2), (24.6, 120.3), (23.9, 119.2),
    ]

    /// Kinmen (Greater and Lesser), governed from Taiwan, a few kilometres off Xiamen.
    static let kinmen: Ring = [
        (24.38, 118.215), (24.53, 118.215), (24.53, 118.5), (24.38, 118.5),
    ]

    /// The Matsu Islands (Nangan, Beigan, Juguang, Dongyin), governed from Taiwan, off Fuzhou's coast.
    static let matsu: Ring = [
        (25.93, 119.85), (26.3, 119.85), (26.3, 120.05), (26.42, 120.42), (26.42, 120.55), (26.32, 120.55),
        (25.93, 120.05),
    ]

    /// Inside the mainland ring but not mainland China.
    static let excluded: [Ring] = [hongKong, macau, taiwan, kinmen, matsu]
}

extension Location {
    /// This location with its latitude and longitude in `system` (assumed to be WGS-84 now, as every location
    /// Lodestar produces is); everything else unchanged.
    public func converted(to system: CoordinateSystem) -> Location {
        switch system {
        case .wgs84:
            return self
        case .gcj02:
            var converted = self
            (converted.latitude, converted.longitude) = GCJ02.fromWGS84(latitude: latitude, longitude: longitude)
            return converted
        }
    }
}
