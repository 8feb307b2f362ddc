import JSON

#if canImport(Glibc)
    import Glibc
#endif

// The values a key of `lodestar run`'s config may take: the number ranges and string kinds
// DaemonConfigurationSchema.swift gives its keys, each saying what is allowed in a problem and in docs/config.md.

/// The ranges numbers must be in, said in the problems and in docs/config.md.
enum ConfigurationRanges {
    static let port = NumberRange(1...65_535, integer: true)
    static let gpioLine = NumberRange(0...4_095, integer: true)
    static let motionDebounce = NumberRange(0...3_600, unit: "seconds")
    static let accelerationThreshold = NumberRange(0.01...100, unit: "m/s²")
    static let sampleInterval = NumberRange(0.01...60, unit: "seconds")
    static let maxBytes = NumberRange(4_096...1_099_511_627_776, unit: "bytes", integer: true)
    static let keep = NumberRange(1...100_000, unit: "files", integer: true)
    static let fsyncInterval = NumberRange(0...3_600, unit: "seconds")
    static let keepDays = NumberRange(1...36_500, unit: "days", integer: true)
    static let noFixInterval = NumberRange(1...86_400, unit: "seconds")
    static let updateInterval = NumberRange(0.5...3_600, unit: "seconds")
    static let storeBytes = NumberRange(65_536...1_099_511_627_776, unit: "bytes", integer: true)
    static let maxAgeDays = NumberRange(1...36_500, unit: "days", integer: true)
    static let syncInterval = NumberRange(0...3_600, unit: "seconds")
    static let maxBatchAge = NumberRange(0...604_800, unit: "seconds")
    static let backoff = NumberRange(1...86_400, unit: "seconds")
    static let uploadTimeout = NumberRange(1...600, unit: "seconds")
    /// `sun_path` holds 108 bytes with the terminating zero.
    static let socketPathBytes = 107
}

/// The numbers a key takes, and how a problem and docs/config.md say them.
struct NumberRange {
    var range: ClosedRange<Double>
    /// "seconds", "days": how the allowed values are said; nil for a plain count.
    var unit: String?
    var integer: Bool

    init(_ range: ClosedRange<Double>, unit: String? = nil, integer: Bool = false) {
        self.range = range
        self.unit = unit
        self.integer = integer
    }

    /// "1 to 65535", "a whole number of days from 1 to 36500".
    var allowed: String {
        let span = "\(JSONWriter.numberText(range.lowerBound)) to \(JSONWriter.numberText(range.upperBound))"
        switch (integer, unit) {
        case (true, let unit?): return "a whole number of \(unit) from \(span)"
        case (true, nil): return "a whole number from \(span)"
        case (false, let unit?): return "\(span) \(unit)"
        case (false, nil): return span
        }
    }

    func contains(_ value: Double) -> Bool { problem(with: value) == nil }

    /// "out of range" or "not a whole number" (Policy's check, as for a profile's numbers), nil for a value in
    /// the range.
    func problem(with value: Double) -> String? { range.problem(with: value, whole: integer) }
}

/// What a string must look like.
enum TextKind {
    case name, path, absolutePath, host, chip, group, topicLevel, trackerID, url, text

    /// The longest text of this kind, in UTF-8 bytes: a DNS name's 253, PATH_MAX for paths, and 1024 for
    /// the rest, so a 10 MB value is refused rather than carried into every log line and status file.
    var maximumLength: Int {
        switch self {
        case .host: 253
        case .path, .absolutePath, .name, .chip: 4096
        case .url: 2048
        case .group: 32
        case .topicLevel, .trackerID, .text: 1024
        }
    }

    /// Why `text` is not one, nil when it is.
    func problem(_ text: String) -> String? {
        if text.isEmpty { return "is empty (allowed: \(allowed))" }
        if text.utf8.count > maximumLength {
            return "is \(text.utf8.count) bytes long, more than \(maximumLength) (allowed: \(allowed))"
        }
        if text.contains("\0") { return "contains a NUL character (allowed: \(allowed))" }
        switch self {
        case .name, .path, .text:
            return nil
        case .absolutePath:
            return text.hasPrefix("/") ? nil : "'\(text)' is not an absolute path (allowed: \(allowed))"
        case .host:
            return Self.isHost(text) ? nil : "'\(text)' is not a host name (allowed: \(allowed))"
        case .chip:
            return text.hasPrefix("/") || (text.hasPrefix("gpiochip") && Int(text.dropFirst(8)) != nil)
                ? nil : "'\(text)' is not a GPIO chip (allowed: \(allowed))"
        case .group:
            let fits = text.count <= 32 && !text.hasPrefix("-")
                && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
            return fits ? nil : "'\(text)' is not a group name (allowed: \(allowed))"
        case .topicLevel:
            return text.contains(where: { "/+#".contains($0) })
                ? "'\(text)' cannot be an MQTT topic level (allowed: \(allowed))" : nil
        case .trackerID:
            return text.count <= 2 ? nil : "'\(text)' is longer than two characters (allowed: \(allowed))"
        case .url:
            let lower = text.lowercased()
            return (lower.hasPrefix("http://") || lower.hasPrefix("https://")) && !text.contains(where: \.isWhitespace)
                ? nil : "'\(text)' is not an http:// or https:// URL (allowed: \(allowed))"
        }
    }

    /// A DNS name (letters, digits, '-', '_', '.'), an IPv4 address, or an IPv6 address without brackets
    /// (hex digits, ':' and '.', an optional %zone): what getaddrinfo takes for gpsd or a broker.
    static func isHost(_ text: String) -> Bool {
        if text.contains(":") {
            // An IPv6 address as inet_pton reads it, after an optional %zone (an interface name).
            let pieces = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
            if pieces.count == 2, pieces[1].isEmpty || !pieces[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                return false
            }
            var address = in6_addr()
            return inet_pton(AF_INET6, String(pieces[0]), &address) == 1
        }
        return !text.hasPrefix("-") && !text.hasPrefix(".")
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }

    var allowed: String {
        switch self {
        case .name: "a profile's name or file"
        case .path: "a file path; a relative one is under its directory"
        case .absolutePath: "a path that starts with '/'"
        case .host: "a host name or address, at most 253 characters; an IPv6 address without brackets"
        case .chip: "gpiochipN, or a path such as /dev/gpiochip0"
        case .group: "a group name (letters, digits, '-', '_', '.'), or null"
        case .topicLevel: "a name without '/', '+' or '#'"
        case .trackerID: "one or two characters"
        case .url: "an http:// or https:// URL, such as http://traccar.example:5055"
        case .text: "text, not empty"
        }
    }
}

/// Optional sections (outputs, the store, uploaders) start from their defaults when an object or `true` turns
/// them on.
protocol DefaultSection { init() }
extension DaemonConfiguration.JSONLOutput: DefaultSection {}
extension DaemonConfiguration.GPXOutput: DefaultSection {}
extension DaemonConfiguration.StdoutOutput: DefaultSection {}
extension DaemonConfiguration.SocketOutput: DefaultSection {}
extension DaemonConfiguration.CaptureOutput: DefaultSection {}
extension DaemonConfiguration.StoreSettings: DefaultSection {}
extension DaemonConfiguration.OwnTracksUpload: DefaultSection {}
extension DaemonConfiguration.TraccarUpload: DefaultSection {}

extension Optional where Wrapped: DefaultSection {
    /// The section, or its defaults when it is off: what the schema's key paths into a section read and write.
    /// The reader turns a section on before reading its keys, and the writer reads them only when it is on.
    var orDefault: Wrapped {
        get { self ?? Wrapped() }
        set { self = newValue }
    }
}
