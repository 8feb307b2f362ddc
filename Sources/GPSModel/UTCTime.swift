/// A receiver UTC instant: whole seconds since the Unix epoch plus nanoseconds, as gpsd's `timespec`.
///
/// Kept as integers (not a `Double`) so timestamps compare exactly: gpsd sends several reports per epoch
/// and the driver collapses them by equal time.
public struct UTCTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var seconds: Int64
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The earliest time a receiver can give: the start of GPS time, 1980-01-06T00:00:00Z.
    public static let earliestReceiverTime = UTCTime(seconds: 315_964_800)
    /// The end of the range a receiver time is taken in: 2100-01-01T00:00:00Z (a bad date after a cold start
    /// or a week-number rollover can be decades off, but not past this).
    public static let latestReceiverTime = UTCTime(seconds: 4_102_444_800)

    /// A receiver's time, or nil when it is not a real time: absent (gpsd's all-zero `timespec`), out of
    /// range (libgps gives 1899-12-31 for a `time` it cannot parse, negative seconds for others), or with
    /// nanoseconds outside a second. Every decoder makes fix times through this (docs/contract.md §1).
    public init?(receiverSeconds seconds: Int64, nanoseconds: Int64) {
        guard (0..<1_000_000_000).contains(nanoseconds) else { return nil }
        let time = UTCTime(seconds: seconds, nanoseconds: Int32(nanoseconds))
        guard time >= UTCTime.earliestReceiverTime, time < UTCTime.latestReceiverTime else { return nil }
        self = time
    }

    /// Whether this is in the range a receiver's time is taken in (`init(receiverSeconds:nanoseconds:)`).
    public var isReceiverTime: Bool {
        UTCTime(receiverSeconds: seconds, nanoseconds: Int64(nanoseconds)) != nil
    }

    public static func < (lhs: UTCTime, rhs: UTCTime) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// `self` plus `seconds` (to the nanosecond).
    public func adding(seconds: Double) -> UTCTime {
        // A receiver's or a file's offset can be anything: beyond ±1e15 s (30 million years) it saturates
        // there instead of trapping in the Int64 conversion; NaN adds nothing.
        let total = Double(nanoseconds) / 1e9 + (seconds.isNaN ? 0 : min(max(seconds, -1e15), 1e15))
        let whole = total.rounded(.down)
        let nanos = Int32(min(max(((total - whole) * 1e9).rounded(), 0), 999_999_999))
        return UTCTime(seconds: self.seconds + Int64(whole), nanoseconds: nanos)
    }

    /// Seconds from `other` to `self`.
    public func interval(since other: UTCTime) -> Double {
        Double(seconds - other.seconds) + Double(nanoseconds - other.nanoseconds) / 1e9
    }

    /// ISO 8601 in UTC with milliseconds, the form gpsd itself writes: `2026-11-30T03:22:00.000Z`.
    public var iso8601: String {
        // Built as bytes: it is formatted once per printed fix.
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        appendISO8601(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `iso8601`'s bytes appended to `bytes`, for an output that builds its line as bytes (no String between).
    public func appendISO8601(to bytes: inout [UInt8]) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = UTCTime.civilDate(daysSinceEpoch: days)
        let milliseconds = Int(nanoseconds / 1_000_000)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = max(0, value)
            if rest / divisor >= 10 {
                bytes.append(contentsOf: String(rest).utf8)
                return
            }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(year, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 3600 / 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        bytes.append(UInt8(ascii: "."))
        digits(milliseconds, 3)
        bytes.append(UInt8(ascii: "Z"))
    }

    public var description: String { iso8601 }

    /// Parses the ISO 8601 UTC form gpsd writes (`2026-11-30T03:22:00.000Z`, any number of fraction digits,
    /// or none). Nil for anything else.
    public init?<Bytes: Collection>(iso8601 text: Bytes) where Bytes.Element == UInt8 {
        let bytes = Array(text)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z"), bytes[4] == UInt8(ascii: "-"),
            bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var nanoseconds: Int64 = 0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
            var scale: Int64 = 100_000_000
            for byte in bytes[20..<(bytes.count - 1)] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                nanoseconds += Int64(byte - 0x30) * scale
                scale /= 10
            }
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        let days = UTCTime.daysSinceEpoch(year: year, month: month, day: day)
        self.init(seconds: days * 86_400 + hour * 3600 + minute * 60 + second, nanoseconds: Int32(nanoseconds))
    }

    /// Howard Hinnant's days-from-civil algorithm, the inverse of `civilDate`.
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Howard Hinnant's days-to-civil algorithm: proleptic Gregorian, exact for every Int64 day count we meet.
    static func civilDate(daysSinceEpoch: Int64) -> (year: Int, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
