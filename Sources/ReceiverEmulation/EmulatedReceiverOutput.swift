import GPSModel
import Receivers

#if canImport(Glibc)
import Glibc
#endif

/// What an emulated receiver says: NMEA sentences and UBX messages built from a capture's fix, and the
/// identification and acknowledgement messages gpsd expects. Pure; Foundation-free like the rest of ReceiverEmulation.
enum EmulatedOutput {
    // MARK: - NMEA

    /// `$<body>*CS\r\n`.
    static func nmea(_ body: String) -> [UInt8] {
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return Array(("$" + body + "*" + hexByte(checksum) + "\r\n").utf8)
    }

    /// The NMEA sentences an epoch is made of, as u-blox's CFG-MSG names them (class 0xF0).
    enum Sentence: UInt8, CaseIterable {
        case gga = 0x00
        case gsa = 0x02
        case rmc = 0x04
    }

    /// RMC, GGA and GSA of one epoch, in that order. A fix without a position gives the no-fix forms (RMC
    /// status V, GGA quality 0, GSA mode 1) with the epoch's time, as a receiver that is still acquiring
    /// sends them.
    static func nmeaEpoch(_ fix: Fix, time: UTCTime, including: (Sentence) -> Bool = { _ in true }) -> [UInt8] {
        let clock = timeOfDay(time)
        let date = ddmmyy(time)
        func pick(
            _ rmc: @autoclosure () -> [UInt8], _ gga: @autoclosure () -> [UInt8], _ gsa: @autoclosure () -> [UInt8]
        ) -> [UInt8] {
            // GGA and GSA first, RMC last, as MediaTek and u-blox receivers send them: gpsd reports the epoch
            // when it ends, and an epoch that ended at RMC before its GGA would carry the previous epoch's DOPs
            // (99.99 after a no-fix epoch: a first fix "1 km" inaccurate).
            (including(.gga) ? gga() : []) + (including(.gsa) ? gsa() : []) + (including(.rmc) ? rmc() : [])
        }
        guard fix.hasPosition, let latitude = fix.latitude, let longitude = fix.longitude else {
            return pick(
                nmea("GPRMC,\(clock),V,,,,,,,\(date),,,N"), nmea("GPGGA,\(clock),,,,,0,00,99.99,,,,,,"),
                nmea("GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99"))
        }
        let (lat, northSouth) = coordinate(latitude, degreeDigits: 2, positive: "N", negative: "S")
        let (lon, eastWest) = coordinate(longitude, degreeDigits: 3, positive: "E", negative: "W")
        // gpsd's eph for NMEA is HDOP × 19 m and epv VDOP × 23 m (docs/gpsd.md §5): these DOPs give the
        // capture's figures back.
        let hdop = max(0.5, (fix.eph ?? 19) / 19)
        let vdop = max(0.5, (fix.epv ?? 23) / 23)
        let pdop = (hdop * hdop + vdop * vdop).squareRoot()
        let knots = fix.speed.map { decimal($0 / 0.514_444, places: 3) } ?? ""
        let track = fix.track.map { decimal($0, places: 2) } ?? ""
        let altitude = fix.altitudeMSL.map { decimal($0, places: 1) } ?? ""
        let mode = fix.mode == .twoD ? "2" : "3"
        return pick(
            nmea("GPRMC,\(clock),A,\(lat),\(northSouth),\(lon),\(eastWest),\(knots),\(track),\(date),,,A"),
            nmea(
                "GPGGA,\(clock),\(lat),\(northSouth),\(lon),\(eastWest),1,08,\(decimal(hdop, places: 2)),"
                    + "\(altitude),M,,M,,"),
            nmea(
                "GPGSA,A,\(mode),02,05,07,09,13,15,20,30,,,,,\(decimal(pdop, places: 2)),\(decimal(hdop, places: 2)),"
                    + decimal(vdop, places: 2)))
    }

    /// PMTK705 as a GlobalTop PA6H (MT3339) answers PMTK605.
    static let mediatekFirmware = PMTKSentence(
        command: 705, fields: ["AXN_2.31_3339_13101700", "5632", "PA6H", "1.0"])

    static func pmtkAcknowledgement(_ command: Int, _ result: PMTKAcknowledgement.Result) -> [UInt8] {
        let number = String(command)
        let padded = String(repeating: "0", count: max(0, 3 - number.count)) + number
        return PMTKSentence(command: 1, fields: [padded, String(result.rawValue)]).bytes
    }

    // MARK: - UBX

    /// UBX-MON-VER of a u-blox M8 on protocol 18 (software, hardware, extensions, NUL-padded).
    static let ublox8Version: UBXFrame = {
        func field(_ text: String, _ size: Int) -> [UInt8] {
            let bytes = Array(text.utf8.prefix(size - 1))
            return bytes + [UInt8](repeating: 0, count: size - bytes.count)
        }
        let payload = field("ROM CORE 3.01 (107888)", 30) + field("00080000", 10) + field("FWVER=SPG 3.01", 30)
            + field("PROTVER=18.00", 30) + field("GPS;GLO;GAL;BDS", 30)
        return UBXFrame(messageClass: 0x0A, id: 0x04, payload: payload)
    }()

    static func acknowledgement(_ frame: UBXFrame, accepted: Bool) -> UBXFrame {
        UBXFrame(messageClass: 0x05, id: accepted ? 0x01 : 0x00, payload: [frame.messageClass, frame.id])
    }

    /// UBX-CFG-PRT of UART1 at 38400 8N1, all input protocols, `outputProtocols` out.
    static func portConfiguration(outputProtocols: UInt16) -> UBXFrame {
        var payload = [UInt8](repeating: 0, count: 20)
        payload[0] = 1
        put(UInt32(0x08D0), into: &payload, at: 4)
        put(UInt32(38_400), into: &payload, at: 8)
        put(UInt16(0x0007), into: &payload, at: 12)
        put(outputProtocols, into: &payload, at: 14)
        return UBXFrame(messageClass: 0x06, id: 0x00, payload: payload)
    }

    /// UBX-NAV-PVT (92 bytes, u-blox 8). Without a position: fix type 0, time still valid.
    static func navigationSolution(_ fix: Fix, time: UTCTime) -> UBXFrame {
        var payload = [UInt8](repeating: 0, count: 92)
        let (year, month, day, hour, minute, second) = calendar(time)
        put(timeOfWeekMilliseconds(time), into: &payload, at: 0)
        put(UInt16(year), into: &payload, at: 4)
        payload[6] = UInt8(month)
        payload[7] = UInt8(day)
        payload[8] = UInt8(hour)
        payload[9] = UInt8(minute)
        payload[10] = UInt8(second)
        payload[11] = 0x07  // validDate, validTime, fullyResolved
        put(UInt32(50), into: &payload, at: 12)  // tAcc, ns
        put(UInt32(bitPattern: time.nanoseconds), into: &payload, at: 16)
        if fix.hasPosition, let latitude = fix.latitude, let longitude = fix.longitude {
            payload[20] = fix.mode == .twoD ? 2 : 3
            payload[21] = 0x01  // gnssFixOK
            payload[23] = 8
            put(Int32((longitude * 1e7).rounded()), into: &payload, at: 24)
            put(Int32((latitude * 1e7).rounded()), into: &payload, at: 28)
            let altitude = fix.altitudeMSL ?? fix.altitudeHAE ?? 0
            put(Int32(((fix.altitudeHAE ?? altitude) * 1000).rounded()), into: &payload, at: 32)
            put(Int32((altitude * 1000).rounded()), into: &payload, at: 36)
            // gpsd takes hAcc and vAcc as eph and epv, unscaled (docs/gpsd.md §5).
            put(millimetres(fix.eph ?? 10), into: &payload, at: 40)
            put(millimetres(fix.epv ?? 15), into: &payload, at: 44)
            let speed = fix.speed ?? 0
            let track = (fix.track ?? 0) * .pi / 180
            put(Int32((speed * cos(track) * 1000).rounded()), into: &payload, at: 48)
            put(Int32((speed * sin(track) * 1000).rounded()), into: &payload, at: 52)
            put(Int32(((fix.climb ?? 0) * -1000).rounded()), into: &payload, at: 56)
            put(Int32((speed * 1000).rounded()), into: &payload, at: 60)
            put(Int32(((fix.track ?? 0) * 1e5).rounded()), into: &payload, at: 64)
            put(millimetres(fix.eps ?? 0.5), into: &payload, at: 68)
            put(UInt32(((fix.epd ?? 1) * 1e5).rounded()), into: &payload, at: 72)
            put(UInt16(150), into: &payload, at: 76)
        } else {
            put(UInt32(4_294_967), into: &payload, at: 40)
            put(UInt32(4_294_967), into: &payload, at: 44)
            put(UInt16(9999), into: &payload, at: 76)
        }
        return UBXFrame(messageClass: 0x01, id: 0x07, payload: payload)
    }

    /// UBX-NAV-EOE: the end of the epoch's navigation messages.
    static func endOfEpoch(time: UTCTime) -> UBXFrame {
        var payload = [UInt8](repeating: 0, count: 4)
        put(timeOfWeekMilliseconds(time), into: &payload, at: 0)
        return UBXFrame(messageClass: 0x01, id: 0x61, payload: payload)
    }

    // MARK: - Formatting

    static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// `value` with `places` decimals, at least `integerDigits` before the point.
    static func decimal(_ value: Double, places: Int, integerDigits: Int = 1) -> String {
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((abs(value) * Double(scale)).rounded())
        var text = padded(scaled / scale, integerDigits)
        if places > 0 { text += "." + padded(scaled % scale, places) }
        return (value < 0 && scaled != 0 ? "-" : "") + text
    }

    static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// `ddmm.mmmmm` / `dddmm.mmmmm` and the hemisphere letter.
    static func coordinate(
        _ degrees: Double, degreeDigits: Int, positive: String, negative: String
    ) -> (String, String) {
        let perDegree: Int64 = 60 * 100_000
        let scaled = Int64((abs(degrees) * Double(perDegree)).rounded())
        let whole = scaled / perDegree
        let minutes = scaled % perDegree
        let text = padded(whole, degreeDigits) + padded(minutes / 100_000, 2) + "." + padded(minutes % 100_000, 5)
        return (text, degrees < 0 ? negative : positive)
    }

    /// `hhmmss.ss`.
    static func timeOfDay(_ time: UTCTime) -> String {
        let (_, _, _, hour, minute, second) = calendar(time)
        let hundredths = Int64(time.nanoseconds / 10_000_000)
        return padded(Int64(hour), 2) + padded(Int64(minute), 2) + padded(Int64(second), 2) + "."
            + padded(hundredths, 2)
    }

    static func ddmmyy(_ time: UTCTime) -> String {
        let (year, month, day, _, _, _) = calendar(time)
        return padded(Int64(day), 2) + padded(Int64(month), 2) + padded(Int64(year % 100), 2)
    }

    /// Year, month, day, hour, minute, second of `time`, read back from its ISO 8601 form.
    static func calendar(_ time: UTCTime) -> (Int, Int, Int, Int, Int, Int) {
        let text = Array(time.iso8601.utf8)
        func number(_ range: Range<Int>) -> Int {
            guard range.upperBound <= text.count else { return 0 }
            return text[range].reduce(0) { $0 * 10 + Int($1) - 48 }
        }
        return (number(0..<4), number(5..<7), number(8..<10), number(11..<13), number(14..<16), number(17..<19))
    }

    /// GPS time of week in ms (GPS is 18 s ahead of UTC since 2017).
    static func timeOfWeekMilliseconds(_ time: UTCTime) -> UInt32 {
        let gpsSeconds = time.seconds - 315_964_800 + 18
        let week: Int64 = 604_800
        let secondOfWeek = ((gpsSeconds % week) + week) % week
        return UInt32(secondOfWeek * 1000 + Int64(time.nanoseconds / 1_000_000))
    }

    static func millimetres(_ metres: Double) -> UInt32 {
        UInt32(max(0, min(4_000_000, (metres * 1000).rounded())))
    }

    static func put<Integer: FixedWidthInteger>(_ value: Integer, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<(Integer.bitWidth / 8) {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (index * 8))
        }
    }
}
