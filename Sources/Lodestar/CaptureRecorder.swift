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
/// also every byte sent to the receiver (`tx`), the regimes chosen and the power events seen.
///
/// The file is created when gpsd's first line arrives (so a gpsd that is not there leaves no empty file),
/// and its header is written once gpsd has said its version and devices (they come before the WATCH echo).
public final class CaptureRecorder: Sendable {
    public struct Options: Sendable {
        public var path: String
        public var replacing = false
        public var host: String?
        public var device: String?
        public var note: String?
        public var syncInterval = 5.0

        public init(path: String) {
            self.path = path
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
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case create(SystemError)
        case write(SystemError)

        public var description: String {
            switch self {
            case .create(let error), .write(let error): return error.description
            }
        }
    }

    private struct State {
        var writer: CaptureFileWriter?
        var headerWritten = false
        var held: [[UInt8]] = []
        var gpsdRelease: String?
        var devicePath: String?
        var deviceDriver: String?
        /// The last `t` stamped: lines stamped with a time the caller gives never go back before it.
        var lastT = 0.0
        var summary = Summary()
        var failure: Failure?
    }

    public let options: Options
    private let start: Double
    private let startedWallClock: UTCTime
    private let state: Mutex<State>

    /// Lines held for the header: gpsd sends VERSION, DEVICES and the WATCH echo within its first reply;
    /// more than this means the echo never came, and the header goes out with what is known.
    static let headerLineLimit = 16

    public init(options: Options) {
        self.options = options
        start = monotonicSeconds()
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        startedWallClock = UTCTime(seconds: Int64(now.tv_sec), nanoseconds: Int32(now.tv_nsec / 1_000_000 * 1_000_000))
        state = Mutex(State(devicePath: options.device))
    }

    /// A failure that ended the recording (nothing is written after it).
    public var failure: Failure? { state.withLock { $0.failure } }

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
        let release = JSONPeek.hasClass("VERSION", in: line) ? JSONPeek.stringValue(of: "release", in: line) : nil
        var devicePath: String?
        var deviceDriver: String?
        if JSONPeek.hasClass("DEVICES", in: line) || JSONPeek.hasClass("DEVICE", in: line) {
            devicePath = JSONPeek.stringValue(of: "path", in: line)
            deviceDriver = JSONPeek.stringValue(of: "driver", in: line)
        }
        let object = UnsafeRawBufferPointer(line)
        state.withLock { state in
            guard state.failure == nil else { return }
            // Stamped under the lock, so the two watches' lines are in the file in `t` order.
            let t = stamp(monotonicSeconds(), in: &state)
            state.summary.gpsdLines += 1
            if isTPVWithPosition { state.summary.fixes += 1 }
            if let release { state.gpsdRelease = release }
            if state.devicePath == nil, let devicePath { state.devicePath = devicePath }
            if state.deviceDriver == nil, let deviceDriver { state.deviceDriver = deviceDriver }
            emit(CaptureLineEncoder.gpsd(t: t, object: object), in: &state)
            if !state.headerWritten, isWatch || state.held.count >= Self.headerLineLimit { writeHeader(in: &state) }
        }
    }

    /// Records bytes the receiver sent (a raw watch's output, gpsd's JSON already removed).
    public func recordReceived(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        state.withLock { state in
            guard state.failure == nil else { return }
            let t = stamp(monotonicSeconds(), in: &state)
            state.summary.receivedChunks += 1
            state.summary.receivedBytes += bytes.count
            emit(CaptureLineEncoder.record(t: t, .received(bytes)), in: &state)
        }
    }

    /// Records bytes sent to the receiver (a power command), `at` a reading of `monotonicSeconds()` when
    /// they were sent. Every write to the receiver goes through here, so a capture shows all it was told.
    public func recordTransmitted(_ bytes: [UInt8], at monotonic: Double = monotonicSeconds()) {
        guard !bytes.isEmpty else { return }
        state.withLock { state in
            guard state.failure == nil else { return }
            let t = stamp(monotonic, in: &state)
            state.summary.transmittedChunks += 1
            state.summary.transmittedBytes += bytes.count
            emit(CaptureLineEncoder.record(t: t, .transmitted(bytes)), in: &state)
        }
    }

    /// Records the regime the policy chose, and why, `at` a reading of `monotonicSeconds()`.
    public func recordRegime(_ regime: ReceiverRegime, reason: String?, at monotonic: Double = monotonicSeconds()) {
        state.withLock { state in
            guard state.failure == nil else { return }
            let t = stamp(monotonic, in: &state)
            emit(CaptureLineEncoder.record(t: t, .regime(regime.rawValue, reason: reason)), in: &state)
        }
    }

    /// Records what power control saw (quiet, first fix after a wake, no effect…) as an `event` line, `at` a
    /// reading of `monotonicSeconds()` when it was seen.
    public func recordPowerEvent(_ event: PowerEvent, at monotonic: Double = monotonicSeconds()) {
        state.withLock { state in
            guard state.failure == nil else { return }
            let t = stamp(monotonic, in: &state)
            state.summary.powerEvents += 1
            emit(CaptureLineEncoder.record(t: t, .event(event.captureEvent)), in: &state)
        }
    }

    /// `fsync`s if it is time; the record loop calls this while gpsd is quiet.
    public func syncIfDue() {
        state.withLock { state in
            guard state.failure == nil, let writer = state.writer else { return }
            do throws(SystemError) {
                try writer.syncIfDue(now: monotonicSeconds())
            } catch {
                state.failure = .write(error)
            }
        }
    }

    /// Writes what is held, `fsync`s and closes. The failure that ended the recording, if any.
    public func finish() -> Failure? {
        state.withLock { state in
            if state.failure == nil, !state.headerWritten, !state.held.isEmpty { writeHeader(in: &state) }
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

    private func emit(_ line: [UInt8], in state: inout State) {
        guard state.headerWritten else {
            state.held.append(line)
            return
        }
        write(line, in: &state)
    }

    private func writeHeader(in state: inout State) {
        let header = CaptureHeader(
            started: startedWallClock, host: options.host, gpsd: state.gpsdRelease, devicePath: state.devicePath,
            deviceDriver: state.deviceDriver, source: "live", notes: options.note.map { [$0] } ?? [])
        state.headerWritten = true
        let held = state.held
        state.held = []
        write(CaptureLineEncoder.header(header), in: &state)
        for line in held { write(line, in: &state) }
    }

    private func write(_ line: [UInt8], in state: inout State) {
        guard state.failure == nil else { return }
        if state.writer == nil {
            do throws(SystemError) {
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
}

/// The receiver's own bytes through a second gpsd connection (`"raw":2`), on its own thread, reconnecting
/// as the JSON source does.
public enum RawByteWatch {
    /// Starts the reader thread; it runs until `shouldStop` and calls `onBytes` with receiver bytes only.
    public static func start(
        host: String, port: String, device: String?, shouldStop: @escaping @Sendable () -> Bool,
        onBytes: @escaping @Sendable ([UInt8]) -> Void, onFinish: @escaping @Sendable () -> Void
    ) -> Bool {
        DetachedThread.start {
            var failures = 0
            while !shouldStop() {
                guard let session = try? GPSDSession(host: host, port: port),
                    (try? session.watchRawBytes(device: device)) != nil
                else {
                    failures += 1
                    let delay = ReconnectBackoff.standard.delay(afterFailures: failures)
                    var waited = 0.0
                    while waited < delay, !shouldStop() {
                        sleepSeconds(0.05)
                        waited += 0.05
                    }
                    continue
                }
                failures = 0
                var filter = RawStreamFilter()
                while !shouldStop() {
                    guard let chunk = try? session.readBytes(timeoutMicroseconds: 200_000) else { break }
                    let bytes = filter.receiverBytes(chunk)
                    if !bytes.isEmpty { onBytes(bytes) }
                }
                session.close()
            }
            onFinish()
        }
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
