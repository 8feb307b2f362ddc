import CGPS
import GPSModel
import JSON

/// Turns libgps's `gps_data_t` after one line into a typed `Report`.
///
/// One decoder for live and replay: a live `GPSDSession` unpacks each line gpsd sends into its own
/// `gps_data_t` with `gps_unpack`, a replay unpacks a recorded line into this decoder's (after a strict syntax
/// check, since libgps accepts anything silently); both end in `ReportDecoder.report(from:line:)`.
public final class ReportDecoder {
    private let unpacker = GPSDataUnpacker()
    private var buffer: [CChar] = []

    public init() {}

    /// Decodes one recorded gpsd JSON line (as `gpspipe -w` prints it, or a capture's `gpsd` object).
    public func decode(line: String) throws(GPSDError) -> Report {
        var text = line
        guard text.withUTF8({ JSONSyntax.hasGPSDKinds($0) }) else { throw .malformedReport(line: line) }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: line.utf8CString)
        // gps_unpack accepts anything silently (it returns 0 whatever it parsed, checked against 3.22); the
        // syntax check above stands in.
        let result = buffer.withUnsafeBufferPointer { chars in
            // The trailing NUL that utf8CString adds stays after the line, as libgps reads C strings.
            unpacker.unpack(UnsafeBufferPointer(rebasing: chars.dropLast()))
        }
        guard let report = result else { throw .malformedReport(line: line) }
        return report
    }

    /// The report for the line libgps just parsed into `data`. `line` is that line's text (no NUL needed):
    /// the class name and the `"activated":0` that libgps cannot parse are read from it. Nil when the line
    /// has no class.
    static func report(from data: UnsafePointer<gps_data_t>, line: UnsafeBufferPointer<CChar>) -> Report? {
        guard let className = JSONPeek.className(in: line) else { return nil }
        let set = data.pointee.set
        switch className {
        case "TPV":
            return .fix(fix(from: data, set: set, line: line))
        case "SKY":
            return .sky(sky(from: data))
        case "GST":
            return .gst(gst(from: data))
        case "DEVICE":
            return .device(device(from: data, set: set, line: line))
        case "DEVICES":
            return .devices(devices(from: data))
        case "VERSION":
            return .version(
                GPSDVersion(
                    release: String(cString: cgps_version_release(data)),
                    protocolMajor: Int(cgps_version_proto_major(data)),
                    protocolMinor: Int(cgps_version_proto_minor(data))))
        case "WATCH":
            return .watch(enabled: data.pointee.policy.watcher)
        case "ERROR":
            return .error(message: String(cString: cgps_error_message(data)))
        default:
            return .other(className: className)
        }
    }

    private static func fix(from data: UnsafePointer<gps_data_t>, set: gps_mask_t, line: UnsafeBufferPointer<CChar>)
        -> Fix
    {
        let raw = data.pointee.fix
        var time = timespec()
        time.tv_sec = Int(cgps_fix_time_seconds(data))
        time.tv_nsec = Int(cgps_fix_time_nanoseconds(data))
        let text = JSONPeek.stringRange(of: "time", in: line).map { line[$0] }
        let device = String(cString: cgps_device_path(data))
        return Fix(
            device: device.isEmpty ? nil : device,
            mode: FixMode(rawValue: Int(raw.mode)) ?? .notSeen,
            status: raw.status >= 2 ? Int(raw.status) : nil,
            time: text.flatMap { receiverTime(time, text: $0) },
            latitude: finite(raw.latitude), longitude: finite(raw.longitude),
            altitudeMSL: finite(raw.altMSL), altitudeHAE: finite(raw.altHAE),
            epx: finite(raw.epx), epy: finite(raw.epy), eph: finite(raw.eph), epv: finite(raw.epv),
            speed: finite(raw.speed), eps: finite(raw.eps),
            track: finite(raw.track), epd: finite(raw.epd), climb: finite(raw.climb))
    }

    private static func sky(from data: UnsafePointer<gps_data_t>) -> SkyView {
        let visible = max(0, min(Int(cgps_satellites_visible(data)), Int(cgps_max_channels())))
        var satellites: [Satellite] = []
        satellites.reserveCapacity(visible)
        for index in 0..<visible {
            guard let satellite = cgps_satellite(data, Int32(index))?.pointee, satellite.PRN != 0 else { continue }
            satellites.append(
                Satellite(
                    prn: Int(satellite.PRN), elevation: finite(satellite.elevation),
                    azimuth: finite(satellite.azimuth), signalStrength: finite(satellite.ss),
                    used: satellite.used))
        }
        let dop = data.pointee.dop
        let time = timespecTime(data.pointee.skyview_time)
        let device = String(cString: cgps_device_path(data))
        return SkyView(
            device: device.isEmpty ? nil : device, time: time, hdop: finite(dop.hdop), vdop: finite(dop.vdop),
            pdop: finite(dop.pdop), satellites: satellites)
    }

    private static func gst(from data: UnsafePointer<gps_data_t>) -> GST {
        let raw = cgps_gst(data)
        let device = String(cString: cgps_device_path(data))
        return GST(
            device: device.isEmpty ? nil : device, time: timespecTime(raw.utctime),
            rms: finite(raw.rms_deviation), major: finite(raw.smajor_deviation),
            minor: finite(raw.sminor_deviation), orientation: finite(raw.smajor_orientation),
            latitudeError: finite(raw.lat_err_deviation), longitudeError: finite(raw.lon_err_deviation),
            altitudeError: finite(raw.alt_err_deviation))
    }

    private static func device(
        from data: UnsafePointer<gps_data_t>, set: gps_mask_t, line: UnsafeBufferPointer<CChar>
    ) -> DeviceInfo {
        // libgps 3.22 (and later) cannot parse gpsd's integer `"activated":0` for a closed device: it sets
        // only PACKET_SET and leaves the previous device in `dev`. Read that case from the text.
        if set & UInt64(DEVICE_SET) == 0 || JSONPeek.integerValue(of: "activated", in: line) == 0 {
            return DeviceInfo(path: JSONPeek.stringValue(of: "path", in: line) ?? "", activated: nil)
        }
        let activated = cgps_device_activated_seconds(data)
        let driver = String(cString: cgps_device_driver(data))
        let subtype = String(cString: cgps_device_subtype(data))
        let subtype1 = String(cString: cgps_device_subtype1(data))
        return DeviceInfo(
            path: String(cString: cgps_device_path(data)),
            driver: driver.isEmpty ? nil : driver,
            subtype: subtype.isEmpty ? nil : subtype,
            subtype1: subtype1.isEmpty ? nil : subtype1,
            activated: activated > 0 ? UTCTime(seconds: Int64(activated)) : nil)
    }

    private static func devices(from data: UnsafePointer<gps_data_t>) -> [DeviceInfo] {
        let count = Int(data.pointee.devices.ndevices)
        return withUnsafeBytes(of: data.pointee.devices.list) { raw in
            let list = raw.bindMemory(to: devconfig_t.self)
            return (0..<min(count, list.count)).map { index in
                let entry = list[index]
                let path = tupleString(entry.path)
                let driver = tupleString(entry.driver)
                let subtype = tupleString(entry.subtype)
                let subtype1 = tupleString(entry.subtype1)
                return DeviceInfo(
                    path: path, driver: driver.isEmpty ? nil : driver, subtype: subtype.isEmpty ? nil : subtype,
                    subtype1: subtype1.isEmpty ? nil : subtype1,
                    activated: entry.activated.tv_sec > 0 ? UTCTime(seconds: Int64(entry.activated.tv_sec)) : nil)
            }
        }
    }
}

@inline(__always)
func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }

extension ReportDecoder {
    /// A TPV's time as libgps read it from `text` (the `time` member's value), or nil when it is not a real
    /// receiver time: out of range (`UTCTime(receiverSeconds:nanoseconds:)`), or text that is not an ISO 8601
    /// UTC time, which libgps still turns into some date (month 13 into the next year, garbage into 1899).
    static func receiverTime(_ time: timespec, text: Slice<UnsafeBufferPointer<CChar>>) -> UTCTime? {
        let readable = text.withContiguousStorageIfAvailable { chars in
            UTCTime(iso8601: UnsafeRawBufferPointer(chars)) != nil
        }
        guard readable ?? false else { return nil }
        return UTCTime(receiverSeconds: Int64(time.tv_sec), nanoseconds: Int64(time.tv_nsec))
    }
}

private func timespecTime(_ time: timespec) -> UTCTime? {
    UTCTime(receiverSeconds: Int64(time.tv_sec), nanoseconds: Int64(time.tv_nsec))
}

/// A NUL-terminated C string stored in a fixed-size C array (imported as a tuple of any arity).
private func tupleString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.bindMemory(to: UInt8.self)
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
    }
}

/// One heap `gps_data_t` that libgps unpacks gpsd lines into, for the live session's processor and the
/// recorded-line decoder alike. Not thread-safe.
final class GPSDataUnpacker {
    private let data: UnsafeMutablePointer<gps_data_t>
    /// TPVs are read by `TPVScanner` (libgps only for what it leaves); false: libgps for all (tests compare).
    var scansTPV = true

    init() {
        data = .allocate(capacity: 1)
        data.initialize(to: gps_data_t())
    }

    deinit {
        data.deinitialize(count: 1)
        data.deallocate()
    }

    /// Unpacks one line (the byte after it must be a NUL) and returns its report.
    func unpack(_ line: UnsafeBufferPointer<CChar>) -> Report? {
        // libgps keeps fields of earlier reports: zero `set` first, or a TPV's flags leak into a following
        // SKY or DEVICE (docs/gpsd.md §1.3).
        data.pointee.set = 0
        guard let base = line.baseAddress else { return nil }
        if scansTPV, JSONPeek.hasClass("TPV", in: line), let fix = TPVScanner.fix(in: line, storingDeviceIn: data) {
            return .fix(fix)
        }
        // libgps's parser reads gpsd's own compact JSON only: given `"key": value` it gives up silently and
        // keeps the previous report's values. Valid JSON in other spacing is compacted for it first.
        if let compact = JSONPeek.compacted(line) {
            return compact.withUnsafeBufferPointer { chars -> Report? in
                guard let compactBase = chars.baseAddress else { return nil }
                _ = cgps_unpack(UnsafeMutablePointer(mutating: compactBase), data)
                return ReportDecoder.report(from: data, line: UnsafeBufferPointer(rebasing: chars.dropLast()))
            }
        }
        _ = cgps_unpack(UnsafeMutablePointer(mutating: base), data)
        return ReportDecoder.report(from: data, line: line)
    }
}
