import SystemInterface
import Capture
import GPSD
import GPSModel
import Policy
import Receivers
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Records a live gpsd session into a capture file: every line gpsd sends, verbatim, and with `--raw` the
/// receiver's own bytes from a second watch, each stamped with `t` on the monotonic clock. With power control,
/// also every byte sent to the receiver (`tx`), the regimes chosen and the power events seen. Safe to call
/// from any thread: gpsd's reader, the raw watch and a `LocationManager`'s runtime record into one recorder.
///
/// The file is created when gpsd's first line arrives (so a gpsd that is not there leaves no empty file),
/// and its header is written once gpsd has said its version and devices (they come before the WATCH echo).
///
/// With `Options.rotation` the capture at `path` is closed and renamed with the UTC time it started
/// (`run-20261130T210311.000Z.capture` for `run.capture`) when it would grow past `maxBytes` or a UTC day
/// ends, and a new one started at `path`. Each file is a capture of its own: a header, gpsd's VERSION,
/// DEVICES and WATCH lines and the regime in force again at its `t` = 0, so it replays alone.
public final class CaptureRecorder: Sendable {
    public struct Options: Sendable {
        public var path: String
        public var replacing = false
        public var host: String?
        public var device: String?
        public var note: String?
        public var syncInterval = 5.0
        /// nil: one file that grows for as long as the recording runs.
        public var rotation: Rotation?

        public init(path: String) {
            self.path = path
        }
    }

    /// When the capture at `path` is closed and a new one started, and how many closed ones are kept.
    public struct Rotation: Sendable, Equatable {
        /// Bytes a file may reach; nil: no limit by size. A line longer than this still gets a file.
        public var maxBytes: Int?
        /// A new file at each UTC midnight.
        public var daily: Bool
        /// Closed files kept (the oldest go first); nil keeps them all.
        public var keep: Int?

        public init(maxBytes: Int? = nil, daily: Bool = true, keep: Int? = nil) {
            self.maxBytes = maxBytes
            self.daily = daily
            self.keep = keep
        }
    }

    public struct Summary: Sendable, Equatable {
        public var gpsdLines = 0
        public var fixes = 0
        public var receivedChunks = 0
        public var receivedBytes = 0
        public var transmittedChunks = 0
        public var transmittedBytes = 0
        public var powerEvents = 0
        public var seconds = 0.0
        /// Files closed and renamed by rotation.
        public var rotations = 0
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case create(SystemError)
        /// Also closing, renaming or removing a rotated file (the error names the call).
        case write(SystemError)

        public var description: String {
            switch self {
            case .create(let error), .write(let error): return error.description
            }
        }
    }

    /// A line waiting for its file: encoded only when written, since its `t` counts from its file's start.
    private enum Line {
        case gpsd(t: Double, object: [UInt8])
        case record(t: Double, CaptureRecord)

        var t: Double {
            switch self {
            case .gpsd(let t, _), .record(let t, _): t
            }
        }

        func encoded(from origin: Double) -> [UInt8] {
            switch self {
            case .gpsd(let t, let object): CaptureLineEncoder.gpsd(t: t - origin, object: object)
            case .record(let t, let record): CaptureLineEncoder.record(t: t - origin, record)
            }
        }
    }

    private struct State {
        var writer: CaptureFileWriter?
        var headerWritten = false
        var held: [Line] = []
        var gpsdRelease: String?
        var devicePath: String?
        var deviceDriver: String?
        /// The last `t` stamped: lines stamped with a time the caller gives never go back before it.
        var lastT = 0.0
        var summary = Summary()
        var failure: Failure?
        /// After `finish`, nothing more is recorded (a reader thread may still be ending).
        var finished = false
        /// The current file's `t` = 0, on the recording's own `t`.
        var fileOrigin = 0.0
        /// gpsd's lines that set a session up, and the regime in force: each rotated file starts with them.
        var version: [UInt8]?
        var devices: [UInt8]?
        var watch: [UInt8]?
        var regime: CaptureRecord?
    }

    public let options: Options
    private let start: Double
    private let startedWallClock: UTCTime
    private let state: Mutex<State>

    /// Lines held for the header: gpsd sends VERSION, DEVICES and the WATCH echo within its first reply;
    /// more than this means the echo never came, and the header goes out with what is known.
    static let headerLineLimit = 16

    public convenience init(options: Options) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        self.init(
            options: options,
            startedWallClock: UTCTime(seconds: Int64(now.tv_sec), nanoseconds: Int32(now.tv_nsec / 1_000_000 * 1_000_000)))
    }

    /// A recorder whose `t` = 0 is `startedWallClock` (whole milliseconds): tests start one just before midnight.
    package init(options: Options, startedWallClock: UTCTime) {
        self.options = options
        start = monotonicSeconds()
        self.startedWallClock = startedWallClock
        state = Mutex(State(devicePath: options.device))
    }

    /// A failure that ended the recording (nothing is written after it).
    public var failure: Failure? { state.withLock { $0.failure } }

    /// Whether the capture file exists now (created, and not failed since).
    public var hasFile: Bool { state.withLock { $0.writer != nil && $0.failure == nil } }

    public var summary: Summary {
        state.withLock { state in
            var summary = state.summary
            summary.seconds = monotonicSeconds() - start
            return summary
        }
    }

    /// Records one line gpsd sent (without its line end).
    public func recordGPSDLine(_ line: UnsafeBufferPointer<CChar>) {
        let isTPVWithPosition =
            JSONPeek.hasClass("TPV", in: line) && (JSONPeek.integerValue(of: "mode", in: line) ?? 0) >= 2
        let isWatch = JSONPeek.hasClass("WATCH", in: line)
        let isVersion = JSONPeek.hasClass("VERSION", in: line)
        let isDevices = JSONPeek.hasClass("DEVICES", in: line)
        let release = isVersion ? JSONPeek.stringValue(of: "release", in: line) : nil
        var devicePath: String?
        var deviceDriver: String?
        if isDevices || JSONPeek.hasClass("DEVICE", in: line) {
            devicePath = JSONPeek.stringValue(of: "path", in: line)
            deviceDriver = JSONPeek.stringValue(of: "driver", in: line)
        }
        let object = Array(UnsafeRawBufferPointer(line))
        state.withLock { state in
            guard state.failure == nil, !state.finished else { return }
            // Stamped under the lock, so the two watches' lines are in the file in `t` order.
            let t = stamp(monotonicSeconds(), in: &state)
            state.summary.gpsdLines += 1
            if isTPVWithPosition { state.summary.fixes += 1 }
            if let release { state.gpsdRelease = release }
            if state.devicePath == nil, let devicePath { state.devicePath = devicePath }
            if state.deviceDriver == nil, let deviceDriver { state.deviceDriver = deviceDriver }
            if isVersion { state.version = object }
            if isDevices { state.devices = object }
            if isWatch { state.watch = object }
            emit(.gpsd(t: t, object: object), in: &state)
            if !state.headerWritten, isWatch || state.held.count >= Self.headerLineLimit { writeHeader(in: &state) }
        }
    }

    /// Records bytes the receiver sent (a raw watch's output, gpsd's JSON already removed).
    public func recordReceived(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        state.withLock { state in
            guard state.failure == nil, !state.finished else { return }
            let t = stamp(monotonicSeconds(), in: &state)
            state.summary.receivedChunks += 1
            state.summary.receivedBytes += bytes.count
            emit(.record(t: t, .received(bytes)), in: &state)
        }
    }

    /// Records bytes sent to the receiver (a power command), `at` a reading of `monotonicSeconds()` when
    /// they were sent. Every write to the receiver goes through here, so a capture shows all it was told.
    public func recordTransmitted(_ bytes: [UInt8], at monotonic: Double = monotonicSeconds()) {
        guard !bytes.isEmpty else { return }
        state.withLock { state in
            guard state.failure == nil, !state.finished else { return }
            let t = stamp(monotonic, in: &state)
            state.summary.transmittedChunks += 1
            state.summary.transmittedBytes += bytes.count
            emit(.record(t: t, .transmitted(bytes)), in: &state)
        }
    }

    /// Records the regime the policy chose, and why, `at` a reading of `monotonicSeconds()`.
    public func recordRegime(_ regime: ReceiverRegime, reason: String?, at monotonic: Double = monotonicSeconds()) {
        state.withLock { state in
            guard state.failure == nil, !state.finished else { return }
            let t = stamp(monotonic, in: &state)
            let record = CaptureRecord.regime(regime.rawValue, reason: reason)
            // After the line: a file this line starts opens with the regime in force before it.
            emit(.record(t: t, record), in: &state)
            state.regime = record
        }
    }

    /// Records what power control saw (quiet, first fix after a wake, no effect…) as an `event` line, `at` a
    /// reading of `monotonicSeconds()` when it was seen.
    public func recordPowerEvent(_ event: PowerEvent, at monotonic: Double = monotonicSeconds()) {
        state.withLock { state in
            guard state.failure == nil, !state.finished else { return }
            let t = stamp(monotonic, in: &state)
            state.summary.powerEvents += 1
            emit(.record(t: t, .event(event.captureEvent)), in: &state)
        }
    }

    /// `fsync`s if it is time; the record loop calls this while gpsd is quiet.
    public func syncIfDue() {
        state.withLock { state in
            guard state.failure == nil, !state.finished, let writer = state.writer else { return }
            do throws(SystemError) {
                try writer.syncIfDue(now: monotonicSeconds())
            } catch {
                state.failure = .write(error)
            }
        }
    }

    /// Writes what is held, `fsync`s and closes; later records are ignored. The failure that ended the
    /// recording, if any.
    public func finish() -> Failure? {
        state.withLock { state in
            guard !state.finished else { return state.failure }
            if state.failure == nil, !state.headerWritten, !state.held.isEmpty { writeHeader(in: &state) }
            state.finished = true
            if let writer = state.writer {
                do throws(SystemError) {
                    try writer.close()
                } catch {
                    if state.failure == nil { state.failure = .write(error) }
                }
            }
            return state.failure
        }
    }

    /// `t` for a line seen at `monotonic`: never before the last line's, as a capture's `t` never decreases
    /// (an event the caller stamped a moment ago may reach the lock after a later gpsd line).
    private func stamp(_ monotonic: Double, in state: inout State) -> Double {
        state.lastT = max(state.lastT, monotonic - start)
        return state.lastT
    }

    private func emit(_ line: Line, in state: inout State) {
        guard state.headerWritten else {
            state.held.append(line)
            return
        }
        write(line, in: &state)
    }

    private func header(at origin: Double, in state: State) -> [UInt8] {
        CaptureLineEncoder.header(
            CaptureHeader(
                started: wallClock(at: origin), host: options.host, gpsd: state.gpsdRelease,
                devicePath: state.devicePath, deviceDriver: state.deviceDriver, source: "live",
                notes: options.note.map { [$0] } ?? []))
    }

    private func writeHeader(in state: inout State) {
        state.headerWritten = true
        let held = state.held
        state.held = []
        // The first file starts at the recording's start; it is never rotated before its header is out.
        write(header(at: 0, in: state), in: &state)
        for line in held { write(line, in: &state) }
    }

    /// The wall clock at the recording's `t`.
    private func wallClock(at t: Double) -> UTCTime {
        let milliseconds = Int64((t * 1000).rounded(.down))
        let total = Int64(startedWallClock.nanoseconds / 1_000_000) + milliseconds
        return UTCTime(
            seconds: startedWallClock.seconds + total / 1000, nanoseconds: Int32(total % 1000) * 1_000_000)
    }

    private func write(_ line: Line, in state: inout State) {
        if let rotation = options.rotation, state.writer != nil, isDue(rotation, before: line, in: state) {
            rotate(at: line.t, in: &state)
        }
        write(line.encoded(from: state.fileOrigin), in: &state)
    }

    /// Whether `line` belongs in a new file: it would take the current one past `maxBytes`, or it is on a
    /// later UTC day than the file's start.
    private func isDue(_ rotation: Rotation, before line: Line, in state: State) -> Bool {
        if rotation.daily, wallClock(at: line.t).seconds / 86_400 > wallClock(at: state.fileOrigin).seconds / 86_400 {
            return true
        }
        guard let maxBytes = rotation.maxBytes, let written = state.writer?.bytesWritten else { return false }
        // A generous bound of the line's size: the check must not encode every line twice.
        let size: Int
        switch line {
        case .gpsd(_, let object): size = object.count + 32
        case .record(_, let record): size = CaptureLineEncoder.record(t: 0, record).count + 16
        }
        return written + size > maxBytes
    }

    /// Closes the current file, renames it with its start time, prunes the oldest, and starts a new one at
    /// `path` whose `t` = 0 is `origin`, with the session's set-up lines again.
    private func rotate(at origin: Double, in state: inout State) {
        guard let writer = state.writer else { return }
        state.writer = nil
        do throws(SystemError) {
            try writer.close()
            try moveAside(options.path, started: wallClock(at: state.fileOrigin))
            try prune()
        } catch {
            state.failure = .write(error)
            return
        }
        state.summary.rotations += 1
        state.fileOrigin = origin
        write(header(at: origin, in: state), in: &state)
        for object in [state.version, state.devices, state.watch].compactMap({ $0 }) {
            write(Line.gpsd(t: origin, object: object).encoded(from: origin), in: &state)
        }
        if let regime = state.regime { write(Line.record(t: origin, regime).encoded(from: origin), in: &state) }
    }

    private func write(_ line: [UInt8], in state: inout State) {
        guard state.failure == nil else { return }
        if state.writer == nil {
            do throws(SystemError) {
                if options.rotation != nil, !options.replacing, access(options.path, F_OK) == 0 {
                    // A capture left by an earlier run is kept as a rotated file, not refused or overwritten.
                    try moveAside(options.path, started: wallClock(at: state.fileOrigin))
                    try prune()
                }
                state.writer = try CaptureFileWriter(
                    path: options.path, replacing: options.replacing, syncInterval: options.syncInterval)
            } catch {
                state.failure = .create(error)
                return
            }
        }
        do throws(SystemError) {
            try state.writer?.write(line)
        } catch {
            state.failure = .write(error)
        }
    }

    // MARK: Rotated files

    /// `run.capture` as `run-20261130T210311.000Z.capture` (names sort in time order); a millisecond later
    /// when that name is taken.
    private func moveAside(_ path: String, started: UTCTime) throws(SystemError) {
        let (stem, suffix) = Self.split(path)
        var time = started
        for _ in 0..<1000 {
            let target = stem + "-" + Self.compactStamp(time) + suffix
            if access(target, F_OK) != 0 {
                guard rename(path, target) == 0 else { throw SystemError("rename", path) }
                return
            }
            time = UTCTime(
                seconds: time.seconds + Int64((time.nanoseconds + 1_000_000) / 1_000_000_000),
                nanoseconds: (time.nanoseconds + 1_000_000) % 1_000_000_000)
        }
        throw SystemError("rename", path, code: EEXIST)
    }

    /// Removes the oldest rotated files beyond `keep`.
    private func prune() throws(SystemError) {
        guard let keep = options.rotation?.keep else { return }
        let files = Self.rotatedFiles(of: options.path)
        for path in files.dropLast(max(keep, 0)) where unlink(path) != 0 && errno != ENOENT {
            throw SystemError("unlink", path)
        }
    }

    /// The rotated files of the capture at `path`, oldest first.
    public static func rotatedFiles(of path: String) -> [String] {
        let (stem, suffix) = split(path)
        let slash = stem.lastIndex(of: "/")
        let directory = slash.map { String(stem[..<$0]) } ?? "."
        let prefix = (slash.map { String(stem[stem.index(after: $0)...]) } ?? stem) + "-"
        return directoryEntries(directory.isEmpty ? "/" : directory)
            .filter { name in
                guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else {
                    return false
                }
                let stamp = name.dropFirst(prefix.count).dropLast(suffix.count)
                return stamp.count == 20 && stamp.hasSuffix("Z") && stamp.first?.isNumber == true
            }
            .sorted()
            .map { (directory.isEmpty ? "" : directory + "/") + $0 }
    }

    /// `captures/run.capture` → (`captures/run`, `.capture`); no extension → (`path`, ``).
    private static func split(_ path: String) -> (stem: String, suffix: String) {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (path, "") }
        let suffix = String(name[dot...])
        return (String(path.dropLast(suffix.count)), suffix)
    }

    /// `20261130T210311.000Z`.
    private static func compactStamp(_ time: UTCTime) -> String {
        time.iso8601.filter { $0 != "-" && $0 != ":" }
    }
}

/// The receiver's own bytes through a second gpsd connection (`"raw":2`), on its own thread, reconnecting
/// as the JSON source does. gpsd sends a client only what the receiver says after the client's watch, so
/// after gpsd restarts the raw watch must be back as soon as the JSON one: the JSON source's `onConnected`
/// signals `reconnectNow`, which ends the raw watch's back-off at once. Without it the two back-offs ran
/// apart and the raw stream resumed up to two seconds after the reports, its capture then replaying through
/// gpsd to fewer fixes than were reported live.
public enum RawByteWatch {
    /// Starts the reader thread; it runs until `shouldStop` and calls `onBytes` with receiver bytes only.
    public static func start(
        host: String, port: String, device: String?, reconnectNow: ReconnectSignal? = nil,
        shouldStop: @escaping @Sendable () -> Bool,
        onBytes: @escaping @Sendable ([UInt8]) -> Void, onFinish: @escaping @Sendable () -> Void
    ) -> Bool {
        DetachedThread.start {
            // Attempts since bytes last came: a peer that accepts but is not gpsd is tried with the back-off
            // too, not in a tight loop.
            var failures = 0
            while !shouldStop() {
                let signalled = reconnectNow?.count ?? 0
                var received = false
                if let session = try? GPSDSession(host: host, port: port),
                    (try? session.watchRawBytes(device: device)) != nil
                {
                    var filter = RawStreamFilter()
                    while !shouldStop() {
                        // Bytes come only after gpsd's banner (`readBytes` throws for a peer that is not gpsd).
                        guard let chunk = try? session.readBytes(timeoutMicroseconds: 200_000) else { break }
                        if !chunk.isEmpty { received = true }
                        let bytes = filter.receiverBytes(chunk)
                        if !bytes.isEmpty { onBytes(bytes) }
                    }
                    session.close()
                }
                if received {
                    // Lost after working: straight back, as the JSON source is.
                    failures = 0
                    continue
                }
                let delay = ReconnectBackoff.standard.delay(afterFailures: failures)
                failures += 1
                let until = monotonicSeconds() + delay
                while !shouldStop(), reconnectNow?.count ?? 0 == signalled {
                    let left = until - monotonicSeconds()
                    if left <= 0 { break }
                    if let reconnectNow { reconnectNow.wait(seconds: min(left, 0.2)) } else { sleepSeconds(min(left, 0.05)) }
                }
            }
            onFinish()
        }
    }
}

/// "Connect again now", from the thread that just connected to gpsd to the raw watch's thread waiting out
/// its back-off: a count, so a signal given while the raw watch was connected is not mistaken for a new one.
public final class ReconnectSignal: Sendable {
    private let signals = Atomic<Int>(0)
    private let wakeUp = WakeUpPipe()

    public init() {}

    /// How many signals so far.
    var count: Int { signals.load(ordering: .acquiring) }

    public func signal() {
        signals.add(1, ordering: .releasing)
        wakeUp.signal()
    }

    /// Waits until a signal or `seconds` pass (may return early).
    func wait(seconds: Double) {
        wakeUp.wait(seconds: seconds)
    }
}

/// A power event as a capture's `event` line and back (docs/capture-format.md): the capture format keeps
/// kinds and regimes as text, so it needs no knowledge of receivers.
extension PowerEvent {
    public var captureEvent: CaptureEvent {
        CaptureEvent(kind: kind.rawValue, regime: regime?.rawValue, seconds: seconds, detail: detail)
    }

    /// The power event an `event` line records; nil when its kind is not a power event's (a policy event, or
    /// a kind from a newer Lodestar). A regime this build does not know is left out.
    public init?(_ event: CaptureEvent) {
        guard let kind = Kind(rawValue: event.kind) else { return nil }
        self.init(
            kind, regime: event.regime.flatMap(ReceiverRegime.init(rawValue:)), seconds: event.seconds,
            detail: event.detail ?? "")
    }
}
