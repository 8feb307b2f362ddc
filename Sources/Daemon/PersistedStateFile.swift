import GPSModel
import JSON
import Policy
import SystemInterface

/// `state.json` in the state directory: what survives a restart. Saved durably (file and directory synced)
/// because a Pi on a battery loses power without warning; loading never fails the service.
public struct PersistedStateFile: Sendable {
    public static let fileName = "state.json"

    public let path: String

    public init(stateDirectory: String) {
        path = DaemonConfiguration.resolve(Self.fileName, under: stateDirectory)
    }

    /// What `load` found: the state to start from, and a sentence for the log when it is not the saved one.
    public struct Loaded: Sendable, Equatable {
        public var state: PersistedState
        /// Nil when the saved state was read, or there was none (a first start).
        public var message: String?
    }

    /// The saved state. Missing: a fresh state. Damaged: moved aside to `state.json.damaged-<UTC time>` (kept
    /// for a look, out of the way of the next save) and a fresh state. Unreadable: a fresh state, and the next
    /// save replaces the file. Temporary files a power cut left from a save are removed.
    public func load(now: UTCTime = .now()) -> Loaded {
        AtomicFile.removeLeftovers(of: path)
        do throws(DaemonFileError) {
            return Loaded(state: try Self.decode(try AtomicFile.read(path), path: path), message: nil)
        } catch .missing {
            return Loaded(state: PersistedState(), message: nil)
        } catch .damaged(_, let reason) {
            let moved = AtomicFile.moveAside(path, to: "\(path).damaged-\(Self.fileNameStamp(now))")
            return Loaded(
                state: PersistedState(),
                message: "the saved state \(path) is damaged (\(reason)): \(moved); starting from a fresh state")
        } catch {
            return Loaded(
                state: PersistedState(),
                message: "the saved state cannot be read (\(error)); starting from a fresh state")
        }
    }

    /// Replaces the file with `state`. `durable` syncs it, so that a power cut leaves the old state or the new
    /// one; without it the new state survives the process being killed, not a power cut.
    public func save(_ state: PersistedState, durable: Bool = true) throws(DaemonFileError) {
        try AtomicFile.replace(path, with: Self.encode(state), durable: durable)
    }

    public static func encode(_ state: PersistedState) -> [UInt8] {
        var members: [(key: String, value: JSONValue)] = []
        if let location = state.lastLocation { members.append(("lastLocation", LocationJSON.value(location))) }
        if let regime = state.regime { members.append(("regime", .string(regime.rawValue))) }
        if let lastNavigating = state.lastNavigating {
            members.append(("lastNavigating", .string(lastNavigating.iso8601)))
        }
        members += [
            ("fixesDelivered", .number(Double(state.fixesDelivered))),
            ("chargeMilliampHours", .number(state.chargeMilliampHours)),
            ("alwaysOnMilliampHours", .number(state.alwaysOnMilliampHours)),
            ("runs", .number(Double(state.runs))),
        ]
        return Array(JSONWriter.text(.object(members)).utf8)
    }

    /// Every key may be missing (its default); a key of the wrong type makes the file damaged.
    public static func decode(_ bytes: [UInt8], path: String) throws(DaemonFileError) -> PersistedState {
        let fields = try JSONFields.document(bytes, path: path)
        func count(_ key: String) throws(DaemonFileError) -> Int {
            let value = try fields.integer(key) ?? 0
            guard value >= 0 else { throw fields.damaged(key, "is \(value), below 0") }
            return value
        }
        func charge(_ key: String) throws(DaemonFileError) -> Double {
            let value = try fields.number(key) ?? 0
            guard value >= 0 else { throw fields.damaged(key, "is \(value), below 0") }
            return value
        }
        return PersistedState(
            lastLocation: try fields.location("lastLocation"), regime: try fields.regime("regime"),
            lastNavigating: try fields.time("lastNavigating"), fixesDelivered: try count("fixesDelivered"),
            chargeMilliampHours: try charge("chargeMilliampHours"),
            alwaysOnMilliampHours: try charge("alwaysOnMilliampHours"), runs: try count("runs"))
    }

    /// `20261130T223700Z`: sorts by time, and has no ':' (which some tools take for a host name).
    static func fileNameStamp(_ time: UTCTime) -> String {
        let text = time.iso8601
        return String(text.prefix(19).filter { $0 != "-" && $0 != ":" }) + "Z"
    }
}
