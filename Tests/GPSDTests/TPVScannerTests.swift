import GPSModel
import Testing

@testable import GPSD

/// The one-pass TPV reader must give exactly what libgps's `gps_unpack` gives, line after line through one
/// `gps_data_t` (as a live session decodes), including the lines it leaves to libgps.
@Suite struct TPVScannerTests {
    /// Decodes `lines` in order with the scanner on, and again with libgps only.
    func bothWays(_ lines: [String]) -> (scanned: [Report?], libgps: [Report?]) {
        let scanning = GPSDataUnpacker()
        let libgps = GPSDataUnpacker()
        libgps.scansTPV = false
        func decode(_ line: String, _ unpacker: GPSDataUnpacker) -> Report? {
            Array(line.utf8CString).withUnsafeBufferPointer { unpacker.unpack(UnsafeBufferPointer(rebasing: $0.dropLast())) }
        }
        return (lines.map { decode($0, scanning) }, lines.map { decode($0, libgps) })
    }

    static let recorded = [
        #"{"class":"TPV","device":"/dev/pts/0","mode":3,"time":"2025-05-11T23:52:34.000Z","ept":0.005,"lat":39.432836667,"lon":-119.765590000,"altHAE":1356.5000,"altMSL":1378.6000,"alt":1378.6000,"epx":8.127,"epy":9.197,"epv":29.900,"track":153.1000,"magtrack":168.3000,"magvar":15.2,"speed":23.201,"geoidSep":-22.100,"eph":15.200,"sep":28.500}"#,
        #"{"class":"TPV","device":"/dev/pts/0","mode":3,"time":"2025-05-11T23:52:36.000Z","ept":0.005,"lat":39.432465000,"lon":-119.765351667,"altHAE":1355.9000,"altMSL":1378.0000,"alt":1378.0000,"epx":8.127,"epy":9.197,"epv":29.900,"track":153.6000,"magtrack":168.8000,"magvar":15.2,"speed":22.996,"climb":-0.300,"epd":22.5725,"eps":9.20,"epc":18.38,"geoidSep":-22.100,"eph":15.200,"sep":28.500}"#,
        #"{"class":"TPV","device":"/dev/pts/1","status":2,"mode":3,"time":"2017-03-31T11:01:24.000Z","ept":0.005,"lat":55.088849833,"lon":38.976455417,"altHAE":2191.0000,"altMSL":2177.0000,"alt":2177.0000,"epx":2.738,"epy":2.021,"epv":4.600,"track":86.2000,"magtrack":95.1000,"magvar":8.9,"speed":78.504,"geoidSep":12.427,"eph":4.275,"sep":8.550}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":1,"time":"2017-03-31T11:01:25.000Z"}"#,
        #"{"class":"TPV","device":"/dev/pts/1","status":2,"mode":1}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":0}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"lat":-37.784788333,"lon":175.314896667,"altHAE":83.6000,"altMSL":59.9000,"alt":59.9000,"magvar":20.5,"geoidSep":23.700,"eph":20.900}"#,
        #"{"class":"TPV","device":"/dev/ttyUSB0","mode":2,"time":"2024-05-01T12:00:03.250Z","ept":0.005,"lat":52.1,"lon":4.9,"track":90.0,"speed":5.0,"eph":17.1}"#,
        #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-30T03:22:01.123456789Z","lat":1,"lon":-2,"altMSL":-0.0,"climb":1e-3}"#,
        #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-30T03:22:01.5Z","lat":5.25E+1,"lon":.5,"speed":0}"#,
    ]

    /// Lines the scanner leaves to libgps: no device (libgps keeps the last one), escapes, a quoted number,
    /// a nested value, an over-long device path, numbers libgps reads its own way.
    static let unusual = [
        #"{"class":"TPV","mode":3,"time":"2024-05-01T12:00:03.250Z","lat":1,"lon":2}"#,
        #"{"class":"TPV","device":"/dev/tty\u0055SB0","mode":3,"time":"2024-05-01T12:00:03.250Z","lat":1,"lon":2}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2024-05-01T12:00:03.250Z","lat":"1.5","lon":2}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"ecef":[1,2],"lat":1.5,"lon":2}"#,
        #"{"class":"TPV","device":"/dev/"# + String(repeating: "x", count: 130) + #"","mode":3,"lat":1.5,"lon":2}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"lat":1.5x,"lon":nan,"speed":null}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":"3","time":1490958084.0,"lat":1.5,"lon":2}"#,
        #"{ "class" : "TPV" , "device" : "/dev/pts/1" , "mode" : 3 , "lat" : 1.5 , "lon" : 2 }"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"xdevice":"no","lat":1.5,"lon":2,"lat":3}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"not a time","lat":1.5"#,
    ]

    @Test func recordedLinesDecodeAsLibgpsDecodesThem() {
        let (scanned, libgps) = bothWays(Self.recorded)
        #expect(scanned == libgps)
        #expect(scanned.allSatisfy { if case .fix? = $0 { true } else { false } })
    }

    @Test func unusualLinesDecodeAsLibgpsDecodesThem() {
        // Each after a complete fix, so what libgps keeps from earlier lines shows.
        let lines = Self.unusual.flatMap { [Self.recorded[2], $0] }
        let (scanned, libgps) = bothWays(lines)
        for (index, line) in lines.enumerated() {
            #expect(scanned[index] == libgps[index], "\(line)")
        }
    }

    @Test func numbersAndTimesAsGPSDWritesThemDecodeAsLibgpsDecodesThem() {
        var generator = SystemRandomNumberGenerator()
        var lines: [String] = []
        for _ in 0..<2000 {
            let latitude = Double.random(in: -90...90, using: &generator)
            let longitude = Double.random(in: -180...180, using: &generator)
            let altitude = Double.random(in: -500...9000, using: &generator)
            let speed = Double.random(in: 0...400, using: &generator)
            let seconds = Int.random(in: 0...59, using: &generator)
            let fraction = Int.random(in: 0...999, using: &generator)
            lines.append(
                #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-30T03:22:"#
                    + (seconds < 10 ? "0" : "") + "\(seconds)." + String(1000 + fraction).dropFirst() + #"Z","lat":"#
                    + fixed(latitude, 9) + #","lon":"# + fixed(longitude, 9) + #","altMSL":"# + fixed(altitude, 4)
                    + #","speed":"# + fixed(speed, 3) + #","eph":"# + "\(speed / 7)" + "}")
        }
        let (scanned, libgps) = bothWays(lines)
        #expect(scanned == libgps)
    }

    @Test func otherClassesStillGoThroughLibgps() {
        let (scanned, libgps) = bothWays([
            #"{"class":"SKY","device":"/dev/pts/1","hdop":0.8,"satellites":[{"PRN":4,"el":16.0,"az":162.0,"ss":46.0,"used":true}]}"#,
            #"{"class":"DEVICE","path":"/dev/pts/1","driver":"NMEA0183","activated":"2017-03-31T11:01:24.000Z"}"#,
        ])
        #expect(scanned == libgps)
    }
}

/// `value` with `decimals` decimals, as gpsd's printf writes it.
private func fixed(_ value: Double, _ decimals: Int) -> String {
    let scale = (0..<decimals).reduce(1.0) { product, _ in product * 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let part = Int(scaled - Double(whole) * scale)
    let digits = String(part)
    return (value < 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: decimals - digits.count) + digits
}

/// SKY counts read in one walk before the satellite list must equal what the key-by-key search reads.
@Suite struct SkyCountsTests {
    static let lines = [
        #"{"class":"SKY","device":"/dev/pts/0","xdop":0.54,"ydop":0.61,"vdop":1.30,"tdop":0.74,"hdop":0.80,"gdop":1.68,"pdop":1.50,"nSat":12,"uSat":10,"satellites":[{"PRN":4,"el":16.0,"az":162.0,"ss":46.0,"used":true,"gnssid":0,"svid":4},{"PRN":7,"el":84.0,"az":207.0,"ss":48.0,"used":true,"gnssid":0,"svid":7}]}"#,
        #"{"class":"SKY","device":"/dev/ttyACM0","vdop":9.9,"hdop":1e1,"pdop":-0,"nSat":0,"uSat":0}"#,
    ]
    /// Lines the walk leaves to the key-by-key search: a count missing before the list, spaces, no device.
    static let leftToSearch = [
        #"{"class":"SKY","device":"/dev/pts/0","hdop":0.80,"pdop":1.50,"nSat":12,"satellites":[{"PRN":4}],"uSat":10,"vdop":1.3}"#,
        #"{"class":"SKY","device":"/dev/pts/0","hdop" : 0.80,"vdop":1.3,"pdop":1.50,"nSat":12,"uSat":10}"#,
        #"{"class":"SKY","hdop":0.80,"vdop":1.3,"pdop":1.50,"nSat":12,"uSat":10}"#,
        #"{"class":"SKY","device":"/dev/pts/0","hdop":0.80,"vdop":1.3,"pdop":1.50,"nSat":"12","uSat":10}"#,
    ]

    func withLine<T>(_ line: String, _ body: (UnsafeBufferPointer<CChar>) -> T) -> T {
        Array(line.utf8CString).withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0.dropLast())) }
    }

    @Test func countsBeforeTheListAreReadAsTheSearchReadsThem() {
        for line in Self.lines {
            let walked = withLine(line) { ReportLineProcessor.skyCounts(in: $0) }
            let searched = withLine(line) { ReportLineProcessor.skyCountsByKey(in: $0) }
            #expect(walked != nil, "\(line)")
            #expect(walked == searched, "\(line)")
        }
    }

    @Test func unusualLinesAreLeftToTheSearch() {
        for line in Self.leftToSearch {
            #expect(withLine(line) { ReportLineProcessor.skyCounts(in: $0) } == nil, "\(line)")
        }
    }
}
