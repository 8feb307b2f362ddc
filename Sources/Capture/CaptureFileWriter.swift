import SystemInterface
import GPSD
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Appends capture lines to a file so that a power cut loses at most the line being written: one `write(2)`
/// per complete line (no user-space buffer), `fsync` every `syncInterval` seconds and on close. Safe to use
/// from two threads (the JSON and the raw byte watch of `record`).
public final class CaptureFileWriter: Sendable {
    public let path: String
    /// How much a power cut may lose from the page cache: seconds between `fsync`s. Each `fsync` costs an SD
    /// card write; once every few seconds is what gpsd's own loggers and `gpspipe -o` users accept.
    public let syncInterval: Double

    private struct State {
        /// Nil once closed.
        var descriptor: FileDescriptor?
        var lastSync: Double
        var bytesWritten = 0
        var unsynced = false
        /// Set by the first failed write: nothing more is written after it.
        var failure: SystemError?
    }

    private let state: Mutex<State>

    /// Creates `path`. Without `replacing`, an existing file is an error (EEXIST) and is left untouched.
    public init(path: String, replacing: Bool, syncInterval: Double = 5) throws(SystemError) {
        self.path = path
        self.syncInterval = syncInterval
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(
                path, .writeOnly, options: [.create, .append, replacing ? .truncate : .exclusiveCreate])
        } catch {
            throw SystemError("create", path, code: error.rawValue)
        }
        state = Mutex(State(descriptor: descriptor, lastSync: monotonicSeconds()))
    }

    deinit {
        _ = try? close()
    }

    /// Writes one line (bytes ending in a newline). After a failure every later call throws that failure:
    /// the file keeps every line written before it, and at most one torn line at its end.
    public func write(_ line: [UInt8]) throws(SystemError) {
        let result: SystemError? = state.withLock { state in
            if let failure = state.failure { return failure }
            guard let descriptor = state.descriptor else { return SystemError("write", path, code: EBADF) }
            do throws(Errno) {
                try descriptor.writeAll(line)
            } catch {
                // ENOSPC, EFBIG, EIO…: the file keeps what came before.
                let failure = SystemError("write", path, code: error.rawValue)
                state.failure = failure
                return failure
            }
            state.bytesWritten += line.count
            state.unsynced = true
            return nil
        }
        if let result { throw result }
        try syncIfDue(now: monotonicSeconds())
    }

    /// `fsync`s when the interval has passed since the last one and something was written; the record loop
    /// calls this while gpsd is quiet too, so the last lines do not wait for the next fix.
    public func syncIfDue(now: Double) throws(SystemError) {
        let result: SystemError? = state.withLock { state in
            guard state.failure == nil, state.unsynced, let descriptor = state.descriptor,
                now - state.lastSync >= syncInterval
            else { return nil }
            state.lastSync = now
            state.unsynced = false
            state.failure = syncFailure(descriptor)
            return state.failure
        }
        if let result { throw result }
    }

    public var bytesWritten: Int { state.withLock { $0.bytesWritten } }

    /// `fsync`s and closes; throws when either fails (data may not be on the disk).
    public func close() throws(SystemError) {
        let result: SystemError? = state.withLock { state in
            guard let descriptor = state.descriptor else { return nil }
            state.descriptor = nil
            var failure = syncFailure(descriptor)
            do throws(Errno) { try descriptor.close() } catch {
                failure = failure ?? SystemError("close", path, code: error.rawValue)
            }
            return failure
        }
        if let result { throw result }
    }

    /// `fsync`'s failure; a file that cannot be synced (a pipe, /dev/null: EINVAL) has nothing to sync.
    private func syncFailure(_ descriptor: FileDescriptor) -> SystemError? {
        do { try descriptor.sync() } catch {
            if error != Errno(rawValue: EINVAL) { return SystemError("fsync", path, code: error.rawValue) }
        }
        return nil
    }
}
