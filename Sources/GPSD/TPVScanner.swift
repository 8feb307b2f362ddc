import CGPS
import GPSModel

#if canImport(Glibc)
import Glibc
#endif

/// Decodes a gpsd TPV line in one pass over its text, with libgps's own number and time parsers (`safe_atof`,
/// `iso8601_to_timespec`, which `gps_unpack` applies to the same characters), so every value is what
/// `gps_unpack` gives. `gps_unpack` matches each member against its whole attribute table with `strcmp` and
/// copies every value out first: for the one TPV per epoch that is passed on it cost more than the rest of
/// the decoding (bench/daemon.sh). Anything unusual (an escape, a nested value, a non-numeric number, a
/// device path libgps would truncate, no device) returns nil and the caller decodes with libgps instead.
enum TPVScanner {
    /// The TPV members read as numbers into a `Fix`.
    private enum NumberField { case latitude, longitude, epx, epy, eph, epv, eps, epd, speed, track, climb }

    /// The fix the TPV `line` describes (the byte after it must be a NUL), or nil to leave it to libgps. The
    /// device path goes into `data` as `gps_unpack` would put it: a later report without a device of its own
    /// is decoded with it.
    static func fix(in line: UnsafeBufferPointer<CChar>, storingDeviceIn data: UnsafeMutablePointer<gps_data_t>) -> Fix? {
        guard let base = line.baseAddress else { return nil }
        var fix = Fix(mode: .notSeen)
        var device: Range<Int>?
        var usable = true
        // Direct stores: a key path write goes through the runtime for every member.
        func set(_ field: NumberField, _ value: Double?) {
            switch field {
            case .latitude: fix.latitude = value
            case .longitude: fix.longitude = value
            case .epx: fix.epx = value
            case .epy: fix.epy = value
            case .eph: fix.eph = value
            case .epv: fix.epv = value
            case .eps: fix.eps = value
            case .epd: fix.epd = value
            case .speed: fix.speed = value
            case .track: fix.track = value
            case .climb: fix.climb = value
            }
        }
        let walked = JSONPeek.forEachMember(in: line) { key, value, quoted in
            let first = line[key.lowerBound]
            switch key.count {
            case 3:
                let name: NumberField
                switch (first, line[key.lowerBound + 1], line[key.lowerBound + 2]) {
                case (0x6C, 0x61, 0x74): name = .latitude  // lat
                case (0x6C, 0x6F, 0x6E): name = .longitude  // lon
                case (0x65, 0x70, 0x78): name = .epx
                case (0x65, 0x70, 0x79): name = .epy
                case (0x65, 0x70, 0x68): name = .eph
                case (0x65, 0x70, 0x76): name = .epv
                case (0x65, 0x70, 0x73): name = .eps
                case (0x65, 0x70, 0x64): name = .epd
                default: return true  // ept, alt, sep…: not read
                }
                guard !quoted, let number = number(at: value, in: base) else {
                    usable = false
                    return false
                }
                set(name, finite(number))
            case 4 where matches(key, "mode", in: base):
                guard !quoted, let mode = integer(at: value, in: line) else {
                    usable = false
                    return false
                }
                fix.mode = FixMode(rawValue: mode) ?? .notSeen
            case 4 where matches(key, "time", in: base):
                guard quoted, let time = timespecValue(at: value, in: base) else {
                    usable = false
                    return false
                }
                fix.time = ReportDecoder.receiverTime(time, text: line[value])
            case 5 where first == 0x73 || first == 0x74 || first == 0x63:  // speed, track, climb (class is quoted)
                let name: NumberField
                if matches(key, "speed", in: base) {
                    name = .speed
                } else if matches(key, "track", in: base) {
                    name = .track
                } else if matches(key, "climb", in: base) {
                    name = .climb
                } else {
                    return true
                }
                guard !quoted, let number = number(at: value, in: base) else {
                    usable = false
                    return false
                }
                set(name, finite(number))
            case 6 where matches(key, "device", in: base):
                guard quoted, value.count < Int(GPS_PATH_MAX) else {
                    usable = false
                    return false
                }
                device = value
            case 6 where matches(key, "status", in: base):
                guard !quoted, let status = integer(at: value, in: line) else {
                    usable = false
                    return false
                }
                fix.status = status >= 2 ? status : nil
            case 6 where matches(key, "altMSL", in: base) || matches(key, "altHAE", in: base):
                guard !quoted, let number = number(at: value, in: base) else {
                    usable = false
                    return false
                }
                if line[key.lowerBound + 3] == 0x4D {
                    fix.altitudeMSL = finite(number)
                } else {
                    fix.altitudeHAE = finite(number)
                }
            default:
                break
            }
            return true
        }
        // No device: libgps keeps the path of an earlier report in that case; leave it to libgps.
        guard walked, usable, let device, !device.isEmpty else { return nil }
        let path = UnsafeRawBufferPointer(start: base + device.lowerBound, count: device.count)
        withUnsafeMutableBytes(of: &data.pointee.dev.path) { stored in
            stored.copyMemory(from: path)
            stored[path.count] = 0
        }
        fix.device = String(decoding: path, as: UTF8.self)
        return fix
    }

    private static func matches(_ key: Range<Int>, _ name: StaticString, in base: UnsafePointer<CChar>) -> Bool {
        key.count == name.utf8CodeUnitCount && memcmp(base + key.lowerBound, name.utf8Start, key.count) == 0
    }

    /// libgps reads a real with `safe_atof`, which stops at the `,` or `}` after the value as at the NUL of
    /// the copy libgps makes. Only plain numbers (what gpsd writes) are taken.
    private static func number(at value: Range<Int>, in base: UnsafePointer<CChar>) -> Double? {
        let head = base[value.lowerBound]
        guard (head >= 0x30 && head <= 0x39) || head == 0x2D || head == 0x2E else { return nil }
        for index in value {
            let byte = base[index]
            let numeric = (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2B || byte == 0x2E
                || byte == 0x65 || byte == 0x45
            if !numeric { return nil }
        }
        return safe_atof(base + value.lowerBound)
    }

    /// A plain decimal integer (gpsd's mode and status).
    private static func integer(at value: Range<Int>, in line: UnsafeBufferPointer<CChar>) -> Int? {
        guard !value.isEmpty, value.count <= 9 else { return nil }
        var result = 0
        for index in value {
            let byte = line[index]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            result = result * 10 + Int(byte - 0x30)
        }
        return result
    }

    /// libgps's `iso8601_to_timespec` on a NUL-terminated copy of the value, as `gps_unpack` does.
    private static func timespecValue(at value: Range<Int>, in base: UnsafePointer<CChar>) -> timespec? {
        guard value.count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { copy -> timespec? in
            guard let start = copy.baseAddress else { return nil }
            start.update(from: base + value.lowerBound, count: value.count)
            start[value.count] = 0
            return iso8601_to_timespec(start)
        }
    }
}
