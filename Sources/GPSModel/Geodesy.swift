#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Distances on the WGS-84 mean sphere. Haversine is accurate to about 0.5 % (ellipsoid flattening), plenty
/// for distance filters and stationary radii of metres to kilometres.
public enum Geodesy {
    /// IUGG mean Earth radius, metres.
    public static let meanEarthRadius = 6_371_008.8

    /// Great-circle distance in metres between two coordinates in degrees.
    public static func distance(
        latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double
    ) -> Double {
        let phi1 = latitude1 * .pi / 180
        let phi2 = latitude2 * .pi / 180
        let deltaPhi = (latitude2 - latitude1) * .pi / 180
        let deltaLambda = (longitude2 - longitude1) * .pi / 180
        let a = sin(deltaPhi / 2) * sin(deltaPhi / 2)
            + cos(phi1) * cos(phi2) * sin(deltaLambda / 2) * sin(deltaLambda / 2)
        return 2 * meanEarthRadius * atan2(a.squareRoot(), (1 - a).squareRoot())
    }

    public static func distance(from a: Location, to b: Location) -> Double {
        distance(latitude1: a.latitude, longitude1: a.longitude, latitude2: b.latitude, longitude2: b.longitude)
    }

    /// Metres north and east of `origin` on a local plane: exact enough over a few hundred metres.
    public static func offset(of location: Location, from origin: Location) -> (north: Double, east: Double) {
        let metresPerDegree = meanEarthRadius * .pi / 180
        let north = (location.latitude - origin.latitude) * metresPerDegree
        let east = (location.longitude - origin.longitude) * metresPerDegree * cos(origin.latitude * .pi / 180)
        return (north, east)
    }

    /// The coordinate `north` and `east` metres from `origin` on the same local plane as `offset`.
    public static func coordinate(
        north: Double, east: Double, from origin: Location
    ) -> (latitude: Double, longitude: Double) {
        let metresPerDegree = meanEarthRadius * .pi / 180
        let latitude = origin.latitude + north / metresPerDegree
        let longitude = origin.longitude + east / (metresPerDegree * max(cos(origin.latitude * .pi / 180), 1e-6))
        return (latitude, longitude)
    }
}
