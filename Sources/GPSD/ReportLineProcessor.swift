import CGPS
import GPSModel

#if canImport(Glibc)
import Glibc
#endif

/// Turns gpsd JSON lines into reports, one line at a time: the one path every line takes, whether it just
/// arrived from gpsd (`GPSDSession`, `now` from the monotonic clock) or is read back from a capture (replay,
/// `now` from the capture's `t`). Owns its `gps_data_t`; not thread-safe.
///
/// Lines are decoded with `gps_unpack`. With `collapsesEpochs`, TPVs come out one per epoch and device (see
/// `EpochCollapser`): the epoch's raw lines are held and only the one passed on is decoded. With
/// `satelliteDetail` off, SKY is read from the text as counts only.
public final class ReportLineProcessor {
    /// When false, SKY reports carry DOPs and satellite counts but no per-satellite list and no time: they
    /// are read from the line without libgps, whose SKY decoding parses every satellite first (most of the
    /// bytes gpsd sends). The counts are gpsd's own `uSat`/`nSat`.
    public var satelliteDetail = true
    public var collapsesEpochs = false
    private let unpacker = GPSDataUnpacker()
    private var collapser: EpochCollapser<TextKey, TextKey, [CChar]>
    private var outbox: [Report] = []
    private var outboxStart = 0

    /// `epochQuiet`: how long a device's quiet ends its epoch (see `EpochCollapser.quietInterval`).
    public init(epochQuiet: Double = EpochCollapser<Int, Int, Int>.defaultQuietInterval) {
        collapser = EpochCollapser(quietInterval: epochQuiet)
    }

    /// Takes one complete line (no line end; the byte after it must be a NUL, as libgps reads C strings).
    /// What it completes is then available from `next()`.
    public func process(_ line: UnsafeBufferPointer<CChar>, now: Double) {
        guard collapsesEpochs, JSONPeek.hasClass("TPV", in: line) else {
            let report = decode(line)
            if collapsesEpochs, case .device(let device)? = report, !device.isActive,
                let path = JSONPeek.textKey(of: "path", in: line)
            {
                for payload in collapser.flush(device: path) { enqueue(decodeHeld(payload)) }
            }
            enqueue(report)
            return
        }
        // Read the epoch's identity from the text; decode only the TPV that is passed on.
        let identity = Self.epochIdentity(of: line)
        // The line and the NUL that ends it.
        let held = Array(UnsafeBufferPointer(start: line.baseAddress, count: line.count + 1))
        let finished = collapser.add(
            held, device: identity.device, time: identity.time, hasPosition: identity.hasPosition, now: now)
        for payload in finished { enqueue(decodeHeld(payload)) }
    }

    /// What the collapser needs of a TPV line (its device, its time, whether it has a position), read in one
    /// walk over the members; a line that is not a flat object is searched key by key instead.
    private static func epochIdentity(of line: UnsafeBufferPointer<CChar>) -> (device: TextKey, time: TextKey?, hasPosition: Bool) {
        var device: TextKey?
        var time: TextKey?
        var mode = 0
        var hasLatitude = false
        var hasLongitude = false
        let walked = JSONPeek.forEachMember(in: line) { key, value, quoted in
            func named(_ name: StaticString) -> Bool {
                key.count == name.utf8CodeUnitCount
                    && name.withUTF8Buffer { bytes in zip(key, bytes).allSatisfy { line[$0] == CChar(bitPattern: $1) } }
            }
            switch key.count {
            case 3:
                if named("lat") { hasLatitude = true } else if named("lon") { hasLongitude = true }
            case 4:
                if quoted, time == nil, named("time") {
                    time = TextKey(line[value])
                } else if !quoted, named("mode") {
                    mode = JSONPeek.leadingInteger(line[value]) ?? 0
                }
            case 6:
                if quoted, device == nil, named("device") { device = TextKey(line[value]) }
            default:
                break
            }
            return true
        }
        guard walked else {
            return (
                JSONPeek.textKey(of: "device", in: line) ?? TextKey(UnsafeBufferPointer(start: nil, count: 0)[...]),
                JSONPeek.textKey(of: "time", in: line),
                (JSONPeek.integerValue(of: "mode", in: line) ?? 0) >= 2
                    && JSONPeek.hasMember("lat", in: line) && JSONPeek.hasMember("lon", in: line)
            )
        }
        return (
            device ?? TextKey(UnsafeBufferPointer(start: nil, count: 0)[...]), time,
            mode >= 2 && hasLatitude && hasLongitude
        )
    }

    /// The next finished report, in the order the lines came.
    public func next() -> Report? {
        guard outboxStart < outbox.count else { return nil }
        let report = outbox[outboxStart]
        outboxStart += 1
        if outboxStart == outbox.count {
            outbox.removeAll(keepingCapacity: true)
            outboxStart = 0
        }
        return report
    }

    /// Whether an epoch is being held.
    public var hasPending: Bool { collapser.hasPending }

    /// When the earliest held epoch goes quiet (same clock as `now`).
    public var nextQuietDeadline: Double? { collapser.nextQuietDeadline }

    /// Finishes the epochs whose device has been quiet long enough; they come out of `next()`.
    public func flushQuiet(now: Double) {
        for payload in collapser.flushQuiet(now: now) { enqueue(decodeHeld(payload)) }
    }

    /// Every epoch still held (the stream is ending), as fixes.
    public func flushAll() -> [Fix] {
        collapser.flush().compactMap { payload in
            guard case .fix(let fix)? = decodeHeld(payload) else { return nil }
            return fix
        }
    }

    private func enqueue(_ report: Report?) {
        if let report { outbox.append(report) }
    }

    /// Decodes a held line (NUL-terminated copy).
    private func decodeHeld(_ payload: [CChar]) -> Report? {
        // Read in place: neither libgps (its parser takes const text) nor the scanners write to the line.
        payload.withUnsafeBufferPointer { bytes in
            decode(UnsafeBufferPointer(rebasing: bytes.dropLast()))
        }
    }

    /// The SKY counts read in one walk over the members before the satellite list (gpsd writes them
    /// first), with the same readers as the key-by-key search; nil when one of them is not there, and the
    /// caller searches the whole line key by key.
    static func skyCounts(in line: UnsafeBufferPointer<CChar>) -> SkyView? {
        guard let base = line.baseAddress else { return nil }
        var device: Range<Int>?
        var hdop: Int?
        var vdop: Int?
        var pdop: Int?
        var used: Int?
        var visible: Int?
        _ = JSONPeek.forEachMember(in: line) { key, value, quoted in
            // Only `"key":value` with nothing between, as the key-by-key search finds them.
            guard value.lowerBound == key.upperBound + (quoted ? 3 : 2), key.count == 4 || key.count == 6 else {
                return true
            }
            func named(_ name: StaticString) -> Bool {
                key.count == name.utf8CodeUnitCount && memcmp(base + key.lowerBound, name.utf8Start, key.count) == 0
            }
            if quoted {
                if device == nil, named("device") { device = value }
            } else if hdop == nil, named("hdop") {
                hdop = value.lowerBound
            } else if vdop == nil, named("vdop") {
                vdop = value.lowerBound
            } else if pdop == nil, named("pdop") {
                pdop = value.lowerBound
            } else if used == nil, named("uSat") {
                used = JSONPeek.leadingInteger(line[value]) ?? -1
            } else if visible == nil, named("nSat") {
                visible = JSONPeek.leadingInteger(line[value]) ?? -1
            }
            return true
        }
        guard let device, let hdop, let vdop, let pdop, let used, let visible, used >= 0, visible >= 0 else {
            return nil
        }
        return SkyView(
            device: String(
                decoding: UnsafeRawBufferPointer(start: base + device.lowerBound, count: device.count), as: UTF8.self),
            hdop: JSONPeek.number(at: hdop, in: line), vdop: JSONPeek.number(at: vdop, in: line),
            pdop: JSONPeek.number(at: pdop, in: line), satellites: [],
            satellitesUsed: used, satellitesVisible: visible)
    }

    /// The SKY counts, each key searched for in the whole line.
    static func skyCountsByKey(in line: UnsafeBufferPointer<CChar>) -> SkyView {
        SkyView(
            device: JSONPeek.stringValue(of: "device", in: line),
            hdop: JSONPeek.doubleValue(of: "hdop", in: line), vdop: JSONPeek.doubleValue(of: "vdop", in: line),
            pdop: JSONPeek.doubleValue(of: "pdop", in: line), satellites: [],
            satellitesUsed: JSONPeek.integerValue(of: "uSat", in: line) ?? 0,
            satellitesVisible: JSONPeek.integerValue(of: "nSat", in: line) ?? 0)
    }

    private func decode(_ line: UnsafeBufferPointer<CChar>) -> Report? {
        if !satelliteDetail, JSONPeek.hasClass("SKY", in: line) {
            // Counts only: the DOPs and gpsd's own satellite counts, read straight from the line. libgps
            // would parse every satellite of the list first, the largest part of what gpsd sends.
            return .sky(Self.skyCounts(in: line) ?? Self.skyCountsByKey(in: line))
        }
        return unpacker.unpack(line)
    }
}
