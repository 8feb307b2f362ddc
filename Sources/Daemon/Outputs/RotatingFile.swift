import GPSModel
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// An append-only file of lines that is set aside and started again when it grows past `maxBytes` or at UTC
/// midnight. Set-aside files are named by the time their file was started, so they sort by time and say the
/// date: `locations.jsonl` becomes `locations.2026-11-30T000000Z.jsonl`; beyond `keep` of them the oldest go.
///
/// A line is written whole or not at all: after a failed or short write the file is cut back to the end of the
/// last complete line, so a retry never leaves half a line behind. Data reaches the disk (fsync) every
/// `fsyncInterval` seconds of `now` (0: after each line) and at close. An existing file is appended to, never
/// truncated. The time is always passed in, so a test can cross midnight.
public final class RotatingFile {
    public let path: String
    public let rotation: DaemonConfiguration.Rotation
    public let fsyncInterval: Double
    /// fsyncs done, for tests and status.
    public private(set) var syncCount = 0
    /// Files set aside so far by this instance.
    public private(set) var rotationCount = 0

    /// write(2), replaceable so a test can make a write stop short.
    package var writeBytes: (Int32, UnsafeRawPointer, Int) -> Int = { Glibc.write($0, $1, $2) }

    /// Nil while no file is open.
    private var descriptor: FileDescriptor?
    /// Bytes in the open file: where the next line starts.
    private var size: Int64 = 0
    /// When the open file was started (named so when set aside) and its UTC day.
    private var started = UTCTime(seconds: 0)
    /// Lines written since the last fsync, and when that was.
    private var unsynced = false
    private var lastSync: UTCTime?

    public init(path: String, rotation: DaemonConfiguration.Rotation, fsyncInterval: Double) {
        self.path = path
        self.rotation = rotation
        self.fsyncInterval = fsyncInterval
    }

    deinit { close() }

    /// Appends one line (it should end with a newline), first setting the file aside if the line would take
    /// it past `maxBytes` or a UTC midnight has passed since it was started.
    public func append(_ line: String, now: UTCTime) throws(OutputFailure) {
        try append(bytes: Array(line.utf8), now: now)
    }

    /// `append(_:now:)` for a line already in bytes.
    public func append(bytes: [UInt8], now: UTCTime) throws(OutputFailure) {
        try openIfNeeded(now: now)
        if let maxBytes = rotation.maxBytes, size > 0, size + Int64(bytes.count) > Int64(maxBytes) {
            try rotate(now: now)
        } else if rotation.daily, size > 0, utcDay(of: now) != utcDay(of: started) {
            try rotate(now: now)
        }
        // A file is named by the time of its first line.
        if size == 0 { started = now }
        try writeWhole(bytes)
        unsynced = true
        if fsyncInterval <= 0 || lastSync.map({ now.interval(since: $0) >= fsyncInterval }) ?? true {
            try sync(now: now)
        }
    }

    /// The fsync cadence and the midnight rotation without a line to write.
    public func tick(now: UTCTime) throws(OutputFailure) {
        guard descriptor != nil else { return }
        if unsynced, lastSync.map({ now.interval(since: $0) >= fsyncInterval }) ?? true { try sync(now: now) }
        if rotation.daily, size > 0, utcDay(of: now) != utcDay(of: started) { try rotate(now: now) }
    }

    /// Syncs what was written since the last sync, now.
    public func syncWritten(now: UTCTime) throws(OutputFailure) {
        if unsynced { try sync(now: now) }
    }

    /// Syncs and closes; the next `append` opens the file again.
    public func close() {
        guard let descriptor else { return }
        if unsynced, (try? descriptor.sync()) != nil { syncCount += 1 }
        unsynced = false
        try? descriptor.close()
        self.descriptor = nil
    }

    /// The set-aside files of this path, oldest first.
    public func rotatedFiles() -> [String] {
        let (directory, stem, suffix) = nameParts()
        return directoryEntries(directory).filter { isRotatedName($0, stem: stem, suffix: suffix) }.sorted()
            .map { directory + "/" + $0 }
    }

    // MARK: - Opening, writing, rotating

    private func openIfNeeded(now: UTCTime) throws(OutputFailure) {
        guard descriptor == nil else { return }
        do { try makeDirectories(parentDirectory(of: path)) } catch { throw failure(error.code) }
        let opened: FileDescriptor
        let status: stat
        do throws(Errno) {
            opened = try FileDescriptor.open(path, .writeOnly, options: [.append, .create])
            do { status = try opened.status() } catch {
                try? opened.close()
                throw error
            }
        } catch {
            throw failure(error.rawValue)
        }
        descriptor = opened
        size = Int64(status.st_size)
        // A file left by an earlier run dates from its last write: the best the file system keeps.
        started = size > 0 ? UTCTime(seconds: Int64(status.st_mtim.tv_sec)) : now
        lastSync = now
    }

    /// Writes all of `bytes` at the end, or cuts the file back to where it was and throws.
    private func writeWhole(_ bytes: [UInt8]) throws(OutputFailure) {
        guard let descriptor else { throw failure(EBADF) }
        var offset = 0
        var code: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = retryingOnInterrupt { writeBytes(descriptor.rawValue, base + offset, buffer.count - offset) }
                if written <= 0 {
                    code = written == 0 ? EIO : errno
                    return
                }
                offset += written
            }
        }
        if code == 0 {
            size += Int64(bytes.count)
            return
        }
        // Half a line must not stay in the file: cut back, and reopen on the next try (the file may be gone).
        if offset > 0 { try? descriptor.truncate(to: size) }
        try? descriptor.close()
        self.descriptor = nil
        unsynced = false
        throw failure(code)
    }

    private func sync(now: UTCTime) throws(OutputFailure) {
        guard let descriptor else { return }
        do throws(Errno) {
            try descriptor.sync()
            syncCount += 1
        } catch {
            // Devices without fsync (a pipe, /dev/null) have nothing to sync.
            guard error.rawValue == EINVAL || error.rawValue == EROFS else { throw failure(error.rawValue) }
        }
        unsynced = false
        lastSync = now
    }

    private func rotate(now: UTCTime) throws(OutputFailure) {
        close()
        let (directory, stem, suffix) = nameParts()
        var target = directory + "/" + stem + "." + fileTimeStamp(started) + suffix
        var attempt = 1
        // Two files started in the same second (tiny maxBytes): the later one gets a sequence number.
        while access(target, F_OK) == 0 {
            attempt += 1
            target = directory + "/" + stem + "." + fileTimeStamp(started) + "-\(attempt)" + suffix
        }
        guard rename(path, target) == 0 else { throw failure(errno) }
        rotationCount += 1
        if let keep = rotation.keep {
            let rotated = rotatedFiles()
            for old in rotated.prefix(max(0, rotated.count - keep)) { _ = unlink(old) }
        }
        try openIfNeeded(now: now)
    }

    /// Directory, name before the extension, and the extension with its dot (`""` when none).
    private func nameParts() -> (String, String, String) {
        let directory = parentDirectory(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return (directory, String(name[..<dot]), String(name[dot...]))
        }
        return (directory, name, "")
    }

    private func isRotatedName(_ name: String, stem: String, suffix: String) -> Bool {
        guard name.hasPrefix(stem + "."), name.hasSuffix(suffix), name.count > stem.count + 1 + suffix.count
        else { return false }
        let middle = name.dropFirst(stem.count + 1).dropLast(suffix.count)
        // 2026-11-30T000000Z, optionally -N.
        let stamp = middle.prefix(18)
        return stamp.count == 18 && stamp.dropFirst(10).first == "T" && stamp.last == "Z"
            && stamp.allSatisfy { $0.isNumber || $0 == "-" || $0 == "T" || $0 == "Z" }
    }

    private func failure(_ code: Int32) -> OutputFailure {
        OutputFailure(path: path, reason: errnoText(code))
    }
}

/// Days since the Unix epoch of a UTC time (floored, so before 1970 works too).
func utcDay(of time: UTCTime) -> Int64 {
    time.seconds >= 0 ? time.seconds / 86_400 : (time.seconds - 86_399) / 86_400
}

/// `2026-11-30` for a UTC time.
func utcDate(of time: UTCTime) -> String {
    String(time.iso8601.prefix(10))
}

/// `2026-11-30T032200Z`: ISO 8601 basic time, safe in file names and sorting by time.
func fileTimeStamp(_ time: UTCTime) -> String {
    let text = time.iso8601
    return String(text.prefix(10)) + "T" + text.dropFirst(11).prefix(8).filter { $0 != ":" } + "Z"
}
