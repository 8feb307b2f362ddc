import GPSModel
import Testing

@testable import GPSD

/// Decoder tests on lines recorded from gpsd 3.22 (`gpspipe -w` and gpsfake runs of the repo's captures).
@Suite struct ReportDecoderTests {
    let decoder = ReportDecoder()

    func fix(_ line: String) throws -> Fix {
        try #require(try decoder.decode(line: line).fix, "not a fix: \(line)")
    }

    @Test func threeDimensionalFixWithTime() throws {
        let fix = try fix(
            #"{"class":"TPV","device":"/dev/pts/1","status":2,"mode":3,"time":"2017-03-31T11:01:24.000Z","ept":0.005,"lat":55.088849833,"lon":38.976455417,"altHAE":2191.0000,"altMSL":2177.0000,"alt":2177.0000,"epx":2.738,"epy":2.021,"epv":4.600,"track":86.2000,"magtrack":95.1000,"magvar":8.9,"speed":78.504,"geoidSep":12.427,"eph":4.275,"sep":8.550}"#
        )
        #expect(fix.mode == .threeD)
        #expect(fix.status == 2)
        #expect(fix.device == "/dev/pts/1")
        #expect(fix.time == UTCTime(seconds: 1_490_958_084))
        #expect(fix.time?.iso8601 == "2017-03-31T11:01:24.000Z")
        #expect(fix.latitude == 55.088849833)
        #expect(fix.longitude == 38.976455417)
        #expect(fix.altitudeMSL == 2177)
        #expect(fix.altitudeHAE == 2191)
        #expect(fix.epx == 2.738)
        #expect(fix.epy == 2.021)
        #expect(fix.eph == 4.275)
        #expect(fix.epv == 4.6)
        #expect(fix.track == 86.2)
        #expect(fix.speed == 78.504)
        #expect(fix.climb == nil)
        #expect(fix.eps == nil)
        #expect(fix.hasPosition)
    }

    @Test func fixWithoutTimeHasNilTime() throws {
        let fix = try fix(
            #"{"class":"TPV","device":"/dev/pts/1","mode":3,"lat":-37.784788333,"lon":175.314896667,"altHAE":83.6000,"altMSL":59.9000,"alt":59.9000,"magvar":20.5,"geoidSep":23.700,"eph":20.900}"#
        )
        #expect(fix.time == nil)
        #expect(fix.mode == .threeD)
        #expect(fix.latitude == -37.784788333)
        #expect(fix.epv == nil)
    }

    @Test func twoDimensionalFixHasNoAltitude() throws {
        let fix = try fix(
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":2,"time":"2024-05-01T12:00:03.000Z","ept":0.005,"lat":52.1,"lon":4.9,"track":90.0,"speed":5.0,"eph":17.1}"#
        )
        #expect(fix.mode == .twoD)
        #expect(fix.altitudeMSL == nil)
        #expect(fix.altitudeHAE == nil)
        #expect(fix.hasPosition)
    }

    @Test func noFixHasNoPositionAndNoNaN() throws {
        let fix = try fix(#"{"class":"TPV","device":"/dev/pts/1","status":2,"mode":1}"#)
        #expect(fix.mode == .noFix)
        #expect(fix.latitude == nil)
        #expect(fix.longitude == nil)
        #expect(fix.speed == nil)
        #expect(fix.eph == nil)
        #expect(!fix.hasPosition)
    }

    @Test func modeZeroIsNotSeen() throws {
        let fix = try fix(#"{"class":"TPV","device":"/dev/pts/1","mode":0}"#)
        #expect(fix.mode == .notSeen)
        #expect(fix.time == nil)
    }

    /// Fields an earlier line set must not leak into a later line that lacks them (libgps re-initialises
    /// the fix on every TPV; the decoder must not add its own leftovers).
    @Test func absentFieldsAreNilEvenAfterAFullFix() throws {
        _ = try fix(
            #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2017-03-31T11:01:24.000Z","lat":55.0,"lon":38.0,"altMSL":2177.0,"speed":78.5,"eph":4.2,"epv":4.6,"track":86.2}"#
        )
        let later = try fix(#"{"class":"TPV","device":"/dev/pts/1","mode":2,"time":"2017-03-31T11:01:25.000Z","lat":55.1,"lon":38.1}"#)
        #expect(later.altitudeMSL == nil)
        #expect(later.speed == nil)
        #expect(later.eph == nil)
        #expect(later.epv == nil)
        #expect(later.track == nil)
    }

    @Test func fractionalSecondsAreKept() throws {
        let fix = try fix(#"{"class":"TPV","mode":3,"time":"2024-05-01T12:00:03.250Z","lat":1,"lon":2}"#)
        #expect(fix.time?.nanoseconds == 250_000_000)
        #expect(fix.time?.iso8601 == "2024-05-01T12:00:03.250Z")
    }

    @Test func gstCarriesOneSigmaErrors() throws {
        let gst = try #require(try decoder.decode(
            line: #"{"class":"GST","device":"/dev/pts/0","time":"2024-05-01T12:00:03.000Z","rms":2.500,"major":3.100,"minor":2.200,"orient":45.000,"lat":2.800,"lon":2.600,"alt":4.100}"#
        ).gst)
        #expect(gst.rms == 2.5)
        #expect(gst.major == 3.1)
        #expect(gst.minor == 2.2)
        #expect(gst.orientation == 45)
        #expect(gst.latitudeError == 2.8)
        #expect(gst.longitudeError == 2.6)
        #expect(gst.altitudeError == 4.1)
        #expect(gst.time?.iso8601 == "2024-05-01T12:00:03.000Z")
    }

    @Test func skyCountsUsedSatellitesAndDilution() throws {
        let sky = try #require(try decoder.decode(
            line: #"{"class":"SKY","device":"/dev/pts/1","xdop":0.63,"ydop":0.85,"vdop":1.50,"tdop":0.89,"hdop":1.10,"gdop":2.01,"pdop":1.80,"nSat":3,"uSat":2,"satellites":[{"PRN":17,"el":72.0,"az":207.0,"ss":32.0,"used":true,"gnssid":0,"svid":17},{"PRN":28,"el":59.0,"az":95.0,"ss":31.0,"used":true,"gnssid":0,"svid":28},{"PRN":11,"el":12.0,"az":132.0,"ss":4.0,"used":false,"gnssid":0,"svid":11}]}"#
        ).sky)
        #expect(sky.hdop == 1.1)
        #expect(sky.vdop == 1.5)
        #expect(sky.pdop == 1.8)
        #expect(sky.satellites.count == 3)
        #expect(sky.satellitesUsed == 2)
        #expect(sky.satellites.first?.prn == 17)
        #expect(sky.satellites.first?.signalStrength == 32)
    }

    @Test func deviceActivated() throws {
        let report = try decoder.decode(
            line: #"{"class":"DEVICE","path":"/dev/pts/1","driver":"NMEA0183","activated":"2026-11-30T04:32:17.949Z","native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}"#
        )
        #expect(report == .device(DeviceInfo(
            path: "/dev/pts/1", driver: "NMEA0183", activated: UTCTime(seconds: 1_796_013_137))))
    }

    /// libgps cannot parse the integer 0 gpsd sends for a closed device; the decoder reads it from the text.
    @Test func deviceClosedIsActivatedZero() throws {
        _ = try decoder.decode(
            line: #"{"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox","activated":"2026-11-30T04:32:17.949Z"}"#)
        let report = try decoder.decode(line: #"{"class":"DEVICE","path":"/dev/pts/3","activated":0}"#)
        #expect(report == .device(DeviceInfo(path: "/dev/pts/3", activated: nil)))
    }

    @Test func devicesList() throws {
        let devices = try #require(try decoder.decode(
            line: #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/1","activated":"2026-11-30T04:32:17.549Z","native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}]}"#
        ).devices)
        #expect(devices.map(\.path) == ["/dev/pts/1"])
        #expect(devices.first?.isActive == true)
    }

    /// What a u-blox says about itself, in the DEVICE report and in the DEVICES list.
    @Test func deviceSubtypesAreKept() throws {
        let device = #"{"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox","subtype":"SW ROM CORE 3.01 (107888),HW 00080000","subtype1":"FWVER=SPG 3.01,PROTVER=18.00,GPS;GLO","activated":"2026-11-30T04:32:17.949Z"}"#
        let expected = DeviceInfo(
            path: "/dev/ttyACM0", driver: "u-blox", subtype: "SW ROM CORE 3.01 (107888),HW 00080000",
            subtype1: "FWVER=SPG 3.01,PROTVER=18.00,GPS;GLO", activated: UTCTime(seconds: 1_796_013_137))
        #expect(try decoder.decode(line: device) == .device(expected))
        #expect(try decoder.decode(line: #"{"class":"DEVICES","devices":["# + device + "]}") == .devices([expected]))
    }

    @Test func versionWatchAndError() throws {
        #expect(
            try decoder.decode(line: #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#)
                == .version(GPSDVersion(release: "3.22", protocolMajor: 3, protocolMinor: 14)))
        #expect(
            try decoder.decode(
                line: #"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"split24":false,"pps":false}"#)
                == .watch(enabled: true))
        #expect(
            try decoder.decode(line: #"{"class":"ERROR","message":"Unrecognized request 'FOO'"}"#)
                == .error(message: "Unrecognized request 'FOO'"))
    }

    @Test func unknownClassIsKeptByName() throws {
        #expect(
            try decoder.decode(line: #"{"class":"TOFF","device":"/dev/pts/1","real_sec":1,"real_nsec":0,"clock_sec":1,"clock_nsec":0}"#)
                == .other(className: "TOFF"))
    }

    @Test(arguments: [
        "", "garbage", "{", "{\"lat\":1}", "[1,2,3]", "{\"class\":\"TPV\",\"mode\":", "{\"class\":\"TPV\",\"lat\":\"north\"}",
        "\u{0}\u{1}\u{2}",
    ])
    func garbageIsAnError(line: String) {
        #expect(throws: GPSDError.self) { try decoder.decode(line: line) }
    }

    @Test func errorsNameTheLine() {
        let error = GPSDError.malformedReport(line: "garbage")
        #expect(error.description.contains("garbage"))
        let refused = GPSDError.connectionFailed(host: "localhost", port: "1", code: -6, message: "can't connect")
        #expect(refused.description == "cannot connect to gpsd at localhost:1: can't connect")
    }
}
