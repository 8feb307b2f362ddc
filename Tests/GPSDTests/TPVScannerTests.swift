import GPSModel
import TestSupport
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
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"xdevice":"no","lat":1.5,"lon":2,"lat":3}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"not a time","lat":1.5"#,
    ]

    /// A `time` that is not a real receiver time (libgps gives 1899-12-31 for text it cannot parse, the
    /// epoch or earlier for others) is no time at all, both ways: such a fix carries no receiver time, so it
    /// never becomes a location stamped 1899 or 1970.
    @Test(arguments: [
        "not a time", "1899-12-31T00:00:00.000Z", "1970-01-01T00:00:00.000Z", "1979-12-31T23:59:59.000Z",
        "2017-13-45T99:99:99.000Z", "", "2200-01-01T00:00:00.000Z",
    ])
    func invalidTimesAreNoTime(time: String) {
        let line = #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":""# + time + #"","lat":1.5,"lon":2}"#
        let (scanned, libgps) = bothWays([line])
        for report in scanned + libgps {
            guard case .fix(let fix)? = report else {
                Issue.record("not a fix: \(String(describing: report))")
                continue
            }
            #expect(fix.time == nil, "\(time) gave \(String(describing: fix.time))")
            #expect(LocationAssembler().location(for: fix) == nil)
        }
        let valid = bothWays([#"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"1980-01-06T00:00:00.000Z","lat":1.5,"lon":2}"#])
        for report in valid.scanned + valid.libgps {
            guard case .fix(let fix)? = report else { continue }
            #expect(fix.time?.iso8601 == "1980-01-06T00:00:00.000Z")
        }
    }

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

    /// Valid JSON in any spacing is read as it says, both ways: libgps's own parser gives up on `"key": 1`
    /// and keeps the previous fix, so the decoder compacts such a line before handing it to libgps.
    @Test func spacedJSONIsReadAsItSays() {
        let pythonStyle = #"{"class": "TPV", "device": "/dev/pts/1", "mode": 3, "time": "2024-05-01T12:00:03.250Z", "lat": 1.5, "lon": 2, "eph": 3.5}"#
        let (scanned, libgps) = bothWays([Self.recorded[2], pythonStyle])
        #expect(scanned == libgps)
        guard case .fix(let fix)? = scanned[1] else {
            Issue.record("not a fix: \(String(describing: scanned[1]))")
            return
        }
        #expect(fix.latitude == 1.5 && fix.longitude == 2 && fix.eph == 3.5)
        #expect(fix.time?.iso8601 == "2024-05-01T12:00:03.250Z")

        let spacedAround = #"{ "class" : "TPV" , "device" : "/dev/pts/1" , "mode" : 3 , "lat" : 1.5 , "lon" : 2 }"#
        let aroundBothWays = bothWays([Self.recorded[2], spacedAround])
        #expect(aroundBothWays.scanned == aroundBothWays.libgps)
        let scannedAround = aroundBothWays.scanned
        guard case .fix(let around)? = scannedAround[1] else {
            Issue.record("not a fix: \(String(describing: scannedAround[1]))")
            return
        }
        #expect(around.device == "/dev/pts/1" && around.mode == .threeD)
        #expect(around.latitude == 1.5 && around.longitude == 2 && around.time == nil && around.eph == nil)
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
            // In pieces: Swift 6.0's type checker gives up on the whole sum in one expression.
            let time = (seconds < 10 ? "0" : "") + "\(seconds)." + String(String(1000 + fraction).dropFirst())
            let position = #""lat":"# + fixed(latitude, 9) + #","lon":"# + fixed(longitude, 9)
            let motion = #""altMSL":"# + fixed(altitude, 4) + #","speed":"# + fixed(speed, 3)
            lines.append(
                #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-30T03:22:"# + time + #"Z","#
                    + position + "," + motion + #","eph":"# + "\(speed / 7)" + "}")
        }
        let (scanned, libgps) = bothWays(lines)
        #expect(scanned == libgps)
    }

    /// Other classes spaced as Python writes JSON decode as gpsd's compact lines do (libgps reads them compacted).
    @Test func spacedOtherClassesDecodeAsCompactOnes() {
        let lines = [
            #"{"class":"GST","device":"/dev/pts/0","time":"2024-05-01T12:00:03.000Z","rms":2.500,"major":3.100,"minor":2.200,"orient":45.000,"lat":2.800,"lon":2.600,"alt":4.100}"#,
            #"{"class":"DEVICE","path":"/dev/pts/1","driver":"u-blox","subtype":"SW ROM CORE 3.01 (107888)","activated":"2017-03-31T11:01:24.000Z"}"#,
            #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
        ]
        let compact = bothWays(lines).libgps
        #expect(compact.allSatisfy { $0 != nil })
        // Each after a compact TPV, so a line libgps gave up on would show the TPV's values.
        let spacedLines = lines.flatMap { [Self.recorded[2], spacedJSON($0)] }
        let decoded = bothWays(spacedLines)
        #expect(decoded.libgps.enumerated().filter { $0.offset % 2 == 1 }.map(\.element) == compact)
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
