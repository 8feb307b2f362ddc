#if canImport(Glibc)
import Glibc
#endif
import GPSModel
import JSON
import Policy
import SystemInterface

/// `status.json` in the runtime directory: what the running service last said about itself, for
/// `lodestar status`. Rewritten whole every few seconds, by rename, so a reader never sees half a file.
public struct StatusFile: Sendable {
    public static let fileName = "status.json"

    public let path: String

    public init(runtimeDirectory: String) {
        path = DaemonConfiguration.resolve(Self.fileName, under: runtimeDirectory)
    }

    /// Replaces the file with `status`. /run is memory, gone at a power cut anyway: no fsync.
    public func write(_ status: DaemonStatus) throws(DaemonFileError) {
        try AtomicFile.replace(path, with: Self.encode(status), durable: false)
    }

    /// The status as last written. `.missing` when there is none (no service has run since boot).
    public func read() throws(DaemonFileError) -> DaemonStatus {
        try Self.decode(try AtomicFile.read(path), path: path)
    }

    public static func encode(_ status: DaemonStatus) -> [UInt8] {
        JSONWriter.bytes(value(status))
    }

    /// The file's JSON object (`lodestar status --json` prints it inside its own).
    package static func value(_ status: DaemonStatus) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("pid", .number(Double(status.pid))),
            ("started", .string(status.started.iso8601)),
            ("updated", .string(status.updated.iso8601)),
            ("updateInterval", .number(status.updateInterval)),
            ("profile", .string(status.profile)),
        ]
        if let device = status.device { members.append(("device", .string(device))) }
        if let receiver = status.receiver { members.append(("receiver", .string(receiver))) }
        members += [
            ("mechanism", .string(status.mechanism)),
            ("regime", .string(status.regime.rawValue)),
            ("regimeReason", .string(status.regimeReason)),
        ]
        if let lastFix = status.lastFix { members.append(("lastFix", .string(lastFix.iso8601))) }
        if let location = status.lastLocation { members.append(("lastLocation", LocationJSON.value(location))) }
        members += [
            ("fixesDelivered", .number(Double(status.fixesDelivered))),
            ("chargeMilliampHours", .number(status.chargeMilliampHours)),
            ("alwaysOnMilliampHours", .number(status.alwaysOnMilliampHours)),
        ]
        if let lastError = status.lastError { members.append(("lastError", .string(lastError))) }
        if let lastErrorAt = status.lastErrorAt { members.append(("lastErrorAt", .string(lastErrorAt.iso8601))) }
        if !status.errors.isEmpty { members.append(("errors", .array(status.errors.map { .string($0) }))) }
        if let store = status.store {
            members.append(("store", .string(store)))
            members.append(("storeDropped", .number(Double(status.storeDropped))))
            members.append(("storeLost", .number(Double(status.storeLost))))
        }
        if !status.outputs.isEmpty {
            members.append(
                ("outputs",
                 .array(
                    status.outputs.map { output in
                        var members: [(key: String, value: JSONValue)] = [("name", .string(output.name))]
                        if let failure = output.failure { members.append(("failure", .string(failure))) }
                        members.append(("lost", .number(Double(output.lost))))
                        return .object(members)
                    })))
        }
        if !status.uploads.isEmpty { members.append(("uploads", .array(status.uploads.map(uploadValue)))) }
        return .object(members)
    }

    private static func uploadValue(_ upload: UploadStatus) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("name", .string(upload.name)), ("destination", .string(upload.destination)),
            ("state", .string(upload.state)), ("queueDepth", .number(Double(upload.queueDepth))),
        ]
        if let lastSuccess = upload.lastSuccess { members.append(("lastSuccess", .string(lastSuccess.iso8601))) }
        if let lastError = upload.lastError { members.append(("lastError", .string(lastError))) }
        members.append(("sent", .number(Double(upload.sent))))
        members.append(("connections", .number(Double(upload.connections))))
        if let worst = upload.worstLatency { members.append(("worstLatency", .number((worst * 10).rounded() / 10))) }
        return .object(members)
    }

    /// Reads what `encode` wrote. pid, started, updated, profile, mechanism and regime are required; the rest
    /// may be missing (an older writer), and unknown keys are ignored (a newer one).
    public static func decode(_ bytes: [UInt8], path: String) throws(DaemonFileError) -> DaemonStatus {
        let fields = try JSONFields.document(bytes, path: path)
        let pidNumber = try fields.required("pid", fields.integer)
        guard let pid = Int32(exactly: pidNumber), pid > 0 else {
            throw fields.damaged("pid", "is \(pidNumber), not a process id")
        }
        var status = DaemonStatus(
            pid: pid, started: try fields.requiredTime("started"), updated: try fields.requiredTime("updated"),
            profile: try fields.requiredString("profile"), mechanism: try fields.requiredString("mechanism"),
            regime: try fields.requiredRegime("regime"), regimeReason: try fields.string("regimeReason") ?? "")
        if let interval = try fields.number("updateInterval") { status.updateInterval = interval }
        status.device = try fields.string("device")
        status.receiver = try fields.string("receiver")
        status.lastFix = try fields.time("lastFix")
        status.lastLocation = try fields.location("lastLocation")
        status.fixesDelivered = try fields.integer("fixesDelivered") ?? 0
        status.chargeMilliampHours = try fields.number("chargeMilliampHours") ?? 0
        status.alwaysOnMilliampHours = try fields.number("alwaysOnMilliampHours") ?? 0
        status.lastError = try fields.string("lastError")
        status.lastErrorAt = try fields.time("lastErrorAt")
        status.errors = try fields.array("errors") { item, key throws(DaemonFileError) in
            guard case .string(let text) = item else { throw fields.damaged(key, "is \(item.typeName), not a string") }
            return text
        }
        status.store = try fields.string("store")
        status.storeDropped = try fields.integer("storeDropped") ?? 0
        status.storeLost = try fields.integer("storeLost") ?? 0
        status.outputs = try fields.objects("outputs") { output throws(DaemonFileError) in
            OutputStatus(
                name: try output.requiredString("name"), failure: try output.string("failure"),
                lost: try output.integer("lost") ?? 0)
        }
        status.uploads = try fields.objects("uploads") { upload throws(DaemonFileError) in
            UploadStatus(
                name: try upload.requiredString("name"), destination: try upload.string("destination") ?? "",
                state: try upload.string("state") ?? "", queueDepth: try upload.integer("queueDepth") ?? 0,
                lastSuccess: try upload.time("lastSuccess"), lastError: try upload.string("lastError"),
                sent: try upload.integer("sent") ?? 0, connections: try upload.integer("connections") ?? 0,
                worstLatency: try upload.number("worstLatency"))
        }
        return status
    }
}

// MARK: - Errors and files

/// Why a file of the service (status, persisted state) could not be read or written, naming the file.
public enum DaemonFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// There is no such file.
    case missing(path: String)
    /// It exists but cannot be read (permission, a directory): the system's reason.
    case unreadable(path: String, reason: String)
    /// It is not what the service writes: not JSON, or a key of the wrong type.
    case damaged(path: String, reason: String)
    /// It could not be written (or renamed into place).
    case unwritable(path: String, reason: String)

    public var path: String {
        switch self {
        case .missing(let path), .unreadable(let path, _), .damaged(let path, _), .unwritable(let path, _): path
        }
    }

    public var description: String {
        switch self {
        case .missing(let path): "\(path) does not exist"
        case .unreadable(_, let reason): reason
        case .damaged(let path, let reason): "\(path) is damaged: \(reason)"
        case .unwritable(_, let reason): reason
        }
    }
}

/// Whole-file reads, and replacement by rename: a reader sees the old file or the new one, never a mix.
enum AtomicFile {
    static func read(_ path: String) throws(DaemonFileError) -> [UInt8] {
        do throws(SystemError) {
            return try readWholeFile(path)
        } catch {
            if error.code == ENOENT { throw .missing(path: path) }
            throw .unreadable(path: path, reason: error.description)
        }
    }

    /// Writes `bytes` to a temporary file beside `path` and renames it over `path`. `durable` also syncs the
    /// file before the rename and the directory after it, so a power cut leaves the old file or the new one.
    static func replace(_ path: String, with bytes: [UInt8], durable: Bool) throws(DaemonFileError) {
        let directory = directoryName(of: path)
        let temporary = "\(path).tmp-\(getpid())"
        let descriptor = retryingOnInterrupt {
            open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        }
        guard descriptor >= 0 else { throw .unwritable(path: path, reason: SystemError("open", temporary).description) }
        var failure: SystemError?
        let written = bytes.withUnsafeBytes { writeAll(descriptor, $0) }
        if !written {
            failure = SystemError("write", temporary)
        } else if durable && fsync(descriptor) != 0 {
            failure = SystemError("fsync", temporary)
        }
        if close(descriptor) != 0 && failure == nil { failure = SystemError("close", temporary) }
        if failure == nil && rename(temporary, path) != 0 { failure = SystemError("rename", "\(temporary) to \(path)") }
        if let failure {
            unlink(temporary)
            throw .unwritable(path: path, reason: failure.description)
        }
        if durable { try syncDirectory(directory, for: path) }
    }

    /// Removes the temporary files `replace` left beside `path` when the power went between writing one and
    /// renaming it (each is named after the process that wrote it, so none would be reused).
    static func removeLeftovers(of path: String) {
        let prefix = String(path.split(separator: "/").last ?? "") + ".tmp-"
        let directory = directoryName(of: path)
        for name in directoryEntries(directory) where name.hasPrefix(prefix) {
            guard name.dropFirst(prefix.count).allSatisfy(\.isNumber) else { continue }
            unlink(DaemonConfiguration.resolve(name, under: directory))
        }
    }

    /// Renames `path` to `aside`, out of the way of the next `replace`; says what became of it, for the log.
    static func moveAside(_ path: String, to aside: String) -> String {
        rename(path, aside) == 0 ? "moved to \(aside)" : "left in place (\(SystemError("rename", "to \(aside)")))"
    }

    /// Makes a rename in `directory` survive a power cut.
    static func syncDirectory(_ directory: String, for path: String) throws(DaemonFileError) {
        let descriptor = retryingOnInterrupt { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw .unwritable(path: path, reason: SystemError("open", directory).description) }
        defer { close(descriptor) }
        if fsync(descriptor) != 0 { throw .unwritable(path: path, reason: SystemError("fsync", directory).description) }
    }

    static func directoryName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

// MARK: - JSON

/// The members of a file's top-level JSON object, read by key with errors that name the file and the key.
struct JSONFields {
    let members: [(key: String, value: JSONValue)]
    let path: String
    /// The key path of this object inside the file ("" at the top, "lastLocation." below).
    let prefix: String

    static func document(_ bytes: [UInt8], path: String) throws(DaemonFileError) -> JSONFields {
        let value: JSONValue
        do throws(JSONSyntaxError) {
            value = try JSONParser.parse(bytes)
        } catch {
            throw .damaged(path: path, reason: "line \(error.line), column \(error.column): \(error.message)")
        }
        guard case .object(let members) = value else {
            throw .damaged(path: path, reason: "\(value.typeName), not a JSON object")
        }
        return JSONFields(members: members, path: path, prefix: "")
    }

    func value(_ key: String) -> JSONValue? {
        guard let value = members.first(where: { $0.key == key })?.value else { return nil }
        if case .null = value { return nil }
        return value
    }

    func damaged(_ key: String, _ problem: String) -> DaemonFileError {
        .damaged(path: path, reason: "\"\(prefix)\(key)\" \(problem)")
    }

    func string(_ key: String) throws(DaemonFileError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw damaged(key, "is \(value.typeName), not a string") }
        return text
    }

    func number(_ key: String) throws(DaemonFileError) -> Double? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value else { throw damaged(key, "is \(value.typeName), not a number") }
        return number
    }

    func integer(_ key: String) throws(DaemonFileError) -> Int? {
        guard let number = try number(key) else { return nil }
        guard let integer = Int(exactly: number) else { throw damaged(key, "is \(number), not a whole number") }
        return integer
    }

    func time(_ key: String) throws(DaemonFileError) -> UTCTime? {
        guard let text = try string(key) else { return nil }
        guard let time = UTCTime(iso8601: text.utf8) else {
            throw damaged(key, "is \"\(text)\", not a UTC time like 2026-11-30T03:22:00.000Z")
        }
        return time
    }

    /// The elements of the array at `key` (none when it is missing or null), each read by `element` with the
    /// key its errors name (`errors[2]`).
    func array<Element>(
        _ key: String, _ element: (_ item: JSONValue, _ key: String) throws(DaemonFileError) -> Element
    ) throws(DaemonFileError) -> [Element] {
        guard let value = value(key) else { return [] }
        guard case .array(let items) = value else { throw damaged(key, "is \(value.typeName), not an array") }
        var elements: [Element] = []
        for (index, item) in items.enumerated() { elements.append(try element(item, "\(key)[\(index)]")) }
        return elements
    }

    /// The objects of the array at `key` (none when it is missing or null), each read by `element` as fields
    /// whose errors name it (`outputs[0].name`).
    func objects<Element>(
        _ key: String, _ element: (JSONFields) throws(DaemonFileError) -> Element
    ) throws(DaemonFileError) -> [Element] {
        try array(key) { item, itemKey throws(DaemonFileError) in
            guard case .object(let members) = item else { throw damaged(itemKey, "is \(item.typeName), not an object") }
            return try element(JSONFields(members: members, path: path, prefix: prefix + itemKey + "."))
        }
    }

    /// A string that must be the raw value of one of `allowed`.
    func choice<Value: RawRepresentable<String>>(_ key: String, of allowed: [Value]) throws(DaemonFileError) -> Value? {
        guard let text = try string(key) else { return nil }
        guard let value = Value(rawValue: text) else {
            throw damaged(key, "is \"\(text)\", not one of \(allowed.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    func regime(_ key: String) throws(DaemonFileError) -> ReceiverRegime? {
        try choice(key, of: ReceiverRegime.allCases)
    }

    func object(_ key: String) throws(DaemonFileError) -> JSONFields? {
        guard let value = value(key) else { return nil }
        guard case .object(let members) = value else { throw damaged(key, "is \(value.typeName), not an object") }
        return JSONFields(members: members, path: path, prefix: prefix + key + ".")
    }

    func location(_ key: String) throws(DaemonFileError) -> Location? {
        guard let fields = try object(key) else { return nil }
        return try LocationJSON.location(fields)
    }

    func required<T>(_ key: String, _ read: (String) throws(DaemonFileError) -> T?) throws(DaemonFileError) -> T {
        guard let value = try read(key) else { throw damaged(key, "is missing") }
        return value
    }

    func requiredString(_ key: String) throws(DaemonFileError) -> String { try required(key, string) }
    func requiredTime(_ key: String) throws(DaemonFileError) -> UTCTime { try required(key, time) }
    func requiredRegime(_ key: String) throws(DaemonFileError) -> ReceiverRegime { try required(key, regime) }
}

/// A `Location` as the service's files keep it: the jsonl key names of docs/cli.md, every member, timestamps in
/// milliseconds (as gpsd gives them).
enum LocationJSON {
    static func value(_ location: Location) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("timestamp", .string(location.timestamp.iso8601)),
            ("latitude", .number(location.latitude)),
            ("longitude", .number(location.longitude)),
        ]
        func add(_ key: String, _ number: Double?) {
            if let number, number.isFinite { members.append((key, .number(number))) }
        }
        // The outputs' precision (`Precision`): status shows these figures.
        add("altitude", Precision.altitude(location.altitude))
        add("horizontalAccuracy", Precision.accuracy(location.horizontalAccuracy))
        if let source = location.horizontalAccuracySource {
            members.append(("horizontalAccuracySource", .string(source.rawValue)))
        }
        add("verticalAccuracy", Precision.accuracy(location.verticalAccuracy))
        add("speed", Precision.speed(location.speed))
        add("speedAccuracy", Precision.accuracy(location.speedAccuracy))
        add("course", Precision.course(location.course))
        add("courseAccuracy", Precision.accuracy(location.courseAccuracy))
        members.append(("fixMode", .string(location.fixMode.name)))
        add("satellitesUsed", location.satellitesUsed.map(Double.init))
        add("hdop", Precision.dop(location.hdop))
        if let device = location.device { members.append(("device", .string(device))) }
        members.append(("origin", .string(location.origin.rawValue)))
        return .object(members)
    }

    /// timestamp, latitude and longitude are required.
    static func location(_ fields: JSONFields) throws(DaemonFileError) -> Location {
        let latitude = try fields.required("latitude", fields.number)
        let longitude = try fields.required("longitude", fields.number)
        guard (-90...90).contains(latitude) else { throw fields.damaged("latitude", "is \(latitude), not a latitude") }
        guard (-180...180).contains(longitude) else {
            throw fields.damaged("longitude", "is \(longitude), not a longitude")
        }
        var location = Location(
            timestamp: try fields.requiredTime("timestamp"), latitude: latitude, longitude: longitude,
            fixMode: .threeD)
        location.altitude = try fields.number("altitude")
        location.horizontalAccuracy = try fields.number("horizontalAccuracy")
        location.horizontalAccuracySource = try fields.choice(
            "horizontalAccuracySource", of: [AccuracySource.gst, .receiver, .gpsdEstimate])
        location.verticalAccuracy = try fields.number("verticalAccuracy")
        location.speed = try fields.number("speed")
        location.speedAccuracy = try fields.number("speedAccuracy")
        location.course = try fields.number("course")
        location.courseAccuracy = try fields.number("courseAccuracy")
        switch try fields.string("fixMode") {
        case nil, "3d": location.fixMode = .threeD
        case "2d": location.fixMode = .twoD
        case "none": location.fixMode = .noFix
        case let other?: throw fields.damaged("fixMode", "is \"\(other)\", not 2d, 3d or none")
        }
        location.satellitesUsed = try fields.integer("satellitesUsed")
        location.hdop = try fields.number("hdop")
        location.device = try fields.string("device")
        location.origin = try fields.choice("origin", of: [LocationOrigin.live, .replay]) ?? .live
        return location
    }
}

// MARK: - Text

/// How the service's figures read in `lodestar status`, log lines and systemd's STATUS=.
public enum StatusText {
    /// `12 s ago`, `3 min ago`, `2 h 5 min ago`, `3 d 4 h ago`; `just now` within a second either way; a time
    /// ahead of the host's clock (a receiver dated in the future, a clock set back) is said as it is:
    /// `9 min in the future`, never "just now".
    public static func ago(_ seconds: Double) -> String {
        if seconds <= -1 { return duration(-seconds) + " in the future" }
        return seconds < 1 ? "just now" : duration(seconds) + " ago"
    }

    /// `12 s`, `3 min`, `2 h 5 min`, `3 d 4 h`: whole units, the two largest that matter.
    public static func duration(_ seconds: Double) -> String {
        // A receiver's time can be anything (a fix dated year 9999, NaN from a broken clock): clamped before the
        // Int conversion, which would trap beyond Int64.
        let total = seconds.isNaN ? 0 : Int(min(max(0, seconds), 1e15).rounded(.down))
        let (days, hours, minutes) = (total / 86_400, total % 86_400 / 3600, total % 3600 / 60)
        if days > 0 { return hours > 0 ? "\(days) d \(hours) h" : "\(days) d" }
        if hours > 0 { return minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h" }
        if minutes > 0 { return "\(minutes) min" }
        return "\(total) s"
    }

    /// `value` with `decimals` digits after the point: `0.42`, `1.70`.
    public static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        // Beyond what Int64 holds (a ratio to a tiny current from a file): as Swift prints it, not a trap.
        guard scaled.isFinite, scaled < 9e15 else { return "\(value)" }
        let whole = (scaled / scale).rounded(.down)
        let fraction = Int64(scaled - whole * scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(Int64(whole))
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: max(0, decimals - digits.count)) + digits
        }
        return text
    }
}

extension UTCTime {
    /// The wall clock now (CLOCK_REALTIME), to the millisecond the files keep.
    public static func now() -> UTCTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UTCTime(seconds: Int64(now.tv_sec), nanoseconds: Int32(now.tv_nsec / 1_000_000 * 1_000_000))
    }
}
